/**
 * The idle collection in `kopf run` against a real API server (the process started as users start
 * it, without `--expose-gc`): one collection after the start (its garbage), a collection after a
 * burst of objects once the queues are quiet, none more while idle, more after new work — counted by
 * `kopf_idle_collections_total`, which grows only when V8's collector has actually run. In a shard
 * group that filters client-side, the other member's events alone lead to a collection too. Those
 * run with `idleCollectionGrowth` 0 (after any work: a few objects grow the memory by less than its
 * default); with the default, an object handled after the start is followed by none.
 */

import assert from "node:assert/strict";
import type { KubernetesObject } from "../src/model/body.ts";
import { resourcePath } from "../src/api/paths.ts";
import { createExample, freshNamespace, KOPFEXAMPLES, settle, testCluster, waitForStatus } from "./support/cluster.ts";
import { freePort } from "./support/environment.ts";
import { eventually } from "./support/eventually.ts";
import { parseExposition, total } from "./support/exposition_parser.ts";
import { KopfProcess } from "./support/kopf_process.ts";

/** Seconds of quiet before a collection: well above the gap between a handler's patch and its echo. */
const DELAY = 2;

async function collections(url: string): Promise<number> {
  const response = await fetch(url);
  return total(parseExposition(await response.text()), "kopf_idle_collections_total");
}

async function handle(namespace: string, names: string[]): Promise<void> {
  const { client } = await testCluster();
  await Promise.all(names.map((name) => createExample(client, namespace, name)));
  for (const name of names) await waitForStatus(namespace, name, "created");
}

Deno.test("kopf run collects garbage once after its start and after each burst, when the queues are quiet, and not while idle", async () => {
  const { client } = await testCluster();
  const namespace = await freshNamespace(client, "idle-gc");
  const url = `http://127.0.0.1:${freePort()}/metrics`;
  await using operator = await KopfProcess.start(
    namespace,
    ["--metrics", url, "tests/fixtures/idle_collection_handlers.ts"],
    { KOPF_TEST_IDLE_COLLECTION: String(DELAY), KOPF_TEST_IDLE_COLLECTION_GROWTH: "0" },
  );
  await operator.waitForLine(/Serving metrics at/);
  await eventually("a collection after the start", async () => await collections(url) >= 1 || undefined);
  await settle(DELAY * 3);
  assert.equal(await collections(url), 1, "the start's garbage once, then nothing while idle");

  // Counts after the work and its echoes are over (a loaded machine may split a burst in two: that is
  // two quiet periods, two collections — the unit tests count one per quiet period exactly).
  await handle(namespace, ["a", "b", "c", "d", "e"]);
  await eventually("a collection after the burst", async () => await collections(url) >= 2 || undefined);
  await settle(DELAY * 1.5);
  const afterBurst = await collections(url);
  // The window over which "nothing more while idle" is claimed: several quiet periods.
  await settle(DELAY * 3);
  assert.equal(await collections(url), afterBurst, `nothing more while idle\n${operator.output}`);

  await handle(namespace, ["f", "g"]);
  await eventually("a collection after the new work", async () => await collections(url) > afterBurst || undefined);
  await settle(DELAY * 1.5);
  const afterWork = await collections(url);
  await settle(DELAY * 3);
  assert.equal(await collections(url), afterWork, `nothing more while idle again\n${operator.output}`);
  assert.ok(!operator.lines.some((line) => line.includes("Idle garbage collection is off")), operator.output);
});

Deno.test("with the default growth, an object handled after the start is not followed by a collection", async () => {
  const { client } = await testCluster();
  const namespace = await freshNamespace(client, "idle-gc-growth");
  const url = `http://127.0.0.1:${freePort()}/metrics`;
  await using operator = await KopfProcess.start(
    namespace,
    ["--debug", "--metrics", url, "tests/fixtures/idle_collection_handlers.ts"],
    { KOPF_TEST_IDLE_COLLECTION: String(DELAY) },
  );
  await operator.waitForLine(/Serving metrics at/);
  await eventually("a collection after the start", async () => await collections(url) >= 1 || undefined);
  await settle(DELAY * 1.5);
  const started = await collections(url);
  await handle(namespace, ["a"]);
  await operator.waitForLine(
    /No collection: the resident memory is .* MiB above what the last one left, below 4\./,
  );
  await settle(DELAY * 3);
  assert.equal(await collections(url), started, `an object's work: too little to give back\n${operator.output}`);
});

Deno.test("a shard member that filters client-side collects after a burst of the other member's events alone", async () => {
  const { client } = await testCluster();
  const namespace = await freshNamespace(client, "idle-gc-shards");
  const members = await Promise.all(["a", "b"].map(async (id) => {
    const url = `http://127.0.0.1:${freePort()}/metrics`;
    const process = await KopfProcess.start(
      namespace,
      ["--shard-group", "gc", "--shard-id", id, "--metrics", url, "tests/fixtures/idle_collection_handlers.ts"],
      { KOPF_TEST_IDLE_COLLECTION: String(DELAY), KOPF_TEST_IDLE_COLLECTION_GROWTH: "0", KOPF_TEST_REPLICA: id },
    );
    return { id, url, process };
  }));
  try {
    const [a] = members;
    for (const member of members) {
      await eventually(`${member.id} sees both members`, async () => {
        const response = await fetch(member.url).catch(() => undefined);
        return response && /^kopf_shard_members\{group="gc"\} 2$/m.test(await response.text()) || undefined;
      });
    }
    // The start's collection first: work arriving within its quiet period would make one collection of both.
    await eventually("a collection in a after its start", async () => await collections(a.url) >= 1 || undefined);
    const started = await collections(a.url);
    // The test cluster's API server does not filter by shard (the feature gate is off): each member receives all.
    const names = Array.from({ length: 400 }, (_, i) => `o-${i}`);
    for (let i = 0; i < names.length; i += 40) {
      await Promise.all(names.slice(i, i + 40).map((name) => createExample(client, namespace, name)));
    }
    const others = await eventually("every object handled", async () => {
      const list = await client.request<{ items: KubernetesObject[] }>({
        path: resourcePath(KOPFEXAMPLES, { namespace }),
      });
      const by = list.items.map((item) => (item.status as { created?: { replica?: string } })?.created?.replica);
      if (by.length !== names.length || !by.every(Boolean)) return undefined;
      return list.items.filter((_, i) => by[i] === "b").map((item) => item.metadata.name!);
    }, { seconds: 120 });
    assert.ok(others.length >= 100, `b handled ${others.length} of ${names.length}`);
    await eventually("a collection in a after the burst", async () => await collections(a.url) > started || undefined);
    await settle(DELAY * 1.5);
    const before = await collections(a.url);

    // Only b's objects change: a turns every event away before its queues (more than the thousand that a collection
    // needs), so its queues never get work.
    const rounds = Math.ceil(1100 / others.length);
    for (let round = 0; round < rounds; round++) {
      for (let i = 0; i < others.length; i += 40) {
        await Promise.all(
          others.slice(i, i + 40).map((name) =>
            client.request({
              method: "PATCH",
              path: resourcePath(KOPFEXAMPLES, { namespace, name }),
              contentType: "application/merge-patch+json",
              body: { spec: { round } },
            })
          ),
        );
      }
    }
    await eventually(
      "a collection in a after the other member's events",
      async () => await collections(a.url) > before || undefined,
    );
  } finally {
    await Promise.all(members.map((member) => member.process[Symbol.asyncDispose]()));
  }
});
