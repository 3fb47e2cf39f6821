/**
 * What Valgrind's callgrind counted in a contestant of bench/operator_path.ts (`--instructions`): its
 * instructions, all threads' and the main thread's, what Valgrind's model of the caches and the branch
 * predictor makes of them, and the main thread's split by the origin of the code that ran
 * (bench/callgrind_origins.ts); told when to count and when to dump with `callgrind_control`.
 *
 * @module
 */

import { join } from "node:path";
import { type Origin, type OriginCounts, originSplits } from "./callgrind_origins.ts";

/** What callgrind counted (or its model estimated): instructions, cache misses, mispredicted branches. */
export interface CallgrindCounts {
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
export const NO_COUNTS: CallgrindCounts = {
  instructions: NaN,
  mainInstructions: NaN,
  instructionMisses: NaN,
  dataMisses: NaN,
  lastLevelMisses: NaN,
  mispredicted: NaN,
  mainByOrigin: new Map(),
  mainByCallingOrigin: new Map(),
};

/** Tells a callgrind process what to do (`callgrind_control`); fails with its output if it cannot. */
export async function callgrindControl(args: string[]): Promise<void> {
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
export function instructionsLine(counts: CallgrindCounts): string {
  const own = (origin: Origin) => counts.mainByOrigin.get(origin)?.instructions ?? 0;
  const script = ["framework (src/)", "libraries (node_modules)", "Deno's JavaScript", "V8's builtins"] as const;
  const javascript = script.reduce((sum, origin) => sum + own(origin), 0);
  return `${counts.instructions.toFixed(0)} thousand instructions per object, the main thread's ` +
    `${counts.mainInstructions.toFixed(0)}, its JavaScript's ${javascript.toFixed(1)} ` +
    `(the framework's ${own("framework (src/)").toFixed(1)})`;
}

/**
 * What a callgrind process has counted since its instrumentation went on, divided by `per`: the totals of its
 * first dump in `folder`, one file per thread (`<name>.<pid>.1-<thread>`, the main thread's `-01`).
 */
export async function callgrindCountsOf(
  name: string,
  pid: number,
  per: number,
  folder: string,
): Promise<CallgrindCounts> {
  await callgrindControl(["--dump", String(pid)]);
  const prefix = `${name}.${pid}.1-`;
  const files = [...Deno.readDirSync(folder)].map((entry) => entry.name).filter((file) => file.startsWith(prefix));
  if (!files.length) throw new Error(`callgrind wrote no dump of ${name} (process ${pid}) into ${folder}.`);
  const totals = new Map<string, number>();
  let main = NaN;
  for (const file of files) {
    const text = await Deno.readTextFile(join(folder, file));
    const events = /^events: (.+)$/m.exec(text)?.[1].split(" ");
    // A thread that ran nothing while counted has a total of 0 alone (and maybe no events line).
    const counts = /^(?:summary|totals): (.+)$/m.exec(text)?.[1].split(" ").map(Number) ?? [];
    for (const [index, event] of (events ?? []).entries()) {
      totals.set(event, (totals.get(event) ?? 0) + (counts[index] ?? 0));
    }
    if (file === `${prefix}01`) main = events ? counts[events.indexOf("Ir")] : 0;
  }
  const { mainByOrigin, mainByCallingOrigin } = files.includes(`${prefix}01`)
    ? await mainThreadOrigins(join(folder, `${prefix}01`), pid, per)
    : { mainByOrigin: new Map<Origin, OriginCounts>(), mainByCallingOrigin: new Map<Origin, OriginCounts>() };
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

/**
 * The main thread's counts by the origin of its code, divided by `per`: its own, and with the native code's charged
 * to the code that called it. V8's map of its machine code (`--perf-basic-prof`, added under callgrind) says where the
 * code came from; it is removed once read.
 */
async function mainThreadOrigins(
  dump: string,
  pid: number,
  per: number,
): Promise<{ mainByOrigin: Map<Origin, OriginCounts>; mainByCallingOrigin: Map<Origin, OriginCounts> }> {
  const codeMap = `/tmp/perf-${pid}.map`;
  const found = await Deno.stat(codeMap).then(() => true, () => false);
  const perObject = (counts: Map<Origin, OriginCounts>) => {
    const into = new Map<Origin, OriginCounts>();
    for (const [origin, { instructions, instructionMisses }] of counts) {
      into.set(origin, { instructions: instructions / per, instructionMisses: instructionMisses / per });
    }
    return into;
  };
  const { own, calling } = await originSplits(dump, found ? codeMap : undefined);
  const origins = { mainByOrigin: perObject(own), mainByCallingOrigin: perObject(calling) };
  await Deno.remove(codeMap).catch(() => {});
  return origins;
}
