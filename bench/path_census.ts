/**
 * How much code one object's path runs, counted rather than timed: from V8's precise coverage of a
 * contestant (`KOPF_BENCH_COVERAGE=DIR` for bench/operator_path.ts or bench/compare.ts writes each
 * Deno contestant's into `DIR/<name>`), the functions that ran at least `--min` times per object
 * (0.9 by default: the path every object takes), how often they ran and how much source they span,
 * by origin (our `src/<folder>`, a package, a fixture), by file (`--by file`) or by function
 * (`--by function`, with `--match TEXT` to keep the rows whose file or name contains it). A fresh
 * process runs each such function unoptimised at first and compiles it as the objects come, so the
 * count is what its warm-up costs grow with; the counts do not vary between runs, unlike times.
 * "Run per object" weighs each block of V8's block coverage by its length: the source bytes one object's
 * path runs (a loop's body as often as it turns, a nested function by its own count), the closest count
 * to the work an unoptimised function does; rows are sorted by it.
 * Deno's own extensions (`ext:`) are not in V8's coverage of a script and are left out.
 *
 * Usage: `deno run -A bench/path_census.ts --objects N [--min 0.9] [--by origin|file|function]
 * [--match TEXT] DIR…` (one column group per folder, e.g. `/tmp/cov/lean /tmp/cov/floor`).
 *
 * @module
 */

import { basename } from "node:path";
import { commandLine, usageError } from "./command_line.ts";
import { group } from "./profile_labels.ts";
import { bytesRun, type ScriptCoverage } from "./bytes_run.ts";

/** One row of a census: functions on the path, their calls per object, their source in bytes, the bytes run per object. */
interface Tally {
  functions: number;
  calls: number;
  bytes: number;
  run: number;
}

const TOTAL = "in all";

const { values, positionals } = commandLine({
  options: {
    objects: { type: "string" },
    min: { type: "string", default: "0.9" },
    by: { type: "string", default: "origin" },
    match: { type: "string" },
  },
  allowPositionals: true,
});
const objects = Number(values.objects);
if (!(objects > 0)) usageError(`--objects takes the number of objects the run handled; got ${values.objects}.`);
const min = Number(values.min);
if (!(min > 0)) usageError(`--min takes calls per object above 0; got ${values.min}.`);
if (!["origin", "file", "function"].includes(values.by)) {
  usageError(`--by takes origin, file or function; got ${values.by}.`);
}
if (positionals.length === 0) usageError("Name at least one folder of V8 coverage (KOPF_BENCH_COVERAGE=DIR/<name>).");

const censuses = positionals.map((folder) => census(folder));
const keys = [...new Set(censuses.flatMap((one) => [...one.keys()]))]
  .filter((key) => key !== TOTAL)
  .sort((a, b) => (censuses[0].get(b)?.run ?? 0) - (censuses[0].get(a)?.run ?? 0));
const header = positionals.map((folder) =>
  `${basename(folder)}: functions | calls per object | bytes | run per object`
);
console.log(`| ${values.by} | ${header.join(" | ")} |`);
console.log(`|---|${positionals.map(() => "--:|--:|--:|--:|").join("")}`);
for (const key of [...keys, TOTAL]) {
  const cells = censuses.map((one) => {
    const tally = one.get(key);
    return tally
      ? `${tally.functions} | ${tally.calls.toFixed(1)} | ${tally.bytes} | ${tally.run.toFixed(0)}`
      : "– | – | – | –";
  });
  console.log(`| ${key} | ${cells.join(" | ")} |`);
}

/** The functions of one folder's coverage files that ran at least `--min` times per object, tallied by `--by`. */
function census(folder: string): Map<string, Tally> {
  const tallies = new Map<string, Tally>();
  const add = (key: string, calls: number, bytes: number, run: number) => {
    const tally = tallies.get(key) ?? { functions: 0, calls: 0, bytes: 0, run: 0 };
    tally.functions++;
    tally.calls += calls;
    tally.bytes += bytes;
    tally.run += run;
    tallies.set(key, tally);
  };
  for (const entry of Deno.readDirSync(folder)) {
    if (!entry.name.endsWith(".json")) continue;
    const script = JSON.parse(Deno.readTextFileSync(`${folder}/${entry.name}`)) as ScriptCoverage;
    if (!script.url.startsWith("file:")) continue;
    const file = script.url.replace(/^.*?\/(src|bench|cli|node_modules)\//, "$1/");
    const run = bytesRun(script);
    for (const [index, fn] of script.functions.entries()) {
      // The first range is the whole function; its count is how often the function ran.
      const whole = fn.ranges[0];
      if (!whole) continue;
      const calls = whole.count / objects;
      if (calls < min) continue;
      const name = fn.functionName || "(anonymous)";
      if (values.match && !file.includes(values.match) && !name.includes(values.match)) continue;
      const bytes = whole.endOffset - whole.startOffset;
      const key = values.by === "function"
        ? `${name} ${file}`
        : values.by === "file"
        ? file
        : group({ functionName: name, url: script.url, lineNumber: 0 });
      add(key, calls, bytes, run[index] / objects);
      add(TOTAL, calls, bytes, run[index] / objects);
    }
  }
  return tallies;
}
