/**
 * Which pages of the `deno` binary an idle process keeps resident, by ELF section: the code
 * (`.text`) and read-only data (`.rodata`) that it has run or read so far count in its RSS as
 * file-backed pages, the largest part of the difference between the raw client and an idle
 * operator (docs/performance/memory.md, "The body in a comment, Node's modules imported by the entry").
 *
 * Each contestant of bench/compare.ts named in `--only` (`raw`, `raw2`, `ours`, `lean`, `bundle`)
 * starts against the scripted API server (bench/scripted_api.ts) with no objects; `--settle`
 * seconds after its watch opened, the bench reads `/proc/PID/pagemap` for the binary's mappings
 * (the "present" bit needs no privilege) and sums the resident pages per section of the binary's
 * ELF section headers. Medians of `--rounds` (the contestants take turns).
 *
 * Usage: `deno run -A bench/binary_pages.ts [--rounds 3] [--settle 12] [--only raw,bundle]`
 *
 * @module
 */

import { commandLine, usageError } from "./command_line.ts";
import { join } from "node:path";
import type { ContestantName } from "./compare_contestants.ts";
import { exitOnSignals } from "./exit_on_signals.ts";
import { median, mib, rss } from "./process_stats.ts";
import { roundOrder } from "./round_order.ts";
import { ScriptedApi, scriptedContestants } from "./scripted_api.ts";
import { elfSections, residentBySection } from "./binary_sections.ts";

const KNOWN: readonly ContestantName[] = ["raw", "raw2", "ours", "lean", "bundle"];
const { values } = commandLine({
  options: {
    rounds: { type: "string", default: "3" },
    settle: { type: "string", default: "12" },
    only: { type: "string", default: "raw,bundle" },
  },
});
const rounds = Number(values.rounds);
if (!(rounds >= 1)) usageError(`--rounds takes a number of rounds, 1 or more; got ${values.rounds}.`);
const settle = Number(values.settle);
if (!(settle >= 0)) usageError(`--settle takes seconds, 0 or more; got ${values.settle}.`);
const names = values.only.split(",") as ContestantName[];
const unknown = names.filter((name) => !KNOWN.includes(name));
if (unknown.length) usageError(`Unknown contestants in --only: ${unknown.join(", ")}; known: ${KNOWN.join(", ")}.`);

exitOnSignals();

const sections = elfSections(Deno.execPath());
await using api = await ScriptedApi.start();
const logs = await Deno.makeTempDir({ prefix: "kopf-binary-pages-" });
const all = await scriptedContestants(api, logs);

/** Per contestant, per round: resident bytes by section name, and the process's RSS under `RSS`. */
const measured = new Map<ContestantName, Map<string, number>[]>(names.map((name) => [name, []]));
for (let round = 1; round <= rounds; round++) {
  for (const name of roundOrder(names, round)) {
    const namespace = `pages-${name}-${round}`;
    api.serve(namespace);
    const started = all[name].start("create", namespace, join(logs, `${name}-${round}.log`));
    try {
      await started.guard(api.watched, "its watch to open");
      await started.guard(new Promise((resolve) => setTimeout(resolve, settle * 1000)), `${settle} s`);
      const resident = residentBySection(started.pid, sections);
      resident.set("RSS", await rss(started.pid));
      measured.get(name)!.push(resident);
      console.error(
        `[round ${round}] ${name}: .text ${mib(resident.get(".text") ?? 0)} MiB, RSS ${mib(resident.get("RSS") ?? 0)}`,
      );
    } finally {
      await started.stop();
    }
  }
}

type Resident = Map<string, number>;
const medianOf = (name: ContestantName, pick: (resident: Resident) => number) => median(measured.get(name)!.map(pick));
const inSection = (section: string) => (resident: Resident) => resident.get(section) ?? 0;
const inBinary = (resident: Resident) =>
  [...resident].filter(([key]) => key !== "RSS").reduce((sum, [, bytes]) => sum + bytes, 0);
// Sections of 64 KiB or more in someone's median, the largest of the first contestant's first.
const shown = [...new Set([...measured.values()].flat().flatMap((resident) => [...resident.keys()]))]
  .filter((section) => section !== "RSS" && names.some((name) => medianOf(name, inSection(section)) >= 2 ** 16))
  .sort((a, b) => medianOf(names[0], inSection(b)) - medianOf(names[0], inSection(a)));
console.log(
  `\nResident pages of the deno binary (${Deno.execPath()}), MiB, ${settle} s after the watch opened; ` +
    `medians of ${rounds} round(s).\n`,
);
console.log(`| section | ${names.join(" | ")} |`);
console.log(`|---|${names.map(() => "--:|").join("")}`);
const rows: [string, (resident: Resident) => number][] = [
  ...shown.map((section) => [section, inSection(section)] as [string, (resident: Resident) => number]),
  ["all of the binary", inBinary],
  ["RSS", inSection("RSS")],
];
for (const [label, pick] of rows) {
  console.log(`| ${label} | ${names.map((name) => mib(medianOf(name, pick))).join(" | ")} |`);
}
await Deno.remove(logs, { recursive: true });
