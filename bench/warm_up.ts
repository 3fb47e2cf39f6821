/**
 * The warm-up: a contestant's CPU per object as it handles its first objects and later ones, at a
 * steady rate against the scripted API server (bench/scripted_api.ts), so that each window of
 * objects gets the same pace. A fresh process does more than its steady work for its first objects:
 * V8 compiles (and optimises) the functions on their path as they get hot, and that is done once per
 * process, whatever the number of objects. bench/compare.ts's bursts of 500-1,000 objects carry it;
 * an operator that runs for days does not.
 *
 * Per round and contestant (bench/compare.ts's Deno ones and controller-runtime's reconciler `cr`,
 * started as it starts them, with its fixture): the process started and its watch open, 2 s of
 * rest, then `--objects` objects at `--rate` per second; the process's CPU is read at the boundaries
 * of `--windows` (counts of objects added), and each window's CPU per object printed, medians of
 * the rounds.
 *
 * Usage: `deno run -A bench/warm_up.ts [--objects 4000] [--rate 250] [--windows 250,500,1000,2000]
 * [--rounds 3] [--only ours,lean,raw,raw2,cr]`
 *
 * @module
 */

import { commandLine, usageError } from "./command_line.ts";
import { join } from "node:path";
import type { ContestantName } from "./compare_contestants.ts";
import { cpuSeconds, median } from "./process_stats.ts";
import { ScriptedApi, scriptedContestants } from "./scripted_api.ts";
import { roundOrder } from "./round_order.ts";
import { preparePeers } from "./compare_peers.ts";

const { values } = commandLine({
  options: {
    objects: { type: "string", default: "4000" },
    rate: { type: "string", default: "250" },
    windows: { type: "string", default: "250,500,1000,2000" },
    rounds: { type: "string", default: "3" },
    only: { type: "string", default: "ours,lean,raw,raw2" },
  },
});
const objects = Number(values.objects);
const rate = Number(values.rate);
const rounds = Number(values.rounds);
const requested = values.only.split(",") as ContestantName[];
const bounds = [0, ...values.windows.split(",").map(Number).filter((bound) => bound < objects), objects];
if (
  !(objects >= 1 && rate > 0 && rounds >= 1) || bounds.some((bound, index) => index > 0 && bound <= bounds[index - 1])
) {
  throw new Error("--objects, --rate and --rounds take positive numbers; --windows, increasing counts of objects.");
}
const unknown = requested.filter((name) => !["ours", "lean", "raw", "raw2", "cr", "rs"].includes(name));
if (unknown.length) usageError(`--only takes ours, lean, raw, raw2, cr and rs; not ${unknown.join(", ")}.`);
const { names, ...built } = await preparePeers(requested, "", new URL("../", import.meta.url));

await using api = await ScriptedApi.start();
const logs = await Deno.makeTempDir({ prefix: "kopf-warm-up-" });
const all = await scriptedContestants(api, logs, undefined, built);

/** Per contestant, per window: CPU per object in ms, one value per round. */
const measured = new Map<ContestantName, number[][]>(names.map((name) => [name, bounds.slice(1).map(() => [])]));
for (let round = 1; round <= rounds; round++) {
  const order = roundOrder(names, round);
  for (const name of order) {
    const namespace = `warm-${name}-${round}`;
    api.serve(namespace);
    const started = all[name].start("create", namespace, join(logs, `${name}-${round}.log`));
    try {
      await started.guard(api.watched, "its watch to open");
      await new Promise((resolve) => setTimeout(resolve, 2000));
      const cpu = await addObjects(started.pid);
      await started.guard(api.untilDone(objects), "every object handled");
      // The last window ends when its objects are handled, not when they are added.
      cpu.push(await cpuSeconds(started.pid));
      const perObject = bounds.slice(1).map((bound, index) =>
        (cpu[index + 1] - cpu[index]) * 1000 / (bound - bounds[index])
      );
      perObject.forEach((ms, index) => measured.get(name)![index].push(ms));
      console.error(
        `[round ${round}, ${name}] ms per object by window: ${perObject.map((ms) => ms.toFixed(3)).join(", ")}`,
      );
    } finally {
      await started.stop();
    }
  }
}

console.log(`\n${objects} objects at ${rate} per second, medians of ${rounds} round(s): CPU per object, ms.\n`);
console.log(`| objects | ${names.join(" | ")} |`);
console.log(`|---|${names.map(() => "--:|").join("")}`);
bounds.slice(1).forEach((bound, index) => {
  const cells = names.map((name) => median(measured.get(name)![index]).toFixed(3));
  console.log(`| ${bounds[index] + 1}-${bound} | ${cells.join(" | ")} |`);
});

/**
 * Adds the objects at the rate, in ticks of 20 ms; returns the process's CPU seconds at the start and
 * at each window's boundary but the last (read when that window's last object is added).
 */
async function addObjects(pid: number): Promise<number[]> {
  const cpu = [await cpuSeconds(pid)];
  const begun = performance.now();
  let window = 1;
  for (let index = 0; index < objects;) {
    const due = Math.min(objects, Math.floor((performance.now() - begun) / 1000 * rate) + 1);
    for (; index < due; index++) api.add(`kex-${index}`, { field: "value" });
    while (window < bounds.length - 1 && index >= bounds[window]) {
      cpu.push(await cpuSeconds(pid));
      window++;
    }
    if (index < objects) await new Promise((resolve) => setTimeout(resolve, 20));
  }
  return cpu;
}
