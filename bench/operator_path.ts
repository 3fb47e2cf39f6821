/**
 * What each contestant spends per object on its whole path — the watch's events, the queues, the
 * cycles, the handler, the writes and their responses, the log lines — against a scripted API
 * server (bench/scripted_api.ts) instead of kube-apiserver. On one LocalCluster, kube-apiserver and
 * etcd take most of the two cores and the rounds of bench/compare.ts differ by 10–30%; here the
 * server's share is small and steady: with the objects added at once, rounds differ by 3–5%
 * (with `--rate`, by up to 10%).
 *
 * The contestants are bench/compare.ts's, started the same way with the same fixture (one create
 * handler returning a result): ours, `lean`, the raw clients `raw` and `raw2`, `floor` (lean's work
 * written straight, without the framework's layers: bench/fixtures/lean_floor.ts), `before` (another
 * checkout, `--before DIR`), and controller-runtime's reconciler `cr` (built with Go on first use;
 * the server streams its cache's list as client-go asks, `sendInitialEvents`; the main thread's
 * share and wake-ups are left out for it: Go runs goroutines on any thread). Per round and contestant
 * (interleaved): a fresh namespace, the process started and its watch open, 2 s of rest, then
 * `--objects` objects added at once; measured from then until every object has its result in the
 * status: the process's CPU per object (each thread's by the scheduler's count, to the nanosecond; the
 * kernel's share by `stat`'s ticks of 10 ms; how much its main thread spent, and how often it woke
 * up), objects/s, the writes per object, and how long an object waits in the contestant: from its
 * ADDED event to its first write, the median and the 99th percentile. After the medians, the pairs the table compares,
 * round by round: the median of the rounds' ratios of CPU per object, the lowest and the highest (the contestants of a
 * round share the machine's drift, so a before/after reads best there).
 *
 * With `--latency MS`, each write's response comes that much later (after its watch event), as from a
 * busy API server: what waiting writes cost a contestant shows (ours keeps at most
 * `settings.networking.concurrentRequests` in flight, 32 by default). With `--event-after MS`, each write's watch
 * event goes out that many ms after its response instead of before it (kube-apiserver's order: the response once
 * etcd has the write, the event once its watch cache has it). With `--rate N`, the objects come at
 * N per second instead of at once (every contestant then works at the same pace, as on a LocalCluster,
 * where kube-apiserver sets it: the CPU per object of a process that idles between objects is higher),
 * added every `--tick` ms (20 by default: 5 objects at a time at 250 per second). With `--warm N`, N objects are
 * added the same way and handled before the measured ones, unmeasured: a process past its warm-up (V8 has optimised
 * the code its objects run), where a fresh one pays for compiling it.
 * With `--threads`, also the CPU per object by thread name (V8's helpers, the runtime's pools). With
 * `--perf DIR`, `perf record -g` samples each Deno contestant while it handles the objects, into
 * `DIR/<name>-<round>.data`, for bench/perf_split.ts (JavaScript against the runtime's native work). With
 * `--compilations`, each Deno contestant runs with V8's `--trace-opt`, and the table adds how many functions
 * V8's optimising compilers (Maglev, TurboFan) compiled in the process's life, its start included, and the
 * time those compilations took (on V8's worker threads, mostly), per object: the warm-up that a fresh process
 * pays for the code its objects run. (Its trace and its log share one file; a line of one cut by the other is
 * not counted, ~1% of them.) With `--instructions`, each Deno contestant runs under Valgrind's callgrind
 * (Debian: apt-get install valgrind), counting from the objects' addition to the last echo: the table adds
 * the machine instructions per object, all threads together (V8's compilers and collector included), and
 * what Valgrind's model of the caches and the branch predictor makes of them: misses of the first-level
 * instruction and data caches and of the last level, and mispredicted branches. Counts, within a few percent
 * from run to run (more when the event loop batches the events otherwise: read the wake-ups row beside them, and
 * a change against `before` in the same run), where this machine's CPU times spread 10-30% per round; not
 * times: a miss costs more than an instruction, a process whose caches are cold does less per cycle. The
 * process runs ~60 times slower under Valgrind, so what depends on time (the turns' budget, how many watch
 * events one read brings) is not as in a run without it. The main thread's counts are also split by the
 * origin of the code that ran (bench/callgrind_origins.ts: the framework's JavaScript, Deno's, V8's builtins,
 * the binary's native code, ...), and again with the native code's counts charged to the code that called it.
 * With `--promises`, each Deno contestant counts the promises it makes (bench/fixtures/promise_probe.ts) and
 * the table adds them per object: a count, steady from run to run, where CPU times of a fresh process spread
 * 10-30% per round (the hook's own cost makes those times incomparable).
 *
 * Usage: `deno run -A bench/operator_path.ts [--objects 2000] [--rounds 3] [--only ours,lean,raw,raw2,floor,cr]
 * [--latency 0] [--event-after MS] [--rate N [--tick 20]] [--warm 0] [--before DIR] [--threads] [--perf DIR]
 * [--compilations] [--promises] [--instructions]`
 *
 * @module
 */

import { commandLine, usageError } from "./command_line.ts";
import { join } from "node:path";
import type { ContestantName } from "./compare_contestants.ts";
import {
  cpuBetween,
  mainAndOthers,
  mainThreadWakeups,
  median,
  pairedRatios,
  readCpu,
  systemSeconds,
} from "./process_stats.ts";
import { ScriptedApi, scriptedContestants } from "./scripted_api.ts";
import { roundOrder } from "./round_order.ts";
import { type Origin, type OriginCounts, ORIGINS, originSplits } from "./callgrind_origins.ts";
import { preparePeers } from "./compare_peers.ts";

const { values } = commandLine({
  options: {
    objects: { type: "string", default: "2000" },
    rounds: { type: "string", default: "3" },
    only: { type: "string", default: "ours,lean,raw,raw2" },
    before: { type: "string" },
    latency: { type: "string", default: "0" },
    "event-after": { type: "string" },
    rate: { type: "string" },
    threads: { type: "boolean", default: false },
    tick: { type: "string", default: "20" },
    perf: { type: "string" },
    compilations: { type: "boolean", default: false },
    warm: { type: "string", default: "0" },
    promises: { type: "boolean", default: false },
    instructions: { type: "boolean", default: false },
  },
});
const objects = Number(values.objects);
const warm = Number(values.warm);
if (!(Number.isInteger(warm) && warm >= 0)) {
  usageError(`--warm takes a whole number of objects, 0 or more; got ${values.warm}.`);
}
const tick = Number(values.tick);
if (!(tick > 0)) usageError(`--tick takes the milliseconds between two additions, above 0; got ${values.tick}.`);
const rounds = Number(values.rounds);
const requested = values.only.split(",") as ContestantName[];
for (const name of requested) {
  if (!["ours", "lean", "raw", "raw2", "floor", "cr", "rs", "before"].includes(name)) {
    usageError(`Unknown contestant ${name}: choose among ours, lean, raw, raw2, floor, cr, rs and before.`);
  }
}
if (requested.includes("before") && !values.before) throw new Error("The contestant before needs --before DIR.");
// Checked before anything starts: a missing perf is a usage error, not a failure half-way.
if (values.perf !== undefined) {
  const found = await new Deno.Command("perf", { args: ["--version"], stdout: "null", stderr: "null" }).output()
    .then((output) => output.success, () => false);
  if (!found) usageError("--perf needs Linux's perf on the PATH (Debian: apt-get install linux-perf).");
  await Deno.mkdir(values.perf, { recursive: true });
  // Read by bench/compare_contestants.ts: the contestants name their JavaScript frames for perf.
  Deno.env.set("KOPF_BENCH_PERF_MAP", "1");
}
if (values.instructions) {
  const found = await new Deno.Command("callgrind_control", { args: ["--version"], stdout: "null", stderr: "null" })
    .output().then((output) => output.success, () => false);
  if (!found) usageError("--instructions needs Valgrind on the PATH (Debian: apt-get install valgrind).");
}
// Read by bench/compare_contestants.ts: every Deno contestant traces V8's optimising compilations into its log.
if (values.compilations) Deno.env.set("KOPF_BENCH_TRACE_OPT", "1");
const { names, ...built } = await preparePeers(requested, "", new URL("../", import.meta.url));

await using api = await ScriptedApi.start();
api.latency = Number(values.latency);
if (values["event-after"] !== undefined) {
  const delay = Number(values["event-after"]);
  if (!(delay >= 0)) usageError(`--event-after takes milliseconds, 0 or more; got ${values["event-after"]}.`);
  api.eventDelay = delay;
}
const logs = await Deno.makeTempDir({ prefix: "kopf-operator-path-" });
// Read by bench/fixtures/promise_probe.ts, which the Deno contestants preload with `--promises`.
if (values.promises) Deno.env.set("KOPF_BENCH_PROMISES", logs);
const probe = values.promises ? [`--preload=${new URL("./fixtures/promise_probe.ts", import.meta.url).pathname}`] : [];
// Read by bench/compare_contestants.ts: the Deno contestants run under callgrind, writing into the logs' folder.
if (values.instructions) Deno.env.set("KOPF_BENCH_CALLGRIND", logs);
const all = await scriptedContestants(api, logs, values.before, built, probe);
/** How many times longer the waits for the start, the rest and the last echoes are under Valgrind (the process runs ~60 times slower; these suffice). */
const slower = values.instructions ? 10 : 1;

interface Measured {
  cpu: number;
  /** The part of `cpu` in the kernel (system time): syscalls, page faults, the scheduler. */
  system: number;
  main: number;
  others: number;
  /** The main thread's wake-ups (voluntary context switches) per object. */
  wakeups: number;
  rate: number;
  writes: number;
  /** Milliseconds from an object's ADDED event to its first write: the median and the 99th percentile. */
  waitMedian: number;
  waitP99: number;
  /** With `--compilations`: the functions V8 optimised in the process's life, and their compile time per object, ms. */
  compilations: number;
  compileMs: number;
  /** With `--promises`: the promises made per object. */
  promises: number;
  /** With `--instructions`: callgrind's counts per object, in thousands. */
  instructions: CallgrindCounts;
}

/** What callgrind counted (or its model estimated): instructions, cache misses, mispredicted branches. */
interface CallgrindCounts {
  instructions: number;
  /** The instructions of the main thread (JavaScript's), without V8's helper threads and the runtime's. */
  mainInstructions: number;
  instructionMisses: number;
  dataMisses: number;
  lastLevelMisses: number;
  mispredicted: number;
  /** The main thread's instructions and instruction-cache misses by the origin of the code that ran. */
  mainByOrigin: Map<Origin, OriginCounts>;
  /** The same with the native code's counts charged to the code that called it. */
  mainByCallingOrigin: Map<Origin, OriginCounts>;
}

/** The counts of a contestant that callgrind does not run. */
const NO_COUNTS: CallgrindCounts = {
  instructions: NaN,
  mainInstructions: NaN,
  instructionMisses: NaN,
  dataMisses: NaN,
  lastLevelMisses: NaN,
  mispredicted: NaN,
  mainByOrigin: new Map(),
  mainByCallingOrigin: new Map(),
};
const measured = new Map<ContestantName, Measured[]>(names.map((name) => [name, []]));
const threadSums = new Map<ContestantName, Map<string, number>>();

for (let round = 1; round <= rounds; round++) {
  const order = roundOrder(names, round);
  for (const name of order) {
    api.serve(`path-${name}-${round}`);
    const log = join(logs, `${name}-${round}.log`);
    const started = all[name].start("create", `path-${name}-${round}`, log);
    try {
      await started.guard(withTimeout(api.watched, 60 * slower, "its watch to open"), "the watch");
      await new Promise((resolve) => setTimeout(resolve, 2000 * slower));
      if (warm) {
        await addObjects("warm", warm);
        await started.guard(withTimeout(api.untilDone(warm), 600, "every warming object handled"), "the warming");
        api.waits.length = 0;
      }
      // The Deno contestants' promises so far (their probe writes the count when signalled).
      const counted = values.promises && name !== "cr" && name !== "rs";
      const promisesBefore = counted ? await promisesOf(started.pid) : NaN;
      const instrumented = values.instructions && name !== "cr" && name !== "rs";
      if (instrumented) await callgrindControl(["--instr=on", String(started.pid)]);
      const writesBefore = api.writes;
      const cpuBefore = await readCpu(started.pid);
      const systemBefore = await systemSeconds(started.pid);
      const wakeupsBefore = await mainThreadWakeups(started.pid);
      const begun = performance.now();
      // Go and Rust run their tasks on any of their threads: a main thread's share says nothing there.
      const threaded = name !== "cr" && name !== "rs";
      const sampling = values.perf !== undefined && threaded
        ? samplePerf(started.pid, join(values.perf, `${name}-${round}.data`))
        : undefined;
      await addObjects("kex", objects);
      await started.guard(withTimeout(api.untilDone(warm + objects), 600, "every object handled"), "the objects");
      const seconds = (performance.now() - begun) / 1000;
      await sampling?.stop();
      const spent = cpuBetween(cpuBefore, await readCpu(started.pid));
      const system = await systemSeconds(started.pid) - systemBefore;
      const wakeups = await mainThreadWakeups(started.pid) - wakeupsBefore;
      if (!spent.precise) {
        console.error(`[round ${round}, ${name}] a thread ended during the round: its CPU is read in ticks of 10 ms.`);
      }
      if (values.threads) addThreads(name, spent.byName);
      const threads = mainAndOthers(spent.byName);
      const cpu = spent.seconds;
      const perObject = (cpuTime: number) => cpuTime * 1000 / objects;
      // The echoes of the last writes reach the contestant just after the server has them: counted too.
      if (counted || instrumented) await new Promise((resolve) => setTimeout(resolve, 300 * slower));
      const promises = counted ? (await promisesOf(started.pid) - promisesBefore) / objects : NaN;
      const instructions = instrumented ? await callgrindCountsOf(name, started.pid, objects * 1000) : NO_COUNTS;
      const result = {
        cpu: perObject(cpu),
        system: perObject(system),
        main: threaded ? perObject(threads.main) : NaN,
        others: threaded ? perObject(threads.others) : NaN,
        wakeups: threaded ? wakeups / objects : NaN,
        rate: objects / seconds,
        writes: (api.writes - writesBefore) / objects,
        waitMedian: percentile(api.waits, 0.5),
        waitP99: percentile(api.waits, 0.99),
        compilations: NaN,
        compileMs: NaN,
        promises,
        instructions,
      };
      measured.get(name)!.push(result);
      console.error(
        `[round ${round}, ${name}] ${result.rate.toFixed(0)} objects/s, ${result.cpu.toFixed(3)} ms CPU per object` +
          (instrumented ? `; ${instructionsLine(instructions)}` : ""),
      );
    } finally {
      await started.stop();
    }
    // The trace is complete once the process has ended (its standard output is buffered).
    if (values.compilations && name !== "cr" && name !== "rs") {
      const compiled = compilationsIn(await Deno.readTextFile(log));
      Object.assign(measured.get(name)!.at(-1)!, {
        compilations: compiled.count,
        compileMs: compiled.milliseconds / objects,
      });
    }
  }
}
if (api.unknown.size) console.error("Requests the script does not answer:", Object.fromEntries(api.unknown));

const rows: [string, (m: Measured) => number, number][] = [
  ["objects/s", (m) => m.rate, 0],
  ["CPU per object, ms", (m) => m.cpu, 3],
  ["… of it in the kernel (system time)", (m) => m.system, 3],
  ["… of the main thread", (m) => m.main, 3],
  ["… of the other threads", (m) => m.others, 3],
  ["wake-ups of the main thread per object", (m) => m.wakeups, 2],
  ["writes per object", (m) => m.writes, 2],
  ["from an object's ADDED event to its first write, median, ms", (m) => m.waitMedian, 1],
  ["… 99th percentile, ms", (m) => m.waitP99, 1],
  ...(values.compilations
    ? [
      ["functions optimised in the process's life (Maglev, TurboFan)", (m: Measured) => m.compilations, 0],
      ["… their compile time per object, ms", (m: Measured) => m.compileMs, 3],
    ] as [string, (m: Measured) => number, number][]
    : []),
  ...(values.promises
    ? [["promises made per object", (m: Measured) => m.promises, 1]] as [string, (m: Measured) => number, number][]
    : []),
  ...(values.instructions
    ? [
      ["machine instructions per object, thousands (callgrind)", (m: Measured) => m.instructions.instructions, 0],
      ["… of the main thread", (m: Measured) => m.instructions.mainInstructions, 0],
      ["… misses of the L1 instruction cache", (m: Measured) => m.instructions.instructionMisses, 1],
      ["… misses of the L1 data cache", (m: Measured) => m.instructions.dataMisses, 1],
      ["… misses of the last-level cache", (m: Measured) => m.instructions.lastLevelMisses, 2],
      ["… mispredicted branches", (m: Measured) => m.instructions.mispredicted, 1],
      ...originRows("main thread's instructions, thousands", (m) => m.instructions.mainByOrigin, "instructions", 0),
      ...originRows(
        "main thread's L1 instruction misses, thousands",
        (m) => m.instructions.mainByOrigin,
        "instructionMisses",
        1,
      ),
      ...originRows(
        "… with the native code it calls, instructions",
        (m) => m.instructions.mainByCallingOrigin,
        "instructions",
        0,
      ),
      ...originRows(
        "… with the native code it calls, L1 instruction misses",
        (m) => m.instructions.mainByCallingOrigin,
        "instructionMisses",
        1,
      ),
    ] as [string, (m: Measured) => number, number][]
    : []),
];
const ratios = [
  ["ours", "raw2"],
  ["lean", "raw"],
  ["lean", "floor"],
  ["floor", "raw"],
  ["lean", "cr"],
  ["lean", "rs"],
  ["ours", "before"],
  ["lean", "before"],
].filter((
  [a, b],
) => names.includes(a as ContestantName) && names.includes(b as ContestantName));
console.log(
  `\n${objects} objects added ${values.rate ? `at ${values.rate} per second` : "at once"}${
    warm ? ` after ${warm} unmeasured` : ""
  }, medians of ${rounds} round(s), against bench/scripted_api.ts` +
    ` (writes answered after ${api.latency} ms; their watch events ${
      api.eventDelay === undefined ? "before the answers" : `${api.eventDelay} ms after them`
    }).\n`,
);
console.log(`| metric | ${names.join(" | ")} | ${ratios.map(([a, b]) => `${a}/${b}`).join(" | ")} |`);
console.log(`|---|${names.map(() => "--:|").join("")}${ratios.map(() => "--:|").join("")}`);
for (const [label, pick, digits] of rows) {
  const value = (name: string) => median(measured.get(name as ContestantName)!.map(pick));
  const shown = (number: number, places: number) => Number.isFinite(number) ? number.toFixed(places) : "–";
  const cells = names.map((name) => shown(value(name), digits));
  const shares = ratios.map(([a, b]) => shown(value(a) / value(b), 2));
  console.log(`| ${label} | ${cells.join(" | ")} | ${shares.join(" | ")} |`);
}

// The rounds run the contestants side by side: their CPU compared round by round, as a before/after reads best.
if (rounds > 1 && ratios.length) {
  console.log(`\nCPU per object compared round by round (${rounds} rounds):\n`);
  console.log("| ratio | median of the rounds' ratios | lowest | highest |\n|---|--:|--:|--:|");
  for (const [a, b] of ratios) {
    const cpu = (name: string) => measured.get(name as ContestantName)!.map((m) => m.cpu);
    const { median, lowest, highest } = pairedRatios(cpu(a), cpu(b));
    console.log(`| ${a}/${b} | ${median.toFixed(3)} | ${lowest.toFixed(3)} | ${highest.toFixed(3)} |`);
  }
}

if (values.threads) printThreads();

/** CPU seconds by thread name, per contestant, summed over the rounds. */
function addThreads(name: ContestantName, spent: Map<string, number>): void {
  const sums = threadSums.get(name) ?? new Map<string, number>();
  threadSums.set(name, sums);
  for (const [thread, seconds] of spent) sums.set(thread, (sums.get(thread) ?? 0) + seconds);
}

/** With `--threads`: CPU per object by thread name, the mean over the rounds. */
function printThreads(): void {
  const threadNames = [...new Set([...threadSums.values()].flatMap((sums) => [...sums.keys()]))].sort();
  console.log(`\nCPU per object by thread name, ms (means of ${rounds} round(s)):\n`);
  console.log(`| thread | ${names.join(" | ")} |`);
  console.log(`|---|${names.map(() => "--:|").join("")}`);
  for (const thread of threadNames) {
    const cells = names.map((name) => ((threadSums.get(name)?.get(thread) ?? 0) * 1000 / objects / rounds).toFixed(3));
    console.log(`| ${thread} | ${cells.join(" | ")} |`);
  }
}

/** `perf record` of a process's threads with their call stacks, until stopped (it writes its file then). */
function samplePerf(pid: number, file: string): { stop(): Promise<void> } {
  const child = new Deno.Command("perf", {
    args: ["record", "-F", "2000", "-g", "-p", String(pid), "-o", file],
    stdout: "null",
    stderr: "piped",
  }).spawn();
  const messages = new Response(child.stderr).text();
  return {
    async stop() {
      child.kill("SIGINT");
      await child.status;
      // perf exits with a failing status when interrupted, even after writing its file:
      // its summary says whether it did.
      const summary = (await messages).trim();
      if (!summary.includes("Captured and wrote")) throw new Error(`perf record -p ${pid} failed: ${summary}`);
    },
  };
}

/**
 * Adds `count` objects named `<prefix>-<n>`: all at once, or with `--rate`, so many per second (in ticks of `--tick`
 * ms).
 */
async function addObjects(prefix: string, count: number): Promise<void> {
  const rate = values.rate ? Number(values.rate) : Infinity;
  const begun = performance.now();
  for (let index = 0; index < count;) {
    const due = Math.min(count, Math.floor((performance.now() - begun) / 1000 * rate) + 1);
    for (; index < due; index++) api.add(`${prefix}-${index}`, { field: "value" });
    if (index < count) await new Promise((resolve) => setTimeout(resolve, tick));
  }
}

/**
 * The optimising compilations that V8's `--trace-opt` reported in a log: how many, and the milliseconds they took
 * (the three phases it reports: preparing, compiling and finishing).
 */
function compilationsIn(text: string): { count: number; milliseconds: number } {
  let count = 0;
  let milliseconds = 0;
  for (const match of text.matchAll(/\[completed compiling [^\]\n]*? - took ([\d.]+), ([\d.]+), ([\d.]+) ms\]/g)) {
    count++;
    milliseconds += Number(match[1]) + Number(match[2]) + Number(match[3]);
  }
  return { count, milliseconds };
}

/** The promises a probed contestant has made so far: it writes the count into the logs' folder on SIGUSR2. */
async function promisesOf(pid: number): Promise<number> {
  const file = join(logs, String(pid));
  await Deno.remove(file).catch(() => {});
  Deno.kill(pid, "SIGUSR2");
  for (let waited = 0; waited < 5000; waited += 20) {
    const text = await Deno.readTextFile(file).catch(() => "");
    if (text) return Number(text);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  throw new Error(`Process ${pid} wrote no count of its promises within 5 s of SIGUSR2 (is the probe preloaded?).`);
}

/** Tells a callgrind process what to do (`callgrind_control`); fails with its output if it cannot. */
async function callgrindControl(args: string[]): Promise<void> {
  const output = await new Deno.Command("callgrind_control", { args, stdout: "piped", stderr: "piped" }).output();
  const text = new TextDecoder().decode(output.stdout) + new TextDecoder().decode(output.stderr);
  if (!output.success || !text.includes("OK")) throw new Error(`callgrind_control ${args.join(" ")}: ${text}`);
}

/**
 * A round's instructions per object, in thousands: all threads', the main thread's, and of these the JavaScript's own
 * (the framework's, the libraries', Deno's, V8's builtins'): V8's compilers and collector, native code, are outside
 * that count, the steadiest of the three from round to round (docs/performance/cpu.md, "The log lines without
 * LogTape's dispatch").
 */
function instructionsLine(counts: CallgrindCounts): string {
  const own = (origin: Origin) => counts.mainByOrigin.get(origin)?.instructions ?? 0;
  const script = ["framework (src/)", "libraries (node_modules)", "Deno's JavaScript", "V8's builtins"] as const;
  const javascript = script.reduce((sum, origin) => sum + own(origin), 0);
  return `${counts.instructions.toFixed(0)} thousand instructions per object, the main thread's ` +
    `${counts.mainInstructions.toFixed(0)}, its JavaScript's ${javascript.toFixed(1)} ` +
    `(the framework's ${own("framework (src/)").toFixed(1)})`;
}

/** A row per origin of the code: one count of a split of the main thread's (`--instructions`). */
function originRows(
  label: string,
  split: (m: Measured) => Map<Origin, OriginCounts>,
  count: keyof OriginCounts,
  digits: number,
): [string, (m: Measured) => number, number][] {
  return ORIGINS.map((
    origin,
  ) => [`${label}: ${origin}`, (m: Measured) => split(m).get(origin)?.[count] ?? NaN, digits]);
}

/**
 * What a callgrind process has counted since its instrumentation went on, divided by `per`: the totals of its
 * first dump, one file per thread (`<name>.<pid>.1-<thread>`, the main thread's `-01`).
 */
async function callgrindCountsOf(name: string, pid: number, per: number): Promise<CallgrindCounts> {
  await callgrindControl(["--dump", String(pid)]);
  const prefix = `${name}.${pid}.1-`;
  const files = [...Deno.readDirSync(logs)].map((entry) => entry.name).filter((file) => file.startsWith(prefix));
  if (!files.length) throw new Error(`callgrind wrote no dump of ${name} (process ${pid}) into ${logs}.`);
  const totals = new Map<string, number>();
  let main = NaN;
  for (const file of files) {
    const text = await Deno.readTextFile(join(logs, file));
    const events = /^events: (.+)$/m.exec(text)?.[1].split(" ");
    // A thread that ran nothing while counted has a total of 0 alone (and maybe no events line).
    const counts = /^(?:summary|totals): (.+)$/m.exec(text)?.[1].split(" ").map(Number) ?? [];
    for (const [index, event] of (events ?? []).entries()) {
      totals.set(event, (totals.get(event) ?? 0) + (counts[index] ?? 0));
    }
    if (file === `${prefix}01`) main = events ? counts[events.indexOf("Ir")] : 0;
  }
  // V8's map of its machine code (`--perf-basic-prof`, added under callgrind): where the main thread's code came from.
  const codeMap = `/tmp/perf-${pid}.map`;
  const mainByOrigin = new Map<Origin, OriginCounts>();
  const mainByCallingOrigin = new Map<Origin, OriginCounts>();
  if (files.includes(`${prefix}01`)) {
    const found = await Deno.stat(codeMap).then(() => true, () => false);
    const dump = join(logs, `${prefix}01`);
    const perObject = (counts: Map<Origin, OriginCounts>, into: Map<Origin, OriginCounts>) => {
      for (const [origin, { instructions, instructionMisses }] of counts) {
        into.set(origin, { instructions: instructions / per, instructionMisses: instructionMisses / per });
      }
    };
    const { own, calling } = await originSplits(dump, found ? codeMap : undefined);
    perObject(own, mainByOrigin);
    perObject(calling, mainByCallingOrigin);
    await Deno.remove(codeMap).catch(() => {});
  }
  const sum = (...events: string[]) => events.reduce((sum, event) => sum + (totals.get(event) ?? NaN), 0) / per;
  return {
    instructions: sum("Ir"),
    mainInstructions: main / per,
    instructionMisses: sum("I1mr"),
    dataMisses: sum("D1mr", "D1mw"),
    lastLevelMisses: sum("ILmr", "DLmr", "DLmw"),
    mispredicted: sum("Bcm", "Bim"),
    mainByOrigin,
    mainByCallingOrigin,
  };
}

/** The value below which the share `p` of the values lie (nearest rank). */
function percentile(values: readonly number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.max(0, Math.ceil(p * sorted.length) - 1)] ?? NaN;
}

function withTimeout<T>(promise: Promise<T>, seconds: number, what: string): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`Waited ${seconds} s for ${what}.`)), seconds * 1000);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}
