/**
 * The idle collection in `kopf run` against a real API server (the process started as users start
 * it, without `--expose-gc`): no collection before any work, a collection after a burst of objects
 * once the queues are quiet, none more while idle, more after new work — counted by
 * `kopf_idle_collections_total`, which grows only when V8's collector has actually run.
 */

import assert from "node:assert/strict";
import { createExample, freshNamespace, settle, testCluster, waitForStatus } from "./support/cluster.ts";
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

Deno.test("kopf run collects garbage once after each burst, when the queues are quiet, and not while idle", async () => {
  const { client } = await testCluster();
  const namespace = await freshNamespace(client, "idle-gc");
  const url = `http://127.0.0.1:${freePort()}/metrics`;
  await using operator = await KopfProcess.start(
    namespace,
    ["--metrics", url, "tests/fixtures/idle_collection_handlers.ts"],
    { KOPF_TEST_IDLE_COLLECTION: String(DELAY) },
  );
  await operator.waitForLine(/Serving metrics at/);
  await settle(DELAY * 2);
  assert.equal(await collections(url), 0, "no work yet, nothing collected");

  // Counts after the work and its echoes are over (a loaded machine may split a burst in two: that is
  // two quiet periods, two collections — the unit tests count one per quiet period exactly).
  await handle(namespace, ["a", "b", "c", "d", "e"]);
  await eventually("a collection after the burst", async () => await collections(url) >= 1 || undefined);
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
