/**
 * The footprint of one object's cycles: how many distinct functions they run, and how much source those functions
 * span, by file. A cycle that starts with cold caches costs two to three times a warm one, for the code and data it
 * touches rather than the work it does (bench/cycle_cost.ts `--cold`); this counts the code. It runs
 * bench/cycle_cost.ts under Deno's coverage (`deno run --coverage`, V8's precise call counts) for `--objects`
 * objects of one storage and lists the functions called at least once per object on average: the framework's and
 * its npm packages' (LogTape's); the runtime's own JavaScript (`fetch`, streams, timers) is not in Deno's coverage,
 * and the bench's harness is left out.
 *
 * Usage: `deno run -A bench/footprint.ts [--objects 1000] [--only lean|default] [--top 40]`
 *
 * @module
 */

import { commandLine, usageError } from "./command_line.ts";
import { join, relative } from "node:path";
import { fileURLToPath as fromFileUrl } from "node:url";

const { values } = commandLine({
  options: {
    objects: { type: "string", default: "1000" },
    only: { type: "string", default: "lean" },
    top: { type: "string", default: "40" },
  },
});
const objects = Number(values.objects);
if (!Number.isInteger(objects) || objects < 1) {
  usageError(`--objects takes a whole number above 0; got ${values.objects}.`);
}
if (values.only !== "lean" && values.only !== "default") {
  usageError(`--only takes lean or default; got ${values.only}.`);
}
const top = Number(values.top);
if (!Number.isInteger(top) || top < 1) usageError(`--top takes a whole number above 0; got ${values.top}.`);

/** V8's precise coverage of one script, as Deno writes it: each function's first range counts its calls. */
interface ScriptCoverage {
  url: string;
  functions: { functionName: string; ranges: { startOffset: number; endOffset: number; count: number }[] }[];
}

const root = fromFileUrl(new URL("../", import.meta.url));
const folder = await Deno.makeTempDir({ prefix: "kopf-footprint-" });
try {
  const run = await new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "-A",
      `--coverage=${folder}`,
      "bench/cycle_cost.ts",
      "--only",
      values.only,
      "--objects",
      String(objects),
      "--rounds",
      "1",
    ],
    cwd: root,
    stdout: "null",
    stderr: "piped",
  }).output();
  if (!run.success) throw new Error(`bench/cycle_cost.ts failed: ${new TextDecoder().decode(run.stderr)}`);

  const byFile = new Map<string, { functions: number; bytes: number }>();
  let functions = 0;
  let bytes = 0;
  for await (const entry of Deno.readDir(folder)) {
    const coverage = JSON.parse(await Deno.readTextFile(join(folder, entry.name))) as ScriptCoverage;
    const file = coverage.url.startsWith("file:") ? relative(root, fromFileUrl(coverage.url)) : coverage.url;
    // The bench's own harness (its stand-in API client, the objects it makes) is not the framework's path.
    if (file.startsWith("bench/") || file.startsWith("tests/")) continue;
    for (const fn of coverage.functions) {
      const [range] = fn.ranges;
      if (!range || range.count < objects) continue;
      const size = range.endOffset - range.startOffset;
      const sum = byFile.get(file) ?? { functions: 0, bytes: 0 };
      sum.functions++;
      sum.bytes += size;
      byFile.set(file, sum);
      functions++;
      bytes += size;
    }
  }
  console.log(
    `${values.only}: ${functions} functions called at least once per object (${objects} objects), ` +
      `${(bytes / 1024).toFixed(1)} KiB of their source\n`,
  );
  console.log("| functions | KiB of source | file |\n|--:|--:|---|");
  const rows = [...byFile].sort(([, a], [, b]) => b.functions - a.functions || b.bytes - a.bytes).slice(0, top);
  for (const [file, sum] of rows) console.log(`| ${sum.functions} | ${(sum.bytes / 1024).toFixed(1)} | ${file} |`);
} finally {
  await Deno.remove(folder, { recursive: true });
}
