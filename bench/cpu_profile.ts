/**
 * Sums V8 CPU profiles (`deno run --cpu-prof`, or `KOPF_BENCH_CPU_PROF=DIR` for bench/compare.ts)
 * by function: self time in ms and as a share of the busy time (idle and the profiler's own
 * `(program)` left out), per object when `--objects N` is given; the top `--top` functions.
 * With several folders, their columns side by side (the rows of the first folder's top).
 *
 * With `--after SECONDS`, only the samples taken that long after the process started (bench/compare.ts
 * starts its burst 11 s after the spawn with `--idle 1`: `--after 11` leaves the start-up out;
 * bench/operator_path.ts adds its objects about 2.5 s after it: `--after 2`, since a later cut
 * leaves out most of a run whose objects all come at once). With `--until SECONDS`, only those taken
 * before then (a pre-created run of bench/compare.ts idles 10 s after its last object: the cut leaves
 * that idling and its collection out).
 * With `--inclusive`, total instead of self time (a function's callees included); with `--groups`,
 * self time by where the code comes from (our src/, node_modules, each Deno extension, V8's own).
 * With `--callers TEXT`, instead: the self time of the functions whose label contains TEXT, by the
 * chain of their callers (`--depth` of them); with `--lines TEXT`, by source line (sampled ticks).
 *
 * Usage: `deno run -A bench/cpu_profile.ts [--top 40] [--objects 500] [--callers TEXT [--depth 3]]
 * [--lines TEXT] [--after 11] [--until 3] [--inclusive | --groups] DIR…`
 *
 * @module
 */

import { commandLine } from "./command_line.ts";
import { basename, join } from "node:path";
import { group as groupOf, label as labelOf } from "./profile_labels.ts";

interface Node {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
  positionTicks?: { line: number; ticks: number }[];
}
interface Profile {
  startTime: number;
  nodes: Node[];
  samples: number[];
  timeDeltas: number[];
}

const { values, positionals } = commandLine({
  options: {
    top: { type: "string", default: "40" },
    objects: { type: "string" },
    callers: { type: "string" },
    lines: { type: "string" },
    depth: { type: "string", default: "3" },
    after: { type: "string", default: "0" },
    until: { type: "string", default: "Infinity" },
    inclusive: { type: "boolean", default: false },
    groups: { type: "boolean", default: false },
  },
  allowPositionals: true,
});
const top = Number(values.top);
const objects = values.objects ? Number(values.objects) : undefined;
const LEFT_OUT = new Set(["(idle)", "(program)"]);

/**
 * Self time (µs) summed over every profile in a folder: by function; or, with `--callers`, by the
 * caller chain of the matching functions; or, with `--lines`, by their source line.
 */
async function selfTimes(dir: string): Promise<Map<string, number>> {
  const times = new Map<string, number>();
  const depth = Number(values.depth);
  for await (const entry of Deno.readDir(dir)) {
    if (!entry.name.endsWith(".cpuprofile")) continue;
    const profile = JSON.parse(await Deno.readTextFile(join(dir, entry.name))) as Profile;
    const byId = new Map(profile.nodes.map((node) => [node.id, node]));
    const parents = new Map<number, number>();
    for (const node of profile.nodes) for (const child of node.children ?? []) parents.set(child, node.id);
    const keyOf = new Map<number, string | null>();
    const stackOf = new Map<number, string[]>();
    if (values.inclusive) {
      for (const node of profile.nodes) {
        const names = new Set<string>();
        for (let id: number | undefined = node.id; id !== undefined; id = parents.get(id)) {
          names.add(labelOf(byId.get(id)!.callFrame));
        }
        stackOf.set(node.id, [...names]);
      }
    }
    for (const node of profile.nodes) {
      const name = values.groups ? groupOf(node.callFrame) : labelOf(node.callFrame);
      if (values.callers !== undefined) {
        if (!name.includes(values.callers)) {
          keyOf.set(node.id, null);
          continue;
        }
        const chain = [];
        for (let id = parents.get(node.id), n = 0; id !== undefined && n < depth; id = parents.get(id), n++) {
          chain.push(labelOf(byId.get(id)!.callFrame));
        }
        keyOf.set(node.id, `${name} <- ${chain.join(" <- ")}`);
      } else {
        keyOf.set(node.id, name);
      }
    }
    if (values.lines !== undefined) {
      // Ticks by line; the time of a tick is the folder's mean sample interval.
      const interval = median(profile.timeDeltas);
      for (const node of profile.nodes) {
        const name = labelOf(node.callFrame);
        if (!name.includes(values.lines)) continue;
        for (const { line, ticks } of node.positionTicks ?? []) {
          const key = `${name} line ${line}`;
          times.set(key, (times.get(key) ?? 0) + ticks * interval);
        }
      }
      continue;
    }
    // Samples are counted at the median interval rather than by their own deltas: on a shared
    // machine, a sample taken after the process was descheduled carries that wait as its delta.
    const interval = median(profile.timeDeltas);
    const after = Number(values.after) * 1e6;
    const until = Number(values.until) * 1e6;
    let at = 0;
    profile.samples.forEach((id, index) => {
      at += profile.timeDeltas[index] ?? 0;
      if (at < after || at >= until) return;
      for (const name of stackOf.get(id) ?? [keyOf.get(id)]) {
        if (name) times.set(name, (times.get(name) ?? 0) + interval);
      }
    });
  }
  for (const name of LEFT_OUT) times.delete(name);
  return times;
}

function median(values: number[]): number {
  const sorted = values.filter((value) => value > 0).sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? 0;
}

/** Where a function's code comes from. */
const columns = await Promise.all(positionals.map(selfTimes));
// With --inclusive, the busy time is the root's (every sample has it in its stack).
const busy = columns.map((times) =>
  values.inclusive ? times.get("(root)") ?? 0 : [...times.values()].reduce((sum, value) => sum + value, 0)
);
const rows = [...columns[0].entries()].sort((a, b) => b[1] - a[1]).slice(0, top).map(([name]) => name);
const unit = objects ? "ms/object" : "ms";
const cell = (times: Map<string, number>, total: number, name: string) => {
  const value = times.get(name) ?? 0;
  const ms = value / 1000 / (objects ?? 1);
  return `${ms.toFixed(objects ? 3 : 0).padStart(8)} ${(100 * value / total).toFixed(1).padStart(5)}%`;
};
console.log(positionals.map((dir) => basename(dir).padStart(15)).join("") + `   (self ${unit}, share of busy)`);
console.log(
  busy.map((total) => `${(total / 1000 / (objects ?? 1)).toFixed(objects ? 3 : 0).padStart(8)} busy `).join(""),
);
for (const name of rows) console.log(columns.map((times, i) => cell(times, busy[i], name)).join(" ") + "  " + name);
