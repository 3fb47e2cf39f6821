/**
 * examples/13-hooks: the retried startup handler fails 3 times, then the login handler runs,
 * and only then does the operator start watching; the probes report a background task per pod (through
 * `--liveness`); a deleted pod's task stops; on SIGTERM the cleanup handler stops the rest.
 */

import assert from "node:assert/strict";
import { freshNamespace, testCluster } from "../support/cluster.ts";
import { eventually } from "../support/eventually.ts";
import { linesWith, runExample } from "../support/examples.ts";
import { createPod, deletePod } from "../support/pods.ts";

/** A port that was free a moment ago. */
function freePort(): number {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = listener.addr.port;
  listener.close();
  return port;
}

Deno.test("examples/13-hooks: retried startup, login, probes of the pods' tasks, cleanup that stops them", async () => {
  const { client } = await testCluster();
  const namespace = await freshNamespace(client, "ex13");
  const url = `http://127.0.0.1:${freePort()}/healthz`;
  await using operator = await runExample("13-hooks", namespace, ["--liveness", url]);
  await operator.waitForLine(/Activity 'startupFnRetried' succeeded\./);
  await createPod(namespace, "pod-a");
  await createPod(namespace, "pod-b");

  const probes = await eventually("both pods in the probes", async () => {
    const body = await (await fetch(url)).json();
    return body.tasksCount === 2 ? body : undefined;
  });
  assert.deepEqual(probes, { tasksCount: 2, monitoredObjects: { [namespace]: ["pod-a", "pod-b"] } });
  await operator.waitForLine(/\/pod-a\] Served by the background task\./);
  await deletePod(namespace, "pod-b");
  await operator.waitForLine(/\/pod-b\] Serving is finished by request\./);

  assert.equal((await operator.stop()).code, 0, operator.output);
  const order = ["Initialising the task registry...", "Starting retried...", "Logging in with the kubeconfig..."];
  const positions = order.map((text) => operator.lines.findIndex((line) => line.includes(text)));
  assert.ok(positions.every((at, i) => at >= 0 && (i === 0 || at > positions[i - 1])), operator.output);
  assert.equal(linesWith(operator, "Activity 'startupFnRetried' failed temporarily: Going to succeed in").length, 3);
  const cleanup = operator.lines.findIndex((line) => line.includes("All pod tasks are requested to stop."));
  const finished = operator.lines.findIndex((line) => line.includes("/pod-a] Serving is finished by request."));
  assert.ok(cleanup >= 0 && finished > cleanup, operator.output);
});
