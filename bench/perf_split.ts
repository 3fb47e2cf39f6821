/**
 * Splits the main thread's CPU, as `perf` sampled it, between JavaScript and what runs outside it:
 * each sample of a `perf record -g` file (bench/operator_path.ts's `--perf DIR` writes one per
 * contestant and round) goes to the first frame of ours from the leaf up -- a module of
 * `src/`, `cli/` or `bench/`, or an npm package -- else to "JavaScript of the runtime only" when
 * the stack holds JavaScript of Deno's own (`fetch`, streams, timers) and to "no JavaScript frame"
 * when it holds none (the event loop, the runtime's I/O, V8 outside any script). V8's CPU profiles
 * (bench/cpu_profile.ts) cannot tell the last two apart: they count native work beneath the event
 * loop as idle.
 *
 * The contestant must have run with V8's perf map and its interpreted frames on the native stack
 * (`--perf` sets both), and the maps (`/tmp/perf-PID.map`) must still be there when this reads the
 * files. With `--objects N`, ms per object; otherwise the share of the main thread's samples.
 *
 * `--by function` names the function of ours as well (`src/api/client.ts #send`), for what a
 * module's row is made of; `--by folder` sums the modules of each folder (`src/api`, `src/reactor`,
 * ...), as bench/cpu_profile.ts's `--groups` does. `--inclusive` counts each sample once for every
 * module (or function) of ours on its stack, not only the first from the leaf: what runs beneath it
 * synchronously, callees and the runtime's code they call included (not what it awaits: that
 * resumes on a stack of its own). Rows then overlap and do not add up to "all".
 *
 * Usage: `deno run -A bench/perf_split.ts [--objects N] [--top 30] [--by module|function|folder]
 * [--inclusive] FILE.data…` (columns side by side).
 *
 * @module
 */

import { commandLine, usageError } from "./command_line.ts";
import { basename } from "node:path";

const { values, positionals } = commandLine({
  options: {
    objects: { type: "string" },
    top: { type: "string", default: "30" },
    by: { type: "string", default: "module" },
    inclusive: { type: "boolean", default: false },
  },
  allowPositionals: true,
});
if (!positionals.length) usageError("Name at least one file that `perf record` wrote.");
const objects = values.objects === undefined ? undefined : Number(values.objects);
if (objects !== undefined && !(objects > 0)) usageError(`--objects takes a count above 0; got ${values.objects}.`);
const top = Number(values.top);
if (!Number.isInteger(top) || top < 1) usageError(`--top takes a whole number above 0; got ${values.top}.`);
if (!["module", "function", "folder"].includes(values.by)) {
  usageError(`--by takes module, function or folder; got ${values.by}.`);
}
const by = values.by as "module" | "function" | "folder";
const inclusive = values.inclusive;

const NO_JS = "no JavaScript frame";
const RUNTIME_JS = "JavaScript of the runtime only";

/** Our modules and npm packages (the last `node_modules` of the path), as V8 names their functions in the perf map. */
const OURS = /file:\/\/\/\S*?\/((?:src|cli|bench)\/[^\s:]+)|.*\/node_modules\/((?:@[^/\s]+\/)?[^/\s]+)/;

/** A JavaScript frame's function name: `JS:<marker>name url…`, the marker (`*`, `~`, `^`, `+'`) being V8's tier. */
const FUNCTION = /\bJS:[*~^+']*(.*?)\s+\S+:\d+:\d+\s*$/;

/** Where a frame of ours goes (its module, its module and function, or its folder); `undefined` if not ours. */
function keyOf(frame: string): string | undefined {
  const match = frame.match(OURS);
  if (!match) return undefined;
  const module = match[1] ?? match[2];
  if (by === "module") return module;
  if (by === "folder") return match[1] ? module.replace(/^(src\/[^/]+|cli|bench)\/.*$/, "$1") : module;
  const name = frame.match(FUNCTION)?.[1]?.trim();
  return `${module} ${name || "(anonymous)"}`;
}

/** Nanoseconds of the main thread's samples, by where they go (see the module's description), and in all. */
async function split(file: string): Promise<{ sums: Map<string, number>; total: number }> {
  const { success, stdout, stderr } = await new Deno.Command("perf", {
    args: ["script", "-i", file, "-F", "pid,tid,period,ip,sym"],
    stdout: "piped",
    stderr: "piped",
  }).output();
  if (!success) throw new Error(`perf script -i ${file} failed: ${new TextDecoder().decode(stderr).trim()}`);
  const sums = new Map<string, number>();
  let total = 0;
  for (const sample of new TextDecoder().decode(stdout).split("\n\n")) {
    const [head, ...frames] = sample.split("\n").filter((line) => line.trim());
    // `PID/TID PERIOD`: the main thread's samples only (its thread id is the process id).
    const header = head?.trim().match(/^(\d+)\/(\d+)\s+(\d+)/);
    if (!header || header[1] !== header[2]) continue;
    const period = Number(header[3]);
    total += period;
    const found = new Set<string>();
    let javascript = false;
    for (const frame of frames) {
      // V8 names JavaScript frames in its perf map `JS:<marker>name url:line:column`.
      if (!/\bJS:/.test(frame)) continue;
      javascript = true;
      const key = keyOf(frame);
      if (key === undefined) continue;
      found.add(key);
      if (!inclusive) break;
    }
    if (!found.size) found.add(javascript ? RUNTIME_JS : NO_JS);
    for (const where of found) sums.set(where, (sums.get(where) ?? 0) + period);
  }
  return { sums, total };
}

const splits = await Promise.all(positionals.map(split));
const columns = splits.map(({ sums }) => sums);
const totals = splits.map(({ total }) => total);
const cell = (sums: Map<string, number>, total: number, key: string) => {
  const ns = sums.get(key) ?? 0;
  const shown = objects === undefined ? `${(ns / total * 100).toFixed(1)}%` : (ns / 1e6 / objects).toFixed(3);
  return shown.padStart(9);
};
const keys = new Map<string, number>();
for (const sums of columns) for (const [key, ns] of sums) keys.set(key, (keys.get(key) ?? 0) + ns);
const fixed = [NO_JS, RUNTIME_JS];
const rest = [...keys].filter(([key]) => !fixed.includes(key)).sort((a, b) => b[1] - a[1]).slice(0, top);

const unit = objects === undefined ? "share of the main thread's samples" : "main thread, ms per object";
console.log(positionals.map((file) => basename(file, ".data").padStart(18)).join("") + `   (${unit})`);
console.log(
  totals.map((ns) =>
    (objects === undefined ? `${(ns / 1e6).toFixed(0)} ms` : (ns / 1e6 / objects).toFixed(3))
      .padStart(18)
  ).join("") + "  all",
);
for (const key of [...fixed, ...rest.map(([key]) => key)]) {
  console.log(columns.map((sums, index) => cell(sums, totals[index], key).padStart(18)).join("") + "  " + key);
}
