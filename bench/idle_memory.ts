/**
 * Where the memory of an idle operator goes: the resident memory of a bare Deno process, the raw
 * client (bench/fixtures/raw_operator.ts), our `kopf run` of bench/fixtures/compare_create.ts and
 * Python Kopf, each started as bench/compare.ts starts it against one LocalCluster, serving a fresh
 * namespace. Per contestant: RSS split into anonymous and file-backed pages (`/proc/PID/smaps_rollup`)
 * and, for the Deno processes, the V8 heap (`Deno.memoryUsage()`, read by bench/fixtures/memory_probe.ts,
 * preloaded). The anonymous memory that is not V8 heap is mostly malloc (buffers, TLS, the module
 * loader) and stacks. Medians over `--rounds`; the contestants take turns.
 *
 * With `--objects N`, N objects are created before each start and the process is measured `--settle`
 * seconds after the last one is handled (the bare process handles none: it is measured after
 * `--settle` seconds, as when idle).
 *
 * Usage: `deno run -A bench/idle_memory.ts [--rounds 3] [--settle 10] [--objects 0]
 * [--only bare,raw,ours,kopf] [--before DIR] [--snapshots DIR] [--logs DIR] [--private-binary]`
 *
 * `--private-binary` runs the Deno contestants from a copy of the `deno` binary, as an operator in
 * its container has the binary to itself: the pages of a binary that the bench's own process maps
 * too are shared, and the kernel gives none of those back (src/utils/executable_pages.ts).
 *
 * `--before DIR` adds `before` (name it in `--only`): `kopf run` of another checkout, for
 * before/after tables in one run. `--snapshots DIR` writes a V8 heap snapshot of each Deno process
 * there (after its memory is read; open them in Chrome's DevTools, Memory tab).
 *
 * @module
 */

import { commandLine, usageError } from "./command_line.ts";
import { join, resolve } from "node:path";
import { LocalCluster } from "../testing.ts";
import { exitOnSignals } from "./exit_on_signals.ts";
import { ApiClient } from "../src/api/client.ts";
import { loadKubeconfig } from "../src/api/kubeconfig.ts";
import type { KubernetesObject } from "../src/model/body.ts";
import { ensurePythonKopf } from "../tests/support/python_kopf.ts";
import {
  checkPrerequisites,
  contestantDeno,
  type ContestantName,
  contestants,
  spawn,
  type Started,
  usePrivateBinary,
} from "./compare_contestants.ts";
import { prepareExamples } from "./example_namespace.ts";
import { Tracker } from "./compare_tracker.ts";
import { median, mib, probeMemory } from "./process_stats.ts";
import { roundOrder } from "./round_order.ts";

const { values } = commandLine({
  options: {
    rounds: { type: "string", default: "3" },
    settle: { type: "string", default: "10" },
    objects: { type: "string", default: "0" },
    only: { type: "string", default: "bare,raw,ours,kopf" },
    before: { type: "string" },
    snapshots: { type: "string" },
    logs: { type: "string" },
    "private-binary": { type: "boolean", default: false },
  },
});
type Name = "bare" | ContestantName;
const KNOWN: readonly Name[] = ["bare", "raw", "ours", "lean", "bundle", "before", "kopf"];
const rounds = Number(values.rounds);
const settleMs = Number(values.settle) * 1000;
const objects = Number(values.objects);
let names = values.only.split(",") as Name[];
const unknown = names.filter((name) => !KNOWN.includes(name));
if (unknown.length) {
  usageError(`Unknown contestants in --only: ${unknown.join(", ")}; known: ${KNOWN.join(", ")}.`);
}
if (names.includes("before") !== (values.before !== undefined)) {
  usageError("The `before` contestant and --before go together: --before DIR --only bare,raw,before,ours,… .");
}
checkPrerequisites(names);
let python: string | undefined;
if (names.includes("kopf")) {
  const installation = await ensurePythonKopf();
  if ("skipped" in installation) {
    console.error(`${installation.skipped} Measuring without Python Kopf.`);
    names = names.filter((name) => name !== "kopf");
  } else {
    python = installation.python;
  }
}
const logs = values.logs ?? await Deno.makeTempDir({ prefix: "kopf-idle-memory-" });
await Deno.mkdir(logs, { recursive: true });
if (values.snapshots) await Deno.mkdir(values.snapshots, { recursive: true });
if (values["private-binary"]) await usePrivateBinary(logs);
const probe = join(logs, "probe.json");
const probeFlags = [`--preload=${new URL("./fixtures/memory_probe.ts", import.meta.url).pathname}`];
// The spawned processes inherit the environment: the probe finds its file here.
Deno.env.set("KOPF_BENCH_PROBE", probe);

exitOnSignals();
await using cluster = await LocalCluster.start();
using client = new ApiClient(await loadKubeconfig({ path: cluster.kubeconfig }));
const caFile = join(logs, "ca.pem");
await Deno.writeTextFile(caFile, cluster.caCert);
const root = new URL("..", import.meta.url);
const before = values.before === undefined ? undefined : resolve(values.before);
const all = contestants({ cluster, caFile, python, root, before, denoFlags: probeFlags });
console.error(`Logs of every process: ${logs}`);

/** One reading of a process's memory, in bytes. */
interface Reading {
  rss: number;
  anonymous: number;
  file: number;
  heapTotal?: number;
  heapUsed?: number;
  external?: number;
}
const readings = new Map<Name, Reading[]>(names.map((name) => [name, []]));
let serial = 0;
for (let round = 1; round <= rounds; round++) {
  const order = roundOrder(names, round);
  for (const name of order) {
    console.error(`[round ${round}] ${name}`);
    readings.get(name)!.push(await measure(name, round));
  }
}
print();

async function measure(name: Name, round: number): Promise<Reading> {
  const namespace = `idle-${Date.now().toString(36)}-${++serial}`;
  const collection = await prepareExamples(client, namespace);
  await createObjects(collection);
  await using tracker = await Tracker.start(client, namespace);
  const log = join(logs, `${String(serial).padStart(3, "0")}-${name}.log`);
  const snapshot = values.snapshots ? join(values.snapshots, `${name}-${round}.heapsnapshot`) : undefined;
  if (snapshot) Deno.env.set("KOPF_BENCH_SNAPSHOT", resolve(snapshot));
  else Deno.env.delete("KOPF_BENCH_SNAPSHOT");
  await Deno.remove(probe).catch(() => {});
  const process = name === "bare"
    ? spawn(log, root.pathname, contestantDeno(), ["run", "-A", ...probeFlags, "bench/fixtures/idle_bare.ts"], {})
    : all[name].start("create", namespace, log);
  try {
    let handled = process.started;
    if (objects && name !== "bare") handled = await process.guard(tracker.until(isDone, objects), "the objects");
    await process.guard(sleep(handled + settleMs - performance.now()), "the memory to settle");
    const reading = await smaps(process.pid);
    if (name === "kopf") return reading;
    return { ...reading, ...await heap(process) };
  } finally {
    await process.stop();
  }
}

/** Resident memory by kind of page: anonymous (heaps, malloc, stacks) and file-backed (the binary, libraries). */
async function smaps(pid: number): Promise<Reading> {
  const text = await Deno.readTextFile(`/proc/${pid}/smaps_rollup`);
  const field = (key: string) => Number(text.match(new RegExp(`^${key}:\\s+(\\d+) kB$`, "m"))?.[1] ?? NaN) * 1024;
  const rss = field("Rss");
  const anonymous = field("Anonymous");
  return { rss, anonymous, file: rss - anonymous };
}

/** The V8 heap as the process sees it, asked for by a signal to the preloaded probe. */
async function heap(process: Started): Promise<Partial<Reading>> {
  const usage = await process.guard(probeMemory(process.pid, probe), "the memory probe");
  const { heapTotal, heapUsed, external } = usage;
  return { heapTotal, heapUsed, external };
}

async function createObjects(collection: string): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < objects) {
      const name = `kex-${next++}`;
      const body = { apiVersion: "kopf.dev/v1", kind: "KopfExample", metadata: { name }, spec: {} };
      await client.request({ method: "POST", path: collection, body });
    }
  };
  await Promise.all(Array.from({ length: Math.min(32, objects) }, worker));
}

function isDone(object: KubernetesObject): boolean {
  return (object.status as { done?: { ok?: boolean } } | undefined)?.done?.ok === true;
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, Math.max(0, ms)));
}

function print(): void {
  const columns: [string, keyof Reading][] = [
    ["RSS", "rss"],
    ["anonymous", "anonymous"],
    ["file-backed", "file"],
    ["V8 heap", "heapTotal"],
    ["heap used", "heapUsed"],
    ["external", "external"],
  ];
  const cell = (name: Name, key: keyof Reading) => {
    const samples = readings.get(name)!.map((reading) => reading[key]).filter((value) => value !== undefined);
    return samples.length ? mib(median(samples)) : "—";
  };
  const what = objects ? `${objects} objects handled, ${values.settle} s after the last` : `idle, ${values.settle} s`;
  console.log(`Memory in MiB (${what}; medians of ${rounds} rounds):\n`);
  console.log(`| contestant | ${columns.map(([title]) => title).join(" | ")} | other anonymous |`);
  console.log(`| --- | ${columns.map(() => "---:").join(" | ")} | ---: |`);
  for (const name of names) {
    const others = readings.get(name)!
      .filter((reading) => reading.heapTotal !== undefined)
      .map((reading) => reading.anonymous - reading.heapTotal!);
    const other = others.length ? mib(median(others)) : "—";
    console.log(`| ${name} | ${columns.map(([, key]) => cell(name, key)).join(" | ")} | ${other} |`);
  }
  const rss = (name: Name) => median(readings.get(name)?.map((reading) => reading.rss) ?? [NaN]);
  for (const ours of ["ours", "before"] as const) {
    if (!names.includes(ours)) continue;
    const ratios = (["raw", "kopf"] as const).filter((peer) => names.includes(peer))
      .map((peer) => `${(rss(ours) / rss(peer)).toFixed(2)}× ${peer}`);
    if (ratios.length) console.log(`\n${ours}: RSS ${ratios.join(", ")}`);
  }
}
