/**
 * examples/06-peering: two operators of the example in one namespace with a KopfPeering: with the
 * same priority both pause and warn; the one restarted with `--dev` handles objects while the
 * other stays paused, and the other resumes when the dev one exits.
 */

import assert from "node:assert/strict";
import { createExample, freshNamespace, testCluster, waitForStatus } from "../support/cluster.ts";
import { eventually } from "../support/eventually.ts";
import { linesWith } from "../support/examples.ts";
import { KopfProcess } from "../support/kopf_process.ts";
import { createPeering } from "../support/peering.ts";

/** Starts the example as its README does (not standalone), with a fixed identity for the peering records. */
function operator(namespace: string, identity: string, extra: string[] = []): Promise<KopfProcess> {
  return KopfProcess.command(
    ["run", "--verbose", "-n", namespace, ...extra, "examples/06-peering/example.ts"],
    { POD_ID: identity },
  );
}

/** Whether an operator has handled the object (its handler's success line). */
function handledBy(process: KopfProcess, name: string): boolean {
  return process.lines.some((line) => line.includes(`/${name}] Handler 'createFn' succeeded.`));
}

Deno.test("examples/06-peering: equal priorities pause both with a warning; --dev takes over; the other resumes after it", async () => {
  const { client } = await testCluster();
  const namespace = await freshNamespace(client, "ex06");
  await createPeering(namespace, { name: "default" });

  await using a = await operator(namespace, "shell-a");
  await a.waitForLine(/Keep-alive in .*: ok\./);
  const b = await operator(namespace, "shell-b");
  try {
    for (const peer of [a, b]) {
      await peer.waitForLine(/Possibly conflicting operators with the same priority/);
      await peer.waitForLine(/Pausing all operators, including self/);
    }
  } finally {
    await b.stop();
  }
  await a.waitForLine(/Resuming operations/);

  await using dev = await operator(namespace, "shell-b-dev", ["--dev"]);
  await a.waitForLine(/Pausing operations in favour of \[.*shell-b-dev.*\]/);
  await createExample(client, namespace, "peered");
  assert.deepEqual(await waitForStatus(namespace, "peered", "createFn"), { handled: true });
  assert.ok(handledBy(dev, "peered"), dev.output);
  assert.ok(!handledBy(a, "peered"), a.output);
  assert.equal((await dev.stop()).code, 0, dev.output);
  // Its second resumption: the first was when the same-priority peer had left.
  await eventually("the second resumption", () => linesWith(a, "Resuming operations").length === 2 || undefined);
});
