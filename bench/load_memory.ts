/**
 * What loading an operator's bundle costs, read as the process ends: `kopf --version` of the
 * `kopf build --minify` bundle of bench/fixtures/compare_create.ts, started as a new container
 * starts the image (`--no-code-cache`, the operator's V8 flags, the image's environment, an empty
 * `DENO_DIR`; all permissions, which the probe needs), against `bare`, a script that prints one line.
 * Most of an idle operator's RSS above a bare process is there already (docs/performance/memory.md, "The
 * body in a comment, Node's modules imported by the entry"), and a process that ends at once can be
 * sampled many times: its medians are steadier than those of idling operators, for choices of a few
 * hundred KiB.
 *
 * Per run (the contestants take turns): RSS and anonymous RSS, the V8 heap used and the resident
 * pages of the `deno` binary's `.text` and `.rodata` at `unload` (bench/fixtures/load_probe.ts,
 * preloaded). `--before DIR` adds `before`: the bundle that another checkout's `kopf build` makes.
 *
 * Usage: `deno run -A bench/load_memory.ts [--runs 12] [--before DIR]`
 *
 * @module
 */

import { commandLine, usageError } from "./command_line.ts";
import { join } from "node:path";
import { bundle, IMAGE_ENVIRONMENT, OPERATOR_V8_FLAGS } from "../cli/build.ts";
import { elfSections } from "./binary_sections.ts";
import { exitOnSignals } from "./exit_on_signals.ts";
import { median, mib } from "./process_stats.ts";
import { roundOrder } from "./round_order.ts";

const { values } = commandLine({ options: { runs: { type: "string", default: "12" }, before: { type: "string" } } });
const runs = Number(values.runs);
if (!(runs >= 1)) usageError(`--runs takes a number of runs, 1 or more; got ${values.runs}.`);

exitOnSignals();

const folder = await Deno.makeTempDir({ prefix: "kopf-bench-load-memory-" });
const fixture = new URL("./fixtures/compare_create.ts", import.meta.url).href;
const files: Record<string, string> = { bare: join(folder, "bare.js"), bundle: join(folder, "bundle.js") };
await Deno.writeTextFile(files.bare, 'console.log("kopf 0.0.0");\n');
await bundle([fixture], files.bundle, { minify: true });
if (values.before !== undefined) {
  files.before = join(folder, "before.js");
  const built = await new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", "cli/main.ts", "build", "bench/fixtures/compare_create.ts", "--minify", "-o", files.before],
    cwd: values.before,
  }).output();
  if (!built.success) {
    throw new Error(`kopf build of ${values.before} failed: ${new TextDecoder().decode(built.stderr)}`);
  }
}
const names = Object.keys(files);
const sections = JSON.stringify(elfSections(Deno.execPath()).filter((s) => [".text", ".rodata"].includes(s.name)));
const probe = new URL("./fixtures/load_probe.ts", import.meta.url).pathname;

type Read = { rss: number; anonymous: number; heapUsed: number; text: number; rodata: number };
const reads = new Map<string, Read[]>(names.map((name) => [name, []]));
for (let run = 1; run <= runs; run++) {
  for (const name of roundOrder(names, run)) {
    const deno = await Deno.makeTempDir({ prefix: "kopf-bench-deno-dir-" });
    const out = join(folder, `${name}-${run}.json`);
    const args = ["run", "-A", "--no-config", "--no-code-cache", OPERATOR_V8_FLAGS, "--preload", probe, files[name]];
    const ended = await new Deno.Command(Deno.execPath(), {
      args: [...args, "--version"],
      env: {
        ...IMAGE_ENVIRONMENT,
        DENO_DIR: deno,
        DENO_NO_UPDATE_CHECK: "1",
        KOPF_BENCH_LOAD_PROBE: out,
        KOPF_BENCH_SECTIONS: sections,
      },
      stdout: "null",
    }).output();
    await Deno.remove(deno, { recursive: true });
    if (!ended.success) throw new Error(`${name} failed: ${new TextDecoder().decode(ended.stderr)}`);
    reads.get(name)!.push(JSON.parse(await Deno.readTextFile(out)));
  }
}

console.log(`\nAt the end of \`--version\`, MiB; medians of ${runs} run(s) (RSS: the lowest and highest too).\n`);
console.log(`| metric | ${names.join(" | ")} |`);
console.log(`|---|${names.map(() => "--:|").join("")}`);
const rows: [string, keyof Read][] = [
  ["RSS", "rss"],
  ["anonymous", "anonymous"],
  ["V8 heap used", "heapUsed"],
  ["`.text` resident", "text"],
  ["`.rodata` resident", "rodata"],
];
for (const [label, key] of rows) {
  console.log(
    `| ${label} | ${names.map((name) => mib(median(reads.get(name)!.map((read) => read[key])))).join(" | ")} |`,
  );
}
const range = (name: string) => reads.get(name)!.map((read) => read.rss);
console.log(
  `| RSS, lowest-highest | ${
    names.map((name) => `${mib(Math.min(...range(name)))}-${mib(Math.max(...range(name)))}`).join(" | ")
  } |`,
);
await Deno.remove(folder, { recursive: true });
