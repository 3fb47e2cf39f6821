/**
 * Cost as the work grows: ours (default storages), lean (`settings.persistence.useLeanStorage()`),
 * Python Kopf, controller-runtime (`cr`) and kube-rs (`rs`, when named in `--only`), each started
 * on 1,000, 10,000 and 100,000 small kopfexamples already there, in one namespace and spread over
 * 100 (served cluster-wide), on one LocalCluster. The contestants and their fixtures are
 * bench/compare.ts's (one create handler, `status.done`).
 *
 * Per layout, the objects are created once per size with many POSTs in flight, going upward by
 * adding (1,000, then 9,000 more, then 90,000 more), and every contestant of that size runs on the
 * same objects: before each but the first, every object is reset (annotations, finalizers and
 * status removed), as if new. Per contestant and layout, first with no objects: the time to its
 * watch and its RSS once settled (the idle baseline). Then per size:
 * - start-up: from the spawn to its watch of kopfexamples open (the API server's gauge of open
 *   watches: after the listing, or amid it where the watch streams the listing or opens from its
 *   first page) and to all objects handled; CPU per object over that time, and up to settled (below);
 *   the LIST pages and WATCH requests of kopfexamples;
 * - memory: RSS once settled after all were handled (at least `--settle` seconds, then until its
 *   CPU stays below 2% of a core for 8 s), and that above the idle RSS per object; the peak RSS
 *   from the spawn to then (the kernel's high-water mark);
 * - restart with all handled: the time to the watch open, and the requests it makes until settled
 *   (by verb and resource; none may be a write or a GET of kopfexamples); its CPU and peak RSS then.
 *
 * A contestant is skipped at a size when its rate at the size below predicts more than
 * `--max-minutes` for it (say Python Kopf at 100,000); the table says so and why.
 *
 * @module
 */

import { commandLine, usageError } from "./command_line.ts";
import { join, resolve } from "node:path";
import { LocalCluster } from "../testing.ts";
import { exitOnSignals } from "./exit_on_signals.ts";
import { ApiClient } from "../src/api/client.ts";
import { loadKubeconfig } from "../src/api/kubeconfig.ts";
import { type ContestantName, contestants, type Started } from "./compare_contestants.ts";
import { Tracker } from "./compare_tracker.ts";
import { preparePeers } from "./compare_peers.ts";
import { collection, createExample, inParallel, isDone, objectName, resetExamples } from "./example_objects.ts";
import { prepareExamples } from "./example_namespace.ts";
import { cpuSeconds, peakRss, rss } from "./process_stats.ts";
import { type Column, ScaleResults } from "./scale_results.ts";
import { measure } from "./served_requests.ts";
import { openWatches, untilWatching } from "./watch_open.ts";

const USAGE = `Usage: deno run -A bench/scale.ts [options]

Starts each contestant on N pre-created small kopfexamples and prints, per layout, one table:
a row per metric, a column per contestant×size (see the module's description for each metric).

Options:
  --sizes 1000,10000,100000   object counts, measured upward (objects are added, not re-created)
  --namespaces 1,100          layouts: all objects in 1 namespace (served with -n), or spread
                              over K namespaces (served cluster-wide, one watch)
  --only ours,lean,kopf,cr    contestants (ours, lean, kopf, cr, rs; before, with --before)
  --before DIR                a checkout of an earlier commit, run as \`before\` (default storages)
  --max-minutes 30            skip a contestant at a size when its rate at the size below
                              predicts a longer start-up than this
  --settle 10                 seconds to wait at least before the RSS is read and a restart ends
  --parallel 256              requests in flight when the bench creates or resets objects
  --kopf-version 1.45.2       Python Kopf's version (installed into a cached virtualenv)
  --logs DIR                  where every process's output goes (default: a temporary folder)
  --help                      this text
`;

const { values } = commandLine({
  options: {
    sizes: { type: "string", default: "1000,10000,100000" },
    namespaces: { type: "string", default: "1,100" },
    only: { type: "string", default: "ours,lean,kopf,cr" },
    "max-minutes": { type: "string", default: "30" },
    settle: { type: "string", default: "10" },
    parallel: { type: "string", default: "256" },
    "kopf-version": { type: "string", default: "1.45.2" },
    logs: { type: "string" },
    before: { type: "string" },
  },
}, USAGE);
const numbers = (text: string) => text.split(",").filter(Boolean).map(Number);
const sizes = numbers(values.sizes).sort((a, b) => a - b);
const layouts = numbers(values.namespaces);
const maxMinutes = Number(values["max-minutes"]);
const settleMs = Number(values.settle) * 1000;
/** How long a process must stay below 2% of a core to count as settled. */
const QUIET_WINDOW_MS = 8000;
const parallel = Number(values.parallel);
const known: readonly ContestantName[] = ["ours", "lean", "kopf", "cr", "rs", "before"];
const requested = values.only.split(",") as ContestantName[];
const unknown = requested.filter((name) => !known.includes(name));
if (unknown.length || [...sizes, ...layouts].some((value) => !(value > 0))) {
  usageError(`Unknown contestants (${unknown.join(", ") || "none"}) or sizes not above zero.`);
}
if (requested.includes("before") !== (values.before !== undefined)) {
  usageError("The `before` contestant and --before go together: --before DIR --only ours,before.");
}
const logs = values.logs ?? await Deno.makeTempDir({ prefix: "kopf-scale-" });
await Deno.mkdir(logs, { recursive: true });

const root = new URL("..", import.meta.url);
const { names, ...installed } = await preparePeers(requested, values["kopf-version"], root);
exitOnSignals();
await using cluster = await LocalCluster.start();
const caFile = join(logs, "ca.pem");
await Deno.writeTextFile(caFile, cluster.caCert);
const before = values.before === undefined ? undefined : resolve(values.before);
const all = contestants({ cluster, caFile, root, before, ...installed });
const client = new ApiClient(await loadKubeconfig({ path: cluster.kubeconfig }));
const results = new ScaleResults();
const layoutNames = layouts.map((count) => count === 1 ? "1 namespace" : `${count} namespaces`);
console.error(`Logs of every process: ${logs}`);

let serial = 0;
for (const [index, count] of layouts.entries()) {
  const layout = layoutNames[index];
  const namespaces = Array.from({ length: count }, (_, index) => `scale-${count}-${index}`);
  const served = count === 1 ? namespaces[0] : null;
  const namespaceOf = (object: number) => namespaces[object % count];
  for (const namespace of namespaces) await prepareExamples(client, namespace);

  const idle = new Map<ContestantName, Column>();
  for (const name of names) {
    console.error(`[${layout}, ${name}] no objects`);
    idle.set(name, await idleRun(name, served));
  }
  let created = 0;
  let handled = 0; // the objects a contestant has handled: to be reset before the next one

  const rates = new Map<ContestantName, number>();
  for (const size of sizes) {
    const began = performance.now();
    await inParallel(
      created,
      size,
      parallel,
      (object) => createExample(client, namespaceOf(object), objectName(object)),
    );
    console.error(`[${layout}] ${size - created} objects created in ${seconds(performance.now() - began)} s`);
    created = size;
    for (const name of names) {
      const rate = rates.get(name);
      const predicted = rate && size / rate / 60;
      if (predicted && predicted > maxMinutes) {
        const reason = `${name} at ${size} (${layout}): at the size below it handled ${rate.toFixed(0)} objects/s, ` +
          `which predicts ~${predicted.toFixed(0)} min for ${size} (over --max-minutes ${maxMinutes}).`;
        console.error(`Skipped: ${reason}`);
        results.skip(reason);
        continue;
      }
      if (handled) {
        const began = performance.now();
        await resetExamples(client, handled, parallel, namespaceOf);
        console.error(`${handled} objects reset in ${seconds(performance.now() - began)} s`);
      }
      handled = size;
      console.error(`[${layout}, ${name}] ${size} objects`);
      const column = results.column(layout, name, size);
      for (const [key, value] of idle.get(name)!) column.set(key, value);
      column.set("size", size);
      await sizedRun(name, served, size, column);
      rates.set(name, column.get("rate")!);
    }
  }
  console.error(`[${layout}] deleting the objects`);
  for (const namespace of namespaces) await emptyNamespace(namespace);
}
results.print(layoutNames, names, sizes);

function start(name: ContestantName, served: string | null): Started {
  return all[name].start("create", served, join(logs, `${String(++serial).padStart(3, "0")}.log`));
}

/** Started with no objects: the time to the watch, and the RSS once settled. */
async function idleRun(name: ContestantName, served: string | null): Promise<Column> {
  const watchesBefore = await openWatches(client);
  const process = start(name, served);
  try {
    const ready = await untilWatching(client, watchesBefore, process);
    await settle(process, ready);
    return new Map([["idleReady", (ready - process.started) / 1000], ["idleRss", await rss(process.pid)]]);
  } finally {
    await process.stop();
  }
}

/** Started on `size` objects, none handled: start-up, CPU, memory; then restarted with all handled. */
async function sizedRun(name: ContestantName, served: string | null, size: number, column: Column): Promise<void> {
  const timeout = Math.max(1800, size / 10);
  // Counted before the tracker: its watch opens just after its listing, so the contestant's is one more.
  const watchesBefore = await openWatches(client) + 1;
  await using tracker = await Tracker.start(client, served);
  const first = await measure(client, async () => {
    const process = start(name, served);
    try {
      const handled = process.guard(tracker.until(isDone, size, timeout), `${size} objects to be handled`);
      const ready = await untilWatching(client, watchesBefore, process, timeout);
      column.set("ready", (ready - process.started) / 1000);
      const done = await handled;
      column.set("handled", (done - process.started) / 1000);
      column.set("rate", size / ((done - process.started) / 1000));
      column.set("cpu", await cpuSeconds(process.pid) / size);
      await settle(process, done);
      // With the work that follows the handling (the echoes of the writes, a relisting): the whole start's cost.
      column.set("cpuSettled", await cpuSeconds(process.pid) / size);
      column.set("rss", await rss(process.pid));
      column.set("peakRss", await peakRss(process.pid));
    } finally {
      await process.stop();
    }
  });
  const restartWatchesBefore = await openWatches(client);
  const restart = await measure(client, async () => {
    const process = start(name, served);
    try {
      const ready = await untilWatching(client, restartWatchesBefore, process, timeout);
      column.set("restartReady", (ready - process.started) / 1000);
      await settle(process, ready);
      column.set("restartCpu", await cpuSeconds(process.pid));
      column.set("restartPeakRss", await peakRss(process.pid));
    } finally {
      await process.stop();
    }
  });
  results.addRequests(column, size, first.requests, restart.requests);
}

/**
 * Waits `--settle` seconds from `from`, then until the process used less than 2% of a core over
 * 8 s (at most 2 minutes more: a process that never quiets is measured as it is, with a warning).
 * The window is longer than the 5 s after which our operator collects its garbage once its queues
 * are quiet: the RSS is read after that collection (inside a quiet window, or it was not quiet).
 */
async function settle(process: Started, from: number): Promise<void> {
  await process.guard(sleep(Math.max(0, from + settleMs - performance.now())), "the process to settle");
  const deadline = performance.now() + 120_000;
  let before = await cpuSeconds(process.pid);
  for (;;) {
    await process.guard(sleep(QUIET_WINDOW_MS), "the process to settle");
    const now = await cpuSeconds(process.pid);
    if (now - before < 0.02 * QUIET_WINDOW_MS / 1000) return;
    if (performance.now() > deadline) {
      console.error(`Still busy 2 minutes after the settling time; measured anyway. See ${process.log}.`);
      return;
    }
    before = now;
  }
}

/**
 * Deletes a namespace's objects. One DELETE of 100,000 objects outlasts the API server's request
 * timeout (it goes on deleting meanwhile): it is asked again until the namespace is empty.
 */
async function emptyNamespace(namespace: string): Promise<void> {
  for (let attempt = 1;; attempt++) {
    try {
      await client.request({ method: "DELETE", path: collection(namespace) });
    } catch (error) {
      console.error(`Deleting the objects of ${namespace} (attempt ${attempt}): ${error}; asking again.`);
    }
    const left = await client.request<{ items: unknown[] }>({ path: collection(namespace), query: { limit: 1 } });
    if (!left.items.length) return;
    if (attempt === 20) throw new Error(`The objects of ${namespace} are still there after 20 DELETEs.`);
  }
}

function seconds(ms: number): string {
  return (ms / 1000).toFixed(1);
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
