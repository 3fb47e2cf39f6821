/**
 * A burst of deletions through a watch with a label selector: the server reports an object that
 * only stops matching the selector as deleted too, so the watch checks each deletion with a GET
 * (src/api/deletion_confirmation.ts). Here `--objects` labelled ConfigMaps are deleted at once
 * (one DELETE of the collection) while a watch of them runs, and the time from that request to the
 * last deletion delivered is taken, with the GETs the watch sent.
 *
 * Contestants: `ours` (this checkout's watch) and `before` (another checkout's, `--before DIR`,
 * e.g. a `git worktree` of the commit before a change), each with its own client, in interleaved
 * rounds on one LocalCluster; the objects are made again before each.
 *
 * Usage: `deno run -A bench/selector_deletions.ts [--objects 1000] [--rounds 3] [--before DIR]`
 *
 * @module
 */

import { commandLine, usageError } from "./command_line.ts";
import { join, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { LocalCluster } from "../testing.ts";
import { exitOnSignals } from "./exit_on_signals.ts";
import { ApiClient } from "../src/api/client.ts";
import { loadKubeconfig } from "../src/api/kubeconfig.ts";
import { CONFIGMAPS } from "../tests/support/cluster.ts";
import { median } from "./process_stats.ts";
import { roundOrder } from "./round_order.ts";

const { values } = commandLine({
  options: {
    objects: { type: "string", default: "1000" },
    rounds: { type: "string", default: "3" },
    before: { type: "string" },
  },
});
const objects = Number(values.objects);
const rounds = Number(values.rounds);
if (!(Number.isInteger(objects) && objects >= 1)) {
  usageError(`--objects takes a count, 1 or more; got ${values.objects}.`);
}
if (!(Number.isInteger(rounds) && rounds >= 1)) usageError(`--rounds takes a count, 1 or more; got ${values.rounds}.`);

/** What a contestant's checkout gives: its client and its watch, as this checkout's modules type them. */
interface Checkout {
  ApiClient: typeof ApiClient;
  loadKubeconfig: typeof loadKubeconfig;
  Watcher: typeof import("../src/api/watching.ts").Watcher;
}

async function checkout(root: string): Promise<Checkout> {
  const module = (path: string) => import(pathToFileURL(join(root, path)).href);
  const [client, kubeconfig, watching] = await Promise.all([
    module("src/api/client.ts"),
    module("src/api/kubeconfig.ts"),
    module("src/api/watching.ts"),
  ]);
  return { ApiClient: client.ApiClient, loadKubeconfig: kubeconfig.loadKubeconfig, Watcher: watching.Watcher };
}

const contestants = new Map<string, Checkout>([["ours", await checkout(resolve(import.meta.dirname!, ".."))]]);
if (values.before) contestants.set("before", await checkout(resolve(values.before)));

exitOnSignals();
await using cluster = await LocalCluster.start();
using client = new ApiClient(await loadKubeconfig({ path: cluster.kubeconfig }));
const namespace = "bench";
await client.request({ method: "POST", path: "/api/v1/namespaces", body: { metadata: { name: namespace } } });
const collection = `/api/v1/namespaces/${namespace}/configmaps`;

/** Makes the labelled objects (50 requests at a time). */
async function create(): Promise<void> {
  for (let start = 0; start < objects; start += 50) {
    const names = Array.from({ length: Math.min(50, objects - start) }, (_, i) => `picked-${start + i}`);
    await Promise.all(names.map((name) =>
      client.request({
        method: "POST",
        path: collection,
        body: { metadata: { name, labels: { app: "picked" } }, data: { payload: "x".repeat(200) } },
      })
    ));
  }
}

/**
 * One round of one contestant: seconds from the DELETE to the last deletion delivered, and from the
 * DELETE's answer (when the server has deleted them all), and the GETs sent.
 */
async function measure(contestant: Checkout): Promise<{ seconds: number; after: number; gets: number }> {
  await create();
  const credentials = await contestant.loadKubeconfig({ path: cluster.kubeconfig });
  using own = new contestant.ApiClient(credentials);
  const controller = new AbortController();
  const watcher = new contestant.Watcher(own, CONFIGMAPS, {
    namespace,
    labelSelector: "app=picked",
    confirmDeletions: true,
    signal: controller.signal,
  });
  const listed = Promise.withResolvers<void>();
  const deleted = Promise.withResolvers<number>();
  const watching = (async () => {
    let count = 0;
    for await (const event of watcher) {
      if (event.type === "LISTED") listed.resolve();
      if (event.type === "DELETED" && ++count === objects) deleted.resolve(performance.now());
    }
  })();
  try {
    await listed.promise;
    const gets = own.counters.count({ verb: "get", resource: "configmaps" });
    const started = performance.now();
    await client.request({ method: "DELETE", path: collection, query: { labelSelector: "app=picked" } });
    const answered = performance.now();
    const ended = await deleted.promise;
    return {
      seconds: (ended - started) / 1000,
      after: Math.max(0, ended - answered) / 1000,
      gets: own.counters.count({ verb: "get", resource: "configmaps" }) - gets,
    };
  } finally {
    controller.abort();
    await watching;
  }
}

const results = new Map(
  [...contestants.keys()].map((
    name,
  ) => [name, { seconds: [] as number[], after: [] as number[], gets: [] as number[] }]),
);
for (let round = 1; round <= rounds; round++) {
  for (const name of roundOrder([...contestants.keys()], round)) {
    const { seconds, after, gets } = await measure(contestants.get(name)!);
    results.get(name)!.seconds.push(seconds);
    results.get(name)!.after.push(after);
    results.get(name)!.gets.push(gets);
    console.error(
      `[round ${round}, ${name}] ${objects} deletions delivered in ${seconds.toFixed(2)} s ` +
        `(${after.toFixed(2)} s after the DELETE's answer), ${gets} GETs`,
    );
  }
}

const names = [...contestants.keys()];
console.log(`\n${objects} labelled ConfigMaps deleted at once, medians of ${rounds} round(s):\n`);
console.log(`| | ${names.join(" | ")} |`);
console.log(`|---|${names.map(() => "--:").join("|")}|`);
const row = (label: string, pick: (name: string) => number[], digits: number) =>
  console.log(`| ${label} | ${names.map((name) => median(pick(name)).toFixed(digits)).join(" | ")} |`);
row("from the DELETE to the last deletion delivered, s", (name) => results.get(name)!.seconds, 2);
row("… deletions per second", (name) => results.get(name)!.seconds.map((seconds) => objects / seconds), 0);
row("from the DELETE's answer (all deleted) to the last delivered, s", (name) => results.get(name)!.after, 2);
row("GETs by the watch", (name) => results.get(name)!.gets, 0);
