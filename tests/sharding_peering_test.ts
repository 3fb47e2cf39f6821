/**
 * Sharding with peering: the members of a shard group share one peering identity, so they never
 * pause each other for having the same priority, and `kopf freeze` pauses the whole group until
 * `kopf resume`.
 */

import assert from "node:assert/strict";
import { createExample, freshNamespace, getExample, testCluster } from "./support/cluster.ts";
import { KopfProcess, runKopf } from "./support/kopf_process.ts";
import { createPeering, peeringStatus } from "./support/peering.ts";
import { eventually } from "./support/eventually.ts";

const handledBy = async (namespace: string, name: string) => {
  const { client } = await testCluster();
  const body = await getExample(client, namespace, name);
  return (body.status as { created?: { replica: string } } | undefined)?.created?.replica;
};

Deno.test("the members of a shard group do not pause each other; kopf freeze pauses them all, kopf resume resumes", async () => {
  const { client, kubeconfig } = await testCluster();
  const namespace = await freshNamespace(client, "shard-peering");
  const peering = await createPeering(namespace);
  const start = (id: string) =>
    KopfProcess.command(
      [
        "run",
        "--debug",
        "-n",
        namespace,
        "-P",
        peering,
        "--shard-group",
        "peers",
        "--shard-id",
        id,
        "tests/fixtures/sharded_handlers.ts",
      ],
      { KOPF_TEST_REPLICA: id, KOPF_TEST_SHARD_LEASE: "5" },
    );
  await using first = await start("p1");
  await using second = await start("p2");
  try {
    for (const replica of [first, second]) {
      await replica.waitForLine(/Shard ranges of peers changed.*\(2 members\)/, 120);
    }

    // Objects in both members' ranges are handled: nobody paused.
    const names = Array.from({ length: 10 }, (_, i) => `before-${i}`);
    for (const name of names) await createExample(client, namespace, name);
    const before = await Promise.all(
      names.map((name) => eventually(`${name} handled`, () => handledBy(namespace, name))),
    );
    assert.deepEqual(new Set(before), new Set(["p1", "p2"]), "both members handle objects");
    const status = await peeringStatus(namespace, peering);
    assert.deepEqual(Object.keys(status), ["shard:peers"], "one record for the group");
    for (const replica of [first, second]) assert.ok(!replica.output.includes("Pausing"), replica.output);

    const frozen = await runKopf(["freeze", "-n", namespace, "-P", peering, "-t", "120", "-i", "ops"], {
      KUBECONFIG: kubeconfig,
    });
    assert.equal(frozen.code, 0, frozen.stderr);
    // Paused once each member's stream has stopped after the pause began (earlier stops were reassignments).
    for (const replica of [first, second]) {
      await eventually("the pause and the stop of the stream after it", () => {
        const paused = replica.lines.findIndex((line) => /Pausing operations in favour of/.test(line));
        const stopped = replica.lines.slice(paused + 1).some((line) =>
          /Stream kopfexamples\S* in \S+ has stopped/.test(line)
        );
        return paused >= 0 && stopped || undefined;
      });
    }
    const during = Array.from({ length: 10 }, (_, i) => `during-${i}`);
    for (const name of during) await createExample(client, namespace, name);

    const resumed = await runKopf(["resume", "-n", namespace, "-P", peering, "-i", "ops"], { KUBECONFIG: kubeconfig });
    assert.equal(resumed.code, 0, resumed.stderr);
    for (const replica of [first, second]) await replica.waitForLine(/Resuming operations after the pause/);
    const after = await Promise.all(
      during.map((name) => eventually(`${name} handled`, () => handledBy(namespace, name))),
    );
    // Created while frozen, handled only after the resume: no creation line before the resume line.
    for (const replica of [first, second]) {
      const resumedAt = replica.lines.findIndex((line) => /Resuming operations after the pause/.test(line));
      const early = replica.lines.slice(0, resumedAt).filter((line) => /created during-/.test(line));
      assert.deepEqual(early, [], "nothing was handled while frozen");
    }
    assert.equal(after.length, during.length);
  } catch (error) {
    // What the members printed explains a failure (they are gone once the test ends).
    console.error(`p1:\n${first.output}\np2:\n${second.output}`);
    throw error;
  }
});
