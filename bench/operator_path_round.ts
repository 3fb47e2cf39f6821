/**
 * One contestant's round of bench/operator_path.ts: a fresh namespace on the scripted server, the process started
 * and its watch open, 2 s of rest (and the `--warm` objects handled), then the objects added; what the process and
 * the server counted from then until every object has its result, per object.
 *
 * @module
 */

import { join } from "node:path";
import type { Contestant, ContestantName, Started } from "./compare_contestants.ts";
import { cpuBetween, mainAndOthers, mainThreadWakeups, readCpu, systemSeconds } from "./process_stats.ts";
import type { ScriptedApi } from "./scripted_api.ts";
import {
  callgrindControl,
  type CallgrindCounts,
  callgrindCountsOf,
  instructionsLine,
  NO_COUNTS,
} from "./callgrind_counts.ts";
import { compilationsIn, promisesOf, samplePerf } from "./operator_path_readings.ts";
import type { PathOptions } from "./operator_path_options.ts";

/** What a round runs against. */
export interface PathBench {
  readonly api: ScriptedApi;
  readonly contestants: Record<ContestantName, Contestant>;
  /** The folder of the contestants' logs, where their promise probes and callgrind write too. */
  readonly logs: string;
  readonly options: PathOptions;
}

/** What one round measured of a contestant, per object where not said otherwise. */
export interface Measured {
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
  /** The CPU seconds of the round by thread name (not per object), for `--threads`. */
  byThread: Map<string, number>;
}

/** Runs a contestant's round `round`: started, rested (and warmed), measured over the objects, stopped. */
export async function measureRound(bench: PathBench, name: ContestantName, round: number): Promise<Measured> {
  const { api, options } = bench;
  api.serve(`path-${name}-${round}`);
  const log = join(bench.logs, `${name}-${round}.log`);
  const started = bench.contestants[name].start("create", `path-${name}-${round}`, log);
  let result: Measured;
  try {
    await started.guard(withTimeout(api.watched, 60 * options.slower, "its watch to open"), "the watch");
    await new Promise((resolve) => setTimeout(resolve, 2000 * options.slower));
    if (options.warm) {
      await addObjects(bench, "warm", options.warm);
      await started.guard(withTimeout(api.untilDone(options.warm), 600, "every warming object handled"), "the warming");
      api.waits.length = 0;
    }
    result = await measureObjects(bench, name, round, started);
  } finally {
    await started.stop();
  }
  // The trace is complete once the process has ended (its standard output is buffered).
  if (options.compilations && name !== "cr" && name !== "rs") {
    const compiled = compilationsIn(await Deno.readTextFile(log));
    return { ...result, compilations: compiled.count, compileMs: compiled.milliseconds / options.objects };
  }
  return result;
}

/** Adds the objects to a started contestant and measures it until every one has its result. */
async function measureObjects(
  bench: PathBench,
  name: ContestantName,
  round: number,
  started: Started,
): Promise<Measured> {
  const { api, options, logs } = bench;
  const { objects, slower } = options;
  // The Deno contestants' promises so far (their probe writes the count when signalled).
  const counted = options.promises && name !== "cr" && name !== "rs";
  const promisesBefore = counted ? await promisesOf(started.pid, logs) : NaN;
  const instrumented = options.instructions && name !== "cr" && name !== "rs";
  if (instrumented) await callgrindControl(["--instr=on", String(started.pid)]);
  const writesBefore = api.writes;
  const cpuBefore = await readCpu(started.pid);
  const systemBefore = await systemSeconds(started.pid);
  const wakeupsBefore = await mainThreadWakeups(started.pid);
  const begun = performance.now();
  // Go and Rust run their tasks on any of their threads: a main thread's share says nothing there.
  const threaded = name !== "cr" && name !== "rs";
  const sampling = options.perf !== undefined && threaded
    ? samplePerf(started.pid, join(options.perf, `${name}-${round}.data`))
    : undefined;
  await addObjects(bench, "kex", objects);
  await started.guard(withTimeout(api.untilDone(options.warm + objects), 600, "every object handled"), "the objects");
  const seconds = (performance.now() - begun) / 1000;
  await sampling?.stop();
  const spent = cpuBetween(cpuBefore, await readCpu(started.pid));
  const system = await systemSeconds(started.pid) - systemBefore;
  const wakeups = await mainThreadWakeups(started.pid) - wakeupsBefore;
  if (!spent.precise) {
    console.error(`[round ${round}, ${name}] a thread ended during the round: its CPU is read in ticks of 10 ms.`);
  }
  const threads = mainAndOthers(spent.byName);
  const perObject = (cpuTime: number) => cpuTime * 1000 / objects;
  // The echoes of the last writes reach the contestant just after the server has them: counted too.
  if (counted || instrumented) await new Promise((resolve) => setTimeout(resolve, 300 * slower));
  const promises = counted ? (await promisesOf(started.pid, logs) - promisesBefore) / objects : NaN;
  const instructions = instrumented ? await callgrindCountsOf(name, started.pid, objects * 1000, logs) : NO_COUNTS;
  const result = {
    cpu: perObject(spent.seconds),
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
    byThread: spent.byName,
  };
  console.error(
    `[round ${round}, ${name}] ${result.rate.toFixed(0)} objects/s, ${result.cpu.toFixed(3)} ms CPU per object` +
      (instrumented ? `; ${instructionsLine(instructions)}` : ""),
  );
  return result;
}

/**
 * Adds `count` objects named `<prefix>-<n>`: all at once, or with `--rate`, so many per second (in ticks of `--tick`
 * ms).
 */
async function addObjects({ api, options }: PathBench, prefix: string, count: number): Promise<void> {
  const rate = options.rate ? Number(options.rate) : Infinity;
  const begun = performance.now();
  for (let index = 0; index < count;) {
    const due = Math.min(count, Math.floor((performance.now() - begun) / 1000 * rate) + 1);
    for (; index < due; index++) api.add(`${prefix}-${index}`, { field: "value" });
    if (index < count) await new Promise((resolve) => setTimeout(resolve, options.tick));
  }
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
