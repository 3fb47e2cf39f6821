/**
 * bench/operator_path.ts's command line (what each option means: that file's description): read, its values
 * checked, the tools that `--perf` and `--instructions` need looked for before anything starts, and the variables
 * through which the contestants learn what to trace set.
 *
 * @module
 */

import { commandLine, usageError } from "./command_line.ts";
import type { ContestantName } from "./compare_contestants.ts";

/** What bench/operator_path.ts was asked to run. */
export interface PathOptions {
  readonly objects: number;
  readonly rounds: number;
  readonly requested: ContestantName[];
  readonly before: string | undefined;
  readonly latency: number;
  /** `--event-after` as given: {@linkcode eventDelayOf} checks it. */
  readonly eventAfter: string | undefined;
  /** `--rate` as given (printed so in the table's title); absent: the objects are added at once. */
  readonly rate: string | undefined;
  readonly tick: number;
  readonly warm: number;
  readonly threads: boolean;
  readonly perf: string | undefined;
  readonly compilations: boolean;
  readonly promises: boolean;
  readonly instructions: boolean;
  /** How many times longer the waits for the start, the rest and the last echoes are under Valgrind (the process runs ~60 times slower; these suffice). */
  readonly slower: number;
}

const CONTESTANTS = ["ours", "lean", "raw", "raw2", "floor", "cr", "rs", "before"];

/** Reads the command line; exits with a usage error for a value it cannot take, or a tool that is missing. */
export async function readOptions(): Promise<PathOptions> {
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
  const warm = Number(values.warm);
  if (!(Number.isInteger(warm) && warm >= 0)) {
    usageError(`--warm takes a whole number of objects, 0 or more; got ${values.warm}.`);
  }
  const tick = Number(values.tick);
  if (!(tick > 0)) usageError(`--tick takes the milliseconds between two additions, above 0; got ${values.tick}.`);
  const requested = values.only.split(",") as ContestantName[];
  for (const name of requested) {
    if (!CONTESTANTS.includes(name)) {
      usageError(`Unknown contestant ${name}: choose among ours, lean, raw, raw2, floor, cr, rs and before.`);
    }
  }
  if (requested.includes("before") && !values.before) throw new Error("The contestant before needs --before DIR.");
  await prepareTracing(values);
  return {
    objects: Number(values.objects),
    rounds: Number(values.rounds),
    requested,
    before: values.before,
    latency: Number(values.latency),
    eventAfter: values["event-after"],
    rate: values.rate,
    tick,
    warm,
    threads: values.threads,
    perf: values.perf,
    compilations: values.compilations,
    promises: values.promises,
    instructions: values.instructions,
    slower: values.instructions ? 10 : 1,
  };
}

/** The milliseconds from a write's answer to its watch event that `--event-after` asks for. */
export function eventDelayOf(given: string): number {
  const delay = Number(given);
  if (!(delay >= 0)) usageError(`--event-after takes milliseconds, 0 or more; got ${given}.`);
  return delay;
}

/**
 * Looks for `perf` and Valgrind when `--perf` or `--instructions` need them (a missing one is a usage error, not a
 * failure half-way), makes `--perf`'s folder, and sets the variables that make the contestants trace.
 */
async function prepareTracing(values: { perf?: string; instructions: boolean; compilations: boolean }): Promise<void> {
  if (values.perf !== undefined) {
    if (!await found("perf")) usageError("--perf needs Linux's perf on the PATH (Debian: apt-get install linux-perf).");
    await Deno.mkdir(values.perf, { recursive: true });
    // Read by bench/compare_contestants.ts: the contestants name their JavaScript frames for perf.
    Deno.env.set("KOPF_BENCH_PERF_MAP", "1");
  }
  if (values.instructions && !await found("callgrind_control")) {
    usageError("--instructions needs Valgrind on the PATH (Debian: apt-get install valgrind).");
  }
  // Read by bench/compare_contestants.ts: every Deno contestant traces V8's optimising compilations into its log.
  if (values.compilations) Deno.env.set("KOPF_BENCH_TRACE_OPT", "1");
}

/** Whether a command runs (`--version`). */
function found(command: string): Promise<boolean> {
  return new Deno.Command(command, { args: ["--version"], stdout: "null", stderr: "null" }).output()
    .then((output) => output.success, () => false);
}
