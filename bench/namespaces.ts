/**
 * Many namespaces, each watched on its own: ours, lean and Python Kopf serving the namespaces that match a glob
 * (`-n 'team-*'`: a watch of namespaces, then a watch of kopfexamples per namespace that matches) and
 * controller-runtime (`cr`) given their list (its cache's `DefaultNamespaces`: an informer per namespace); each also
 * serving the whole cluster with one watch (`--all-namespaces`), which tells what the streams cost apart from the
 * objects. On one LocalCluster, `--objects` kopfexamples in each of `--namespaces` namespaces, the same objects for
 * every run (reset to new before each); the contestants and their fixtures are bench/compare.ts's (one create
 * handler, `status.done`).
 *
 * Per contestant and way of serving (medians of `--rounds`, the runs taking turns):
 * - handled: from the spawn to all objects handled, and the CPU used until then;
 * - idle: the CPU over `--idle` seconds that follow `--settle` seconds after that, and the requests of kopfexamples
 *   that ended in them (a watch counts when it ends, so a resumed stream counts, an open one does not);
 * - at the end of the idle time: the RSS (and, for the namespaces, what it is above the cluster-wide run's, per
 *   namespace) and the TCP connections to the API server;
 * - the requests of kopfexamples in the whole run by verb, counted after the stop (every watch has ended by then):
 *   a stream that went silent and was resumed shows as more WATCHes than namespaces; and those of other resources
 *   (namespaces and CRDs, and the API server's own watches that end meanwhile: it watches its resources too);
 * - the WARNING and ERROR lines of its log.
 *
 * `--snapshots DIR` writes a V8 heap snapshot of each Deno process there at the end of its idle time, after a
 * full collection (bench/fixtures/memory_probe.ts, preloaded), to compare what one watch per namespace holds
 * with what one cluster-wide watch holds.
 *
 * @module
 */

import { commandLine, usageError } from "./command_line.ts";
import { join, resolve } from "node:path";
import { LocalCluster } from "../testing.ts";
import { exitOnSignals } from "./exit_on_signals.ts";
import { ApiClient } from "../src/api/client.ts";
import { loadKubeconfig } from "../src/api/kubeconfig.ts";
import { type RequestTotals, writesOf } from "./apiserver_metrics.ts";
import { type ContestantName, contestants, type Served } from "./compare_contestants.ts";
import { Tracker } from "./compare_tracker.ts";
import { preparePeers } from "./compare_peers.ts";
import { createExample, inParallel, isDone, objectName, resetExamples } from "./example_objects.ts";
import { prepareExamples } from "./example_namespace.ts";
import { connectionsTo, cpuSeconds, median, probeMemory, rss } from "./process_stats.ts";
import { measure } from "./served_requests.ts";
import { roundOrder } from "./round_order.ts";

const USAGE = `Usage: deno run -A bench/namespaces.ts [options]

Starts each contestant on kopfexamples spread over many namespaces, served one watch per namespace
and cluster-wide, and prints one table: a row per metric, a column per contestant and way of serving.

Options:
  --namespaces 100          how many namespaces (team-000, team-001, …)
  --objects 1               kopfexamples in each namespace
  --only ours,lean,kopf,cr  contestants (ours, lean, bundle, kopf, cr; before, with --before)
  --before DIR              a checkout of an earlier commit, run as \`before\` (default storages)
  --served namespaces,cluster
                            how each is run: per namespace (-n 'team-*', cr: the list), cluster-wide
  --rounds 2                runs of each column, taking turns; medians are printed
  --settle 10               seconds after all are handled before the idle time begins
  --idle 90                 seconds of idle time measured (kube-apiserver's bookmarks come about every
                            minute; Kopf's and ours' streams count 70 s without anything as a stall)
  --kopf-version 1.45.2     Python Kopf's version (installed into a cached virtualenv)
  --logs DIR                where every process's output goes (default: a temporary folder)
  --snapshots DIR           a V8 heap snapshot of each Deno process at the end of its idle time
  --help                    this text
`;

const { values } = commandLine({
  options: {
    namespaces: { type: "string", default: "100" },
    objects: { type: "string", default: "1" },
    only: { type: "string", default: "ours,lean,kopf,cr" },
    served: { type: "string", default: "namespaces,cluster" },
    rounds: { type: "string", default: "2" },
    settle: { type: "string", default: "10" },
    idle: { type: "string", default: "90" },
    "kopf-version": { type: "string", default: "1.45.2" },
    logs: { type: "string" },
    snapshots: { type: "string" },
    before: { type: "string" },
  },
}, USAGE);

type Way = "namespaces" | "cluster";
const count = Number(values.namespaces);
const perNamespace = Number(values.objects);
const rounds = Number(values.rounds);
const settleMs = Number(values.settle) * 1000;
const idleMs = Number(values.idle) * 1000;
const known: readonly ContestantName[] = ["ours", "lean", "bundle", "kopf", "cr", "before"];
const requested = values.only.split(",") as ContestantName[];
const ways = values.served.split(",") as Way[];
const unknown = [
  ...requested.filter((name) => !known.includes(name)),
  ...ways.filter((way) => way !== "namespaces" && way !== "cluster"),
];
if (unknown.length || ![count, perNamespace, rounds, idleMs].every((value) => value > 0) || !(settleMs >= 0)) {
  usageError(`Unknown contestants or ways of serving (${unknown.join(", ") || "none"}), or counts not above zero.`);
}
if (requested.includes("before") !== (values.before !== undefined)) {
  usageError("The `before` contestant and --before go together: --before DIR --only ours,before.");
}
const logs = values.logs ?? await Deno.makeTempDir({ prefix: "kopf-namespaces-" });
await Deno.mkdir(logs, { recursive: true });

const root = new URL("..", import.meta.url);
const { names, ...installed } = await preparePeers(requested, values["kopf-version"], root);
// The probe is preloaded into the Deno contestants only with --snapshots; the processes find its files in
// their environment (inherited), and collect with the `gc` of production's `--expose-gc`.
const snapshots = values.snapshots === undefined ? undefined : resolve(values.snapshots);
const probe = join(logs, "probe.json");
const denoFlags = snapshots ? [`--preload=${new URL("./fixtures/memory_probe.ts", import.meta.url).pathname}`] : [];
if (snapshots) {
  await Deno.mkdir(snapshots, { recursive: true });
  Deno.env.set("KOPF_BENCH_PROBE", probe);
  Deno.env.set("KOPF_BENCH_GC", "1");
}
exitOnSignals();
await using cluster = await LocalCluster.start();
const caFile = join(logs, "ca.pem");
await Deno.writeTextFile(caFile, cluster.caCert);
const before = values.before === undefined ? undefined : resolve(values.before);
const all = contestants({ cluster, caFile, root, before, ...installed, denoFlags });
using client = new ApiClient(await loadKubeconfig({ path: cluster.kubeconfig }));
const serverPort = Number(new URL(cluster.server).port);
console.error(`Logs of every process: ${logs}`);

const namespaces = Array.from({ length: count }, (_, index) => `team-${String(index).padStart(3, "0")}`);
const objects = count * perNamespace;
const namespaceOf = (index: number) => namespaces[index % count];
for (const namespace of namespaces) await prepareExamples(client, namespace);
await inParallel(0, objects, 64, (index) => createExample(client, namespaceOf(index), objectName(index)));
const servedBy: Record<Way, Served> = { namespaces: { pattern: "team-*", names: namespaces }, cluster: null };

/** One run's figures, by row key. */
type Run = Map<Row, number>;
type Row =
  | "handled"
  | "cpu"
  | "idleCpu"
  | "idleRequests"
  | "rss"
  | "connections"
  | "watches"
  | "otherResources"
  | "lists"
  | "writes"
  | "gets"
  | "warnings";
const columns = names.flatMap((name) => ways.map((way) => ({ name, way, runs: [] as Run[] })));
let serial = 0;
let handledBefore = false;
for (let round = 1; round <= rounds; round++) {
  for (const column of roundOrder(columns, round)) {
    console.error(`[round ${round}] ${column.name}, ${column.way}`);
    if (handledBefore) await resetExamples(client, objects, 64, namespaceOf);
    handledBefore = true;
    column.runs.push(await run(column.name, column.way));
  }
}
print();

async function run(name: ContestantName, way: Way): Promise<Run> {
  const figures: Run = new Map();
  const prefix = `${String(++serial).padStart(3, "0")}-${name}-${way}`;
  const log = join(logs, `${prefix}.log`);
  const snapshot = snapshots && name !== "kopf" && name !== "cr"
    ? join(snapshots, `${prefix}.heapsnapshot`)
    : undefined;
  if (snapshot) Deno.env.set("KOPF_BENCH_SNAPSHOT", snapshot);
  const ownWatches = () => client.counters.count({ verb: "watch", resource: "kopfexamples" });
  const watchesBefore = ownWatches();
  const { requests } = await measure(client, async () => {
    const tracker = await Tracker.start(client, null);
    const process = all[name].start("create", servedBy[way], log);
    try {
      try {
        const handled = await process.guard(tracker.until(isDone, objects), `${objects} objects to be handled`);
        figures.set("handled", (handled - process.started) / 1000);
        figures.set("cpu", await cpuSeconds(process.pid));
      } finally {
        await tracker[Symbol.asyncDispose]();
      }
      await process.guard(sleep(settleMs), "the settling time");
      const cpuBefore = await cpuSeconds(process.pid);
      const { requests: idle } = await measure(client, () => process.guard(sleep(idleMs), "the idle time"));
      figures.set("idleCpu", (await cpuSeconds(process.pid) - cpuBefore) * 1000 / (idleMs / 60_000));
      figures.set("idleRequests", sum(idle, (key) => key.endsWith(" kopfexamples")));
      figures.set("rss", await rss(process.pid));
      figures.set("connections", await connectionsTo(process.pid, serverPort));
      if (snapshot) await process.guard(probeMemory(process.pid, probe), "the heap snapshot");
    } finally {
      await process.stop();
    }
  });
  // The tracker's watches ended within the run: the API server counted them with the contestant's.
  const watches = (requests.get("WATCH kopfexamples") ?? 0) - (ownWatches() - watchesBefore);
  requests.set("WATCH kopfexamples", watches);
  console.error(`  requests: ${[...requests].sort().map(([key, value]) => `${key} ${value}`).join(", ")}`);
  const ofExamples = (verbs: readonly string[]) =>
    sum(requests, (key) => key.endsWith(" kopfexamples") && verbs.includes(key.split(" ")[0]));
  figures.set("watches", watches);
  figures.set("lists", ofExamples(["LIST"]));
  figures.set("writes", writesOf(requests, "kopfexamples"));
  figures.set("gets", ofExamples(["GET"]));
  figures.set("otherResources", sum(requests, (key) => !key.endsWith(" kopfexamples")));
  figures.set("warnings", await warnings(log));
  return figures;
}

/** WARNING and ERROR lines: ours' and Kopf's `[WARNING ]`, controller-runtime's (logr) `"error"=`. */
async function warnings(log: string): Promise<number> {
  const text = await Deno.readTextFile(log);
  return text.split("\n").filter((line) => /\[(WARNING|ERROR|CRITICAL) *\]|"error"=/.test(line)).length;
}

function sum(requests: RequestTotals, include: (key: string) => boolean): number {
  let result = 0;
  for (const [key, value] of requests) if (include(key)) result += value;
  return result;
}

function print(): void {
  const medianOf = (runs: Run[], row: Row) => median(runs.map((run) => run.get(row)!));
  const clusterRss = (name: ContestantName) => {
    const column = columns.find((column) => column.name === name && column.way === "cluster");
    return column ? medianOf(column.runs, "rss") : undefined;
  };
  const rows: [string, (runs: Run[], name: ContestantName, way: Way) => string][] = [
    ["handled: from the spawn, s", (runs) => medianOf(runs, "handled").toFixed(2)],
    ["CPU until handled, s", (runs) => medianOf(runs, "cpu").toFixed(2)],
    [`CPU idle, ms per minute (over ${values.idle} s)`, (runs) => medianOf(runs, "idleCpu").toFixed(0)],
    ["requests of kopfexamples ended while idle", (runs) => medianOf(runs, "idleRequests").toFixed(0)],
    ["RSS at the end, MiB", (runs) => (medianOf(runs, "rss") / 1024 / 1024).toFixed(1)],
    ["RSS above cluster-wide, KiB per namespace", (runs, name, way) => {
      const reference = clusterRss(name);
      if (way !== "namespaces" || reference === undefined) return "";
      return ((medianOf(runs, "rss") - reference) / 1024 / count).toFixed(0);
    }],
    ["connections to the API server", (runs) => medianOf(runs, "connections").toFixed(0)],
    ["kopfexamples: WATCH requests", (runs) => medianOf(runs, "watches").toFixed(0)],
    ["kopfexamples: LIST requests", (runs) => medianOf(runs, "lists").toFixed(0)],
    ["kopfexamples: GET requests", (runs) => medianOf(runs, "gets").toFixed(0)],
    ["kopfexamples: writes", (runs) => medianOf(runs, "writes").toFixed(0)],
    ["requests of other resources (the API server's own too)", (runs) => medianOf(runs, "otherResources").toFixed(0)],
    ["WARNING/ERROR lines", (runs) => medianOf(runs, "warnings").toFixed(0)],
  ];
  const title = (name: ContestantName, way: Way) => `${name}, ${way === "namespaces" ? `${count} watches` : "1 watch"}`;
  console.log(
    `${objects} kopfexamples in ${count} namespaces (${perNamespace} each); medians of ${rounds} rounds.\n`,
  );
  console.log(`| | ${columns.map(({ name, way }) => title(name, way)).join(" | ")} |`);
  console.log(`| --- | ${columns.map(() => "---:").join(" | ")} |`);
  for (const [label, cell] of rows) {
    console.log(`| ${label} | ${columns.map(({ name, way, runs }) => cell(runs, name, way)).join(" | ")} |`);
  }
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
