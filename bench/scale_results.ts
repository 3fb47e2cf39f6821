/**
 * The figures of bench/scale.ts: one value per layout, column (a contestant at a size) and metric,
 * printed as one Markdown table per layout (a row per metric, a column per contestant×size), the
 * reasons for skipped columns, and the acceptance check: memory per object flat or falling with
 * the count.
 *
 * @module
 */

import { type RequestTotals, writesOf } from "./apiserver_metrics.ts";
import type { ContestantName } from "./compare_contestants.ts";
import { mib } from "./process_stats.ts";

/** The numbers of one run of a contestant at a size. */
export type Column = Map<string, number>;

/** A row of the table: its label, the key of its values, and how a value is printed. */
type Row = readonly [label: string, key: string, format: (value: number) => string];

/** Numbers as printed: seconds, counts, MiB, KiB, ms; per object with two decimals. */
const as = {
  seconds: (value: number) => value.toFixed(2),
  count: (value: number) => value.toFixed(0),
  perObject: (value: number) => value.toFixed(2),
  milliseconds: (value: number) => (value * 1000).toFixed(3),
  mib,
  kib: (value: number) => (value / 1024).toFixed(2),
};

const ROWS: readonly Row[] = [
  ["no objects: spawn → watch of kopfexamples open, s", "idleReady", as.seconds],
  ["no objects: RSS (settled), MiB", "idleRss", as.mib],
  ["start-up: spawn → watch open, s", "ready", as.seconds],
  ["start-up: spawn → all handled, s", "handled", as.seconds],
  ["start-up: objects/s (spawn → all handled)", "rate", as.count],
  ["CPU per object (spawn → all handled), ms", "cpu", as.milliseconds],
  ["CPU per object (spawn → settled), ms", "cpuSettled", as.milliseconds],
  ["start-up: writes to kopfexamples per object", "writes", as.perObject],
  ["start-up: LISTs of kopfexamples (pages)", "lists", as.count],
  ["start-up: WATCHes of kopfexamples", "watches", as.count],
  ["start-up: GETs of kopfexamples", "gets", as.count],
  ["peak RSS (spawn → settled), MiB", "peakRss", as.mib],
  ["RSS with all handled (settled), MiB", "rss", as.mib],
  ["RSS per object above idle, KiB", "rssPerObject", as.kib],
  ["restart with all handled: spawn → watch open, s", "restartReady", as.seconds],
  ["restart: CPU (spawn → settled), s", "restartCpu", as.seconds],
  ["restart: peak RSS (spawn → settled), MiB", "restartPeakRss", as.mib],
  ["restart: writes to kopfexamples (must be 0)", "restartWrites", as.count],
  ["restart: GETs of kopfexamples (must be 0)", "restartGets", as.count],
];

/** What the contestants read or write; other requests during a restart are shown as one sum. */
const OPERATORS_RESOURCES = ["kopfexamples", "customresourcedefinitions", "namespaces", "events"];

/** What bench/scale.ts measured, and what it skipped and why. */
export class ScaleResults {
  readonly #columns = new Map<string, Column>();
  readonly #skipped: string[] = [];

  /** The column of a contestant at a size in a layout, made on first use. */
  column(layout: string, name: ContestantName, size: number): Column {
    const key = `${layout} ${name} ${size}`;
    const column = this.#columns.get(key) ?? new Map();
    this.#columns.set(key, column);
    return column;
  }

  /** Keeps the requests of the first run (per object where that means something) and of the restart. */
  addRequests(column: Column, size: number, startup: RequestTotals, restart: RequestTotals): void {
    const of = (requests: RequestTotals, verb: string) => requests.get(`${verb} kopfexamples`) ?? 0;
    column.set("writes", writesOf(startup, "kopfexamples") / size);
    column.set("lists", of(startup, "LIST"));
    column.set("watches", of(startup, "WATCH"));
    column.set("gets", of(startup, "GET"));
    column.set("restartWrites", writesOf(restart, "kopfexamples"));
    column.set("restartGets", of(restart, "GET"));
    for (const [key, value] of restart) {
      // The API server's own watches (of configmaps, services, …) end at random and count too.
      const shown = OPERATORS_RESOURCES.includes(key.split(" ")[1]) ? `restart ${key}` : "restart other";
      column.set(shown, (column.get(shown) ?? 0) + value);
    }
  }

  /** Notes a column not measured, and why. */
  skip(reason: string): void {
    this.#skipped.push(reason);
  }

  /** Prints one table per layout, the skipped columns and the acceptance check, to stdout. */
  print(layouts: readonly string[], names: readonly ContestantName[], sizes: readonly number[]): void {
    for (const layout of layouts) {
      const columns = names.flatMap((name) => sizes.map((size) => ({ name, size })));
      const header = ["metric", ...columns.map(({ name, size }) => `${name} ${size}`)];
      const values = columns.map(({ name, size }) => this.#columns.get(`${layout} ${name} ${size}`));
      const restartKeys = [...new Set(values.flatMap((column) => [...column?.keys() ?? []]))]
        .filter((key) => key.startsWith("restart "))
        .sort();
      const rows = [
        ...ROWS,
        ...restartKeys.map((key): Row => [
          key === "restart other"
            ? "restart: other requests (also the API server's own)"
            : `restart: ${key.slice(8)} requests`,
          key,
          as.count,
        ]),
      ];
      const lines = [header, header.map((_, index) => index ? "---:" : "---")];
      for (const [label, key, format] of rows) {
        const cells = values.map((column) => {
          if (!column?.size) return "skipped";
          const value = key === "rssPerObject" ? this.#rssPerObject(column) : column.get(key);
          return value === undefined ? (key.startsWith("restart ") ? "0" : "–") : format(value);
        });
        lines.push([label, ...cells]);
      }
      console.log(`\n${layout}:\n`);
      console.log(table(lines));
    }
    if (this.#skipped.length) console.log(`\nSkipped:\n${this.#skipped.map((line) => `- ${line}`).join("\n")}`);
    console.log(`\n${this.#acceptance(layouts, names, sizes).join("\n")}`);
  }

  #rssPerObject(column: Column): number | undefined {
    const rss = column.get("rss");
    const idle = column.get("idleRss");
    const size = column.get("size");
    return rss === undefined || idle === undefined || !size ? undefined : (rss - idle) / size;
  }

  /** Memory per object at the largest size against the one below it: the same or less. */
  #acceptance(layouts: readonly string[], names: readonly ContestantName[], sizes: readonly number[]): string[] {
    const sorted = [...sizes].sort((a, b) => a - b);
    if (sorted.length < 2) return ["Acceptance (memory per object flat or falling): needs two sizes or more."];
    const [smaller, larger] = sorted.slice(-2);
    const lines = [`Acceptance: RSS per object above idle at ${larger} ≤ at ${smaller}:`];
    for (const layout of layouts) {
      for (const name of names) {
        const at = (size: number) => {
          const column = this.#columns.get(`${layout} ${name} ${size}`);
          return column ? this.#rssPerObject(column) : undefined;
        };
        const [low, high] = [at(smaller), at(larger)];
        if (low === undefined || high === undefined) continue;
        const verdict = high <= low ? "holds" : "FAILS (grows with the count)";
        lines.push(`- ${name}, ${layout}: ${as.kib(low)} KiB → ${as.kib(high)} KiB: ${verdict}`);
      }
    }
    return lines;
  }
}

/** Rows of cells as a Markdown table, each column padded to its widest cell. */
function table(lines: string[][]): string {
  const widths = lines[0].map((_, index) => Math.max(...lines.map((line) => line[index].length)));
  return lines.map((line, row) =>
    `| ${
      line.map((cell, index) => {
        if (row === 1) return index ? "-".repeat(widths[index] - 1) + ":" : "-".repeat(widths[index]);
        return index ? cell.padStart(widths[index]) : cell.padEnd(widths[index]);
      }).join(" | ")
    } |`
  ).join("\n");
}
