/**
 * examples/16-indexing: the indexes over pods feed the probes (`--liveness`) and the timer of a
 * kopfexample, and follow the pods as they are deleted (the probes' results are reused for 10 s,
 * so the timer's status shows the change). LocalCluster runs no pods:
 * all stay Pending, so none is in the running list.
 */

import assert from "node:assert/strict";
import { freshNamespace, testCluster, waitForStatus } from "../support/cluster.ts";
import { applyObjYaml, OBJ_NAME, runExample } from "../support/examples.ts";
import { createPod, deletePod } from "../support/pods.ts";

/** A port that was free a moment ago. */
function freePort(): number {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = listener.addr.port;
  listener.close();
  return port;
}

Deno.test("examples/16-indexing: probes and the kopfexample's status summarise the pods from the indexes", async () => {
  const { client } = await testCluster();
  const namespace = await freshNamespace(client, "ex16");
  const url = `http://127.0.0.1:${freePort()}/healthz`;
  await createPod(namespace, "web-1", { labels: { app: "web" } });
  await createPod(namespace, "web-2", { labels: { app: "web", tier: "front" } });
  await createPod(namespace, "db-1", { labels: { app: "db" } });
  await using operator = await runExample("16-indexing", namespace, ["--liveness", url]);
  await applyObjYaml(namespace);

  const pods = await waitForStatus(namespace, OBJ_NAME, "pods");
  assert.deepEqual(pods, { seen: 3, running: [], apps: { db: ["db-1"], web: ["web-1", "web-2"] } });
  assert.deepEqual(await (await fetch(url)).json(), { podCount: 3, podNames: ["db-1", "web-1", "web-2"] });

  await deletePod(namespace, "web-1");
  await waitForStatus(namespace, OBJ_NAME, "pods", (value) => (value as { seen: number }).seen === 2);
  assert.deepEqual(await waitForStatus(namespace, OBJ_NAME, "pods"), {
    seen: 2,
    running: [],
    apps: { db: ["db-1"], web: ["web-2"] },
  });
  assert.equal((await operator.stop()).code, 0, operator.output);
});
