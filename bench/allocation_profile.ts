/**
 * Sums V8 sampling heap profiles (`KOPF_BENCH_HEAP_PROF=DIR` for bench/compare.ts, written by
 * bench/fixtures/allocation_probe.ts) by the function that allocated: bytes per object (with
 * `--objects N`) and the share of all bytes, the top `--top` functions; with several folders,
 * their columns side by side. With `--groups`, by where the code comes from (as
 * bench/cpu_profile.ts's groups); with `--callers TEXT`, the bytes of the functions whose label
 * contains TEXT by the chain of their callers (`--depth` of them).
 *
 * Every allocation counts, also of objects collected since: the garbage collector's CPU follows
 * the bytes allocated, not those kept.
 *
 * Usage: `deno run -A bench/allocation_profile.ts [--top 40] [--objects 1000] [--groups |
 * --callers TEXT [--depth 4]] DIR…`
 *
 * @module
 */

import { commandLine } from "./command_line.ts";
import { basename, join } from "node:path";
import { group, label } from "./profile_labels.ts";

interface Node {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  selfSize: number;
  children: Node[];
}
interface HeapProfile {
  head: Node;
  samples: { size: number; nodeId: number }[];
}

const { values, positionals } = commandLine({
  options: {
    top: { type: "string", default: "40" },
    objects: { type: "string" },
    groups: { type: "boolean", default: false },
    callers: { type: "string" },
    depth: { type: "string", default: "4" },
  },
  allowPositionals: true,
});
const top = Number(values.top);
const objects = values.objects ? Number(values.objects) : undefined;

/** Bytes allocated, summed over every profile in a folder, by the key of the allocating node. */
async function bytesOf(dir: string): Promise<Map<string, number>> {
  const bytes = new Map<string, number>();
  for await (const entry of Deno.readDir(dir)) {
    if (!entry.name.endsWith(".heapprofile")) continue;
    const profile = JSON.parse(await Deno.readTextFile(join(dir, entry.name))) as HeapProfile;
    const visit = (node: Node, stack: string[]) => {
      const name = values.groups ? group(node.callFrame) : label(node.callFrame);
      const here = [...stack, name];
      let key: string | null = name;
      if (values.callers !== undefined) {
        key = name.includes(values.callers) ? here.slice(-1 - Number(values.depth)).reverse().join(" ← ") : null;
      }
      if (key !== null && node.selfSize > 0) bytes.set(key, (bytes.get(key) ?? 0) + node.selfSize);
      for (const child of node.children) visit(child, here);
    };
    visit(profile.head, []);
  }
  return bytes;
}

const folders = positionals;
if (folders.length === 0) {
  console.error("Give one or more folders of .heapprofile files.");
  Deno.exit(2);
}
const columns = await Promise.all(folders.map(bytesOf));
const totals = columns.map((column) => [...column.values()].reduce((a, b) => a + b, 0));
const unit = objects ? `KiB/object` : "KiB";
const scale = (value: number) => value / 1024 / (objects ?? 1);
console.log(folders.map((dir) => basename(dir).padStart(14)).join(" ") + `   (${unit}, share of all bytes)`);
console.log(totals.map((total) => `${scale(total).toFixed(2).padStart(8)} all  `).join(" "));
const rows = [...columns[0].entries()].sort((a, b) => b[1] - a[1]).slice(0, top);
for (const [name] of rows) {
  const cells = columns.map((column, i) => {
    const value = column.get(name) ?? 0;
    return `${scale(value).toFixed(3).padStart(8)} ${(100 * value / totals[i]).toFixed(1).padStart(5)}%`;
  });
  console.log(`${cells.join(" ")}  ${name}`);
}
