/**
 * What bench/operator_path.ts prints once its rounds are over: a Markdown table of the medians of the rounds, a row
 * per metric (those of `--compilations`, `--promises` and `--instructions` when asked for) and a column per
 * contestant, then the pairs it compares; each pair's CPU per object compared round by round; and with `--threads`,
 * the CPU per object by thread name.
 *
 * @module
 */

import type { ContestantName } from "./compare_contestants.ts";
import { median, pairedRatios } from "./process_stats.ts";
import { type Origin, type OriginCounts, ORIGINS } from "./callgrind_origins.ts";
import type { PathOptions } from "./operator_path_options.ts";
import type { Measured } from "./operator_path_round.ts";

/** What the tables show: each contestant's rounds, and what they ran under. */
export interface PathReport {
  readonly names: readonly ContestantName[];
  /** Each contestant's rounds, in the order they ran. */
  readonly measured: ReadonlyMap<ContestantName, readonly Measured[]>;
  readonly options: PathOptions;
  /** The scripted server's wait before it answers a write, ms. */
  readonly latency: number;
  /** The scripted server's wait from a write's answer to its watch event, ms; `undefined`: the event goes first. */
  readonly eventDelay: number | undefined;
}

/** A row of the table: its label, its value in a round, and the decimals it is printed with. */
type Row = [string, (m: Measured) => number, number];

const ROWS: readonly Row[] = [
  ["objects/s", (m) => m.rate, 0],
  ["CPU per object, ms", (m) => m.cpu, 3],
  ["… of it in the kernel (system time)", (m) => m.system, 3],
  ["… of the main thread", (m) => m.main, 3],
  ["… of the other threads", (m) => m.others, 3],
  ["wake-ups of the main thread per object", (m) => m.wakeups, 2],
  ["writes per object", (m) => m.writes, 2],
  ["from an object's ADDED event to its first write, median, ms", (m) => m.waitMedian, 1],
  ["… 99th percentile, ms", (m) => m.waitP99, 1],
];

const COMPILATION_ROWS: readonly Row[] = [
  ["functions optimised in the process's life (Maglev, TurboFan)", (m) => m.compilations, 0],
  ["… their compile time per object, ms", (m) => m.compileMs, 3],
];

const PROMISE_ROWS: readonly Row[] = [["promises made per object", (m) => m.promises, 1]];

const INSTRUCTION_ROWS: readonly Row[] = [
  ["machine instructions per object, thousands (callgrind)", (m) => m.instructions.instructions, 0],
  ["… of the main thread", (m) => m.instructions.mainInstructions, 0],
  ["… misses of the L1 instruction cache", (m) => m.instructions.instructionMisses, 1],
  ["… misses of the L1 data cache", (m) => m.instructions.dataMisses, 1],
  ["… misses of the last-level cache", (m) => m.instructions.lastLevelMisses, 2],
  ["… mispredicted branches", (m) => m.instructions.mispredicted, 1],
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
];

/** The pairs the table compares, where both ran: ours and lean against the raw clients, the floor, the peers, before. */
const RATIOS = [
  ["ours", "raw2"],
  ["lean", "raw"],
  ["lean", "floor"],
  ["floor", "raw"],
  ["lean", "cr"],
  ["lean", "rs"],
  ["ours", "before"],
  ["lean", "before"],
] as const;

/** Prints the table of the medians, the pairs compared round by round, and with `--threads` the threads' table. */
export function printReport(report: PathReport): void {
  const { names, options } = report;
  const ratios = RATIOS.filter(([a, b]) => names.includes(a) && names.includes(b));
  printMedians(report, ratios);
  // The rounds run the contestants side by side: their CPU compared round by round, as a before/after reads best.
  if (options.rounds > 1 && ratios.length) printRoundByRound(report, ratios);
  if (options.threads) printThreads(report);
}

/** The table: a row per metric, the median of the rounds per contestant and the ratios of these medians. */
function printMedians(report: PathReport, ratios: readonly (readonly [ContestantName, ContestantName])[]): void {
  const { names, measured, options } = report;
  const rows = [
    ...ROWS,
    ...(options.compilations ? COMPILATION_ROWS : []),
    ...(options.promises ? PROMISE_ROWS : []),
    ...(options.instructions ? INSTRUCTION_ROWS : []),
  ];
  console.log(
    `\n${options.objects} objects added ${options.rate ? `at ${options.rate} per second` : "at once"}${
      options.warm ? ` after ${options.warm} unmeasured` : ""
    }, medians of ${options.rounds} round(s), against bench/scripted_api.ts` +
      ` (writes answered after ${report.latency} ms; their watch events ${
        report.eventDelay === undefined ? "before the answers" : `${report.eventDelay} ms after them`
      }).\n`,
  );
  console.log(`| metric | ${names.join(" | ")} | ${ratios.map(([a, b]) => `${a}/${b}`).join(" | ")} |`);
  console.log(`|---|${names.map(() => "--:|").join("")}${ratios.map(() => "--:|").join("")}`);
  for (const [label, pick, digits] of rows) {
    const value = (name: ContestantName) => median(measured.get(name)!.map(pick));
    const shown = (number: number, places: number) => Number.isFinite(number) ? number.toFixed(places) : "–";
    const cells = names.map((name) => shown(value(name), digits));
    const shares = ratios.map(([a, b]) => shown(value(a) / value(b), 2));
    console.log(`| ${label} | ${cells.join(" | ")} | ${shares.join(" | ")} |`);
  }
}

/** Each pair's CPU per object compared round by round: the median of the rounds' ratios, the lowest, the highest. */
function printRoundByRound(report: PathReport, ratios: readonly (readonly [ContestantName, ContestantName])[]): void {
  const { measured, options } = report;
  console.log(`\nCPU per object compared round by round (${options.rounds} rounds):\n`);
  console.log("| ratio | median of the rounds' ratios | lowest | highest |\n|---|--:|--:|--:|");
  for (const [a, b] of ratios) {
    const cpu = (name: ContestantName) => measured.get(name)!.map((m) => m.cpu);
    const { median, lowest, highest } = pairedRatios(cpu(a), cpu(b));
    console.log(`| ${a}/${b} | ${median.toFixed(3)} | ${lowest.toFixed(3)} | ${highest.toFixed(3)} |`);
  }
}

/** With `--threads`: CPU per object by thread name, the mean over the rounds. */
function printThreads({ names, measured, options }: PathReport): void {
  const sums = new Map(names.map((name) => [name, threadSums(measured.get(name)!)]));
  const threadNames = [...new Set([...sums.values()].flatMap((sum) => [...sum.keys()]))].sort();
  console.log(`\nCPU per object by thread name, ms (means of ${options.rounds} round(s)):\n`);
  console.log(`| thread | ${names.join(" | ")} |`);
  console.log(`|---|${names.map(() => "--:|").join("")}`);
  for (const thread of threadNames) {
    const cells = names.map((name) =>
      ((sums.get(name)!.get(thread) ?? 0) * 1000 / options.objects / options.rounds).toFixed(3)
    );
    console.log(`| ${thread} | ${cells.join(" | ")} |`);
  }
}

/** CPU seconds by thread name, summed over a contestant's rounds. */
function threadSums(rounds: readonly Measured[]): Map<string, number> {
  const sums = new Map<string, number>();
  for (const { byThread } of rounds) {
    for (const [thread, seconds] of byThread) sums.set(thread, (sums.get(thread) ?? 0) + seconds);
  }
  return sums;
}

/** A row per origin of the code: one count of a split of the main thread's (`--instructions`). */
function originRows(
  label: string,
  split: (m: Measured) => Map<Origin, OriginCounts>,
  count: keyof OriginCounts,
  digits: number,
): Row[] {
  return ORIGINS.map((
    origin,
  ) => [`${label}: ${origin}`, (m: Measured) => split(m).get(origin)?.[count] ?? NaN, digits]);
}
