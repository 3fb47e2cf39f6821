/**
 * Recovery after API server restarts (issue 11, defect 5): with three restarts (~20 s down, ~15 s
 * up) every stream resumes within 20 s after the server is back, because a failing stream's pause
 * never exceeds half the outage so far; the backoff of one outage does not spill into the next.
 */

import assert from "node:assert/strict";
import { ApiClient } from "../src/api/client.ts";
import { loadKubeconfig } from "../src/api/kubeconfig.ts";
import { Watcher, type WatchEvent } from "../src/api/watching.ts";
import { WatchingSettings } from "../src/settings/watching.ts";
import { LocalCluster } from "../testing.ts";
import { connect, createExample, freshNamespace, KOPFEXAMPLES, patchExample, settle } from "./support/cluster.ts";
import { eventually } from "./support/eventually.ts";

const DOWN = 20;
const UP = 15;
const RESTARTS = 3;

Deno.test("after each of three API server restarts (~20 s down, ~15 s up) the stream resumes within 20 s (issue 11.5)", async () => {
  await using cluster = await LocalCluster.start();
  const { client } = await connect(cluster.kubeconfig);
  const namespace = await freshNamespace(client, "restarts");
  await createExample(client, namespace, "probe", { counter: 0 });

  using watching = new ApiClient(await loadKubeconfig({ path: cluster.kubeconfig }));
  const controller = new AbortController();
  const watcher = new Watcher(watching, KOPFEXAMPLES, {
    namespace,
    settings: new WatchingSettings(), // the default backoff is what is tested
    signal: controller.signal,
  });
  const events: WatchEvent[] = [];
  const done = (async () => {
    for await (const event of watcher) events.push(event);
  })();
  const seen = (counter: number) =>
    events.some((event) =>
      event.type !== "LISTED" && event.object.metadata.name === "probe" &&
      ((event.object.spec as { counter?: number } | undefined)?.counter ?? -1) >= counter
    ) || undefined;
  const resumed: number[] = [];
  try {
    await eventually("the listing", () => events.some((event) => event.type === "LISTED") || undefined);
    for (let round = 1; round <= RESTARTS; round++) {
      const down = Date.now();
      await cluster.stopApiserver();
      // Not waits: the lengths of the outage and of the time up between two are the scenario.
      await settle(Math.max(0, DOWN - (Date.now() - down) / 1000));
      await cluster.startApiserver();
      const back = Date.now();
      await patchExample(client, namespace, "probe", { spec: { counter: round } });
      // The bound is the acceptance: a stream whose retry fell into the outage would sleep past it.
      await eventually(`the change after restart ${round}`, () => seen(round), { seconds: 20 });
      resumed.push(round);
      await settle(Math.max(0, UP - (Date.now() - back) / 1000));
    }
  } finally {
    controller.abort();
    await done;
  }
  assert.deepEqual(resumed, [1, 2, 3], "every restart is followed by a resumed stream");
  assert.ok(watcher.health.totalFailures >= RESTARTS, `the outages were failures: ${watcher.health.totalFailures}`);
});
