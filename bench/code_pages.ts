/**
 * Which of the `deno` binary's pages a process brings into its RSS, and what brought them in: each
 * contestant starts against the scripted API server (bench/scripted_api.ts) under `perf record` of
 * its page faults with their call stacks and V8's map of its JavaScript frames, and after
 * `--seconds` every fault in the binary's code (`.text`) or read-only data (`.rodata`) goes to the
 * innermost JavaScript frame on its stack (for the runtime's own JavaScript, with the nearest frame
 * of the program that called it), or to "no JavaScript" on the main thread or another one.
 *
 * A fault maps the pages around it that the kernel holds (its fault-around window, 64 KiB, or a
 * whole large folio of the page cache), so the bench counts 64 KiB blocks, each for the first fault
 * in it: a path of code that the process runs once costs its blocks for the process's life. What
 * stays resident can be more than the blocks (bench/binary_pages.ts reads it).
 * A block goes to whichever code touched it first; leaving that code out moves the block to the
 * next one that needs it, if any, so a row says what to try, and a side-by-side run what it saved.
 *
 * Contestants: `bare` (a script that prints one line and waits), `raw` (bench/fixtures/raw_operator.ts),
 * `bundle` (the `kopf build --minify` bundle of bench/fixtures/compare_create.ts as the image runs
 * it: its permissions, flags and environment, an empty `DENO_DIR`), `ours` (`kopf run` of the same
 * fixture from source). The bundle's minified names are given back from its kept names.
 *
 * Needs Linux's `perf` (Debian: linux-perf) and the right to trace one's own processes.
 *
 * Usage: `deno run -A bench/code_pages.ts [--only bare,raw,bundle] [--rounds 3] [--seconds 12] [--top 20]`
 *
 * @module
 */

import { commandLine, usageError } from "./command_line.ts";
import { join } from "node:path";
import { bundle, IMAGE_DENO_FLAGS, IMAGE_ENVIRONMENT, OPERATOR_PERMISSIONS, OPERATOR_V8_FLAGS } from "../cli/build.ts";
import { elfSections, type Section } from "./binary_sections.ts";
import { exitOnSignals } from "./exit_on_signals.ts";
import { median } from "./process_stats.ts";
import { roundOrder } from "./round_order.ts";
import { ScriptedApi } from "./scripted_api.ts";

const KNOWN = ["bare", "raw", "bundle", "ours"] as const;
type Name = typeof KNOWN[number];
const { values } = commandLine({
  options: {
    only: { type: "string", default: "bare,raw,bundle" },
    rounds: { type: "string", default: "3" },
    seconds: { type: "string", default: "12" },
    top: { type: "string", default: "20" },
  },
});
const seconds = Number(values.seconds);
if (!(seconds > 0)) usageError(`--seconds takes a number of seconds above 0; got ${values.seconds}.`);
const rounds = Number(values.rounds);
if (!(rounds >= 1)) usageError(`--rounds takes a number of rounds, 1 or more; got ${values.rounds}.`);
const top = Number(values.top);
if (!(top >= 1)) usageError(`--top takes a number of rows, 1 or more; got ${values.top}.`);
const names = values.only.split(",") as Name[];
const unknown = names.filter((name) => !KNOWN.includes(name));
if (unknown.length) usageError(`Unknown contestants in --only: ${unknown.join(", ")}; known: ${KNOWN.join(", ")}.`);
const perfFound = await new Deno.Command("perf", { args: ["--version"], stdout: "null", stderr: "null" }).output()
  .then((output) => output.success, () => false);
if (!perfFound) usageError("This bench needs Linux's perf on the PATH (Debian: apt-get install linux-perf).");

exitOnSignals();

const BLOCK = 64 * 1024;
const PERF_V8_FLAGS = "--perf-basic-prof,--interpreted-frames-native-stack";
const root = new URL("../", import.meta.url).pathname;
const fixture = join(root, "bench/fixtures/compare_create.ts");
const folder = await Deno.makeTempDir({ prefix: "kopf-bench-code-pages-" });
const sections = elfSections(Deno.execPath()).filter((section) => [".text", ".rodata"].includes(section.name));
await using api = await ScriptedApi.start();
const kubeconfig = join(folder, "kubeconfig.json");
const caFile = join(folder, "ca.pem");
await Deno.writeTextFile(kubeconfig, api.kubeconfig());
await Deno.writeTextFile(caFile, api.ca);
const bareScript = join(folder, "bare.js");
await Deno.writeTextFile(bareScript, 'console.log("kopf 0.0.0");\nsetTimeout(() => {}, 1e9);\n');
const bundlePath = join(folder, "compare_create.js");
if (names.includes("bundle")) await bundle([fixture], bundlePath, { minify: true });
const bundleNames = names.includes("bundle")
  ? keptNames(await Deno.readTextFile(bundlePath))
  : new Map<string, string>();

/** The command of a contestant, its folder and environment, serving `namespace`. */
function command(name: Name, namespace: string): { cwd: string; args: string[]; env: Record<string, string> } {
  const quiet = { DENO_NO_UPDATE_CHECK: "1" };
  switch (name) {
    case "bare":
      return {
        cwd: folder,
        args: ["run", "--no-config", "--no-code-cache", `--v8-flags=${PERF_V8_FLAGS}`, bareScript],
        env: { ...quiet, DENO_DIR: Deno.makeTempDirSync({ dir: folder }) },
      };
    case "raw":
      return {
        cwd: root,
        args: ["run", "-A", `--v8-flags=${PERF_V8_FLAGS}`, "bench/fixtures/raw_operator.ts", "create"],
        env: { ...quiet, RAW_SERVER: api.server, RAW_TOKEN: api.token, RAW_CA_FILE: caFile, RAW_NAMESPACE: namespace },
      };
    case "bundle":
      return {
        cwd: folder,
        args: [
          "run",
          ...OPERATOR_PERMISSIONS,
          "--no-config",
          ...IMAGE_DENO_FLAGS,
          `${OPERATOR_V8_FLAGS},${PERF_V8_FLAGS}`,
          bundlePath,
          "run",
          "--standalone",
          "-n",
          namespace,
        ],
        env: {
          ...quiet,
          ...IMAGE_ENVIRONMENT,
          KUBECONFIG: kubeconfig,
          DENO_DIR: Deno.makeTempDirSync({ dir: folder }),
        },
      };
    case "ours":
      return {
        cwd: root,
        args: [
          "run",
          "-A",
          `${OPERATOR_V8_FLAGS},${PERF_V8_FLAGS}`,
          `--config=${join(root, "deno.json")}`,
          "cli/main.ts",
          "run",
          "--standalone",
          "-n",
          namespace,
          fixture,
        ],
        env: { ...quiet, KUBECONFIG: kubeconfig },
      };
  }
}

/** Runs a contestant under `perf record` of its page faults for `--seconds`, and returns the file. */
async function record(name: Name, round: number): Promise<string> {
  const namespace = `code-pages-${name}-${round}`;
  api.serve(namespace);
  const data = join(folder, `${name}-${round}.data`);
  const { cwd, args, env } = command(name, namespace);
  const perf = new Deno.Command("perf", {
    args: [
      "record",
      "-m",
      "1024",
      "-e",
      "page-faults",
      "-c",
      "1",
      "-g",
      "-d",
      "-o",
      data,
      "--",
      Deno.execPath(),
      ...args,
    ],
    cwd,
    env,
    stdin: "null",
    stdout: "null",
    stderr: "piped",
  }).spawn();
  await new Promise((resolve) => setTimeout(resolve, seconds * 1000));
  // perf stops on SIGINT, ends the program it started, and writes its file.
  perf.kill("SIGINT");
  const { stderr } = await perf.output();
  const said = new TextDecoder().decode(stderr);
  if (!said.includes("Captured and wrote")) throw new Error(`perf record of ${name} failed: ${said}`);
  return data;
}

/** A mapping of the `deno` binary in the process: addresses from `start` to `end` hold the file from `offset`. */
interface Mapping {
  start: number;
  end: number;
  offset: number;
}

/** The process's mappings of the `deno` binary, from the file's mmap events. */
async function binaryMappings(data: string): Promise<Mapping[]> {
  const text = await perfScript(["-i", data, "--show-mmap-events", "-F", "comm"]);
  const executable = Deno.realPathSync(Deno.execPath());
  const mappings: Mapping[] = [];
  for (const line of text.split("\n")) {
    const found = line.match(
      /PERF_RECORD_MMAP2 \d+\/\d+: \[0x([0-9a-f]+)\(0x([0-9a-f]+)\) @ (0x[0-9a-f]+|0) .*\]: \S+ (.+)$/,
    );
    if (!found || found[4] !== executable) continue;
    const start = parseInt(found[1], 16);
    mappings.push({ start, end: start + parseInt(found[2], 16), offset: Number(found[3]) });
  }
  if (mappings.length === 0) throw new Error(`${data} holds no mapping of ${executable}: nothing to attribute.`);
  return mappings;
}

async function perfScript(args: string[]): Promise<string> {
  const output = await new Deno.Command("perf", { args: ["script", ...args], stdout: "piped", stderr: "piped" })
    .output();
  const decoder = new TextDecoder();
  if (!output.success) throw new Error(`perf script ${args.join(" ")} failed: ${decoder.decode(output.stderr)}`);
  return decoder.decode(output.stdout);
}

/**
 * The bundle's minified names of functions and classes, by the names that its helper of kept names
 * gives them (`var o=(n,e)=>Ko(n,"name",{value:e,configurable:!0})`, then `o(qm,"operatorIdentity")`).
 * Each chunk of the bundle binds the helper to a name of its own and minifies apart, so a helper is
 * any name called so at least 20 times, and a minified name that stands for several gets them all.
 */
function keptNames(text: string): Map<string, string> {
  const calls = [...text.matchAll(/(?<![\w$.])([\w$]+)\(([\w$]+),"([\w$#]+)"\)/g)];
  const counts = new Map<string, number>();
  for (const [, helper] of calls) counts.set(helper, (counts.get(helper) ?? 0) + 1);
  const kept = new Map<string, Set<string>>();
  for (const [, helper, minified, name] of calls) {
    if (counts.get(helper)! < 20) continue;
    if (!kept.has(minified)) kept.set(minified, new Set());
    kept.get(minified)!.add(name);
  }
  return new Map([...kept].map(([minified, names]) => [minified, [...names].join("|")]));
}

/** A frame of V8's perf map as a row's label: the function and where it is, shortened. */
function frameLabel(symbol: string, kept: Map<string, string>): { label: string; runtime: boolean } {
  const found = symbol.match(/^(?:JS|Builtin|Script|Function|LazyCompile):[~^+*]?(\S*) ?(.*)$/);
  if (!found) return { label: symbol, runtime: false };
  const [, name, place] = found;
  const script = place.replace(/:\d+:\d+$/, "");
  const runtime = script.startsWith("ext:") || script.startsWith("node:") || script.startsWith("v8/");
  // The bundle's body is compiled by the function constructor: its frames name no script.
  const where = script === "" || script === `file://${bundlePath}`
    ? "(the bundle)"
    : script.replace(`file://${root}`, "").replace(`file://${folder}/`, "").replace(/^ext:/, "");
  const shown = kept.get(name) ?? (name || "(top level)");
  return { label: `${shown} ${where}`, runtime };
}

/** Blocks of the binary by section and by what touched them first. */
interface Attribution {
  bySection: Map<string, number>;
  byLabel: Map<string, number>;
}

async function attribute(name: Name, data: string): Promise<Attribution> {
  const mappings = await binaryMappings(data);
  const kept = name === "bundle" ? bundleNames : new Map<string, string>();
  const text = await perfScript(["-i", data, "-F", "comm,tid,ip,sym,dso,addr"]);
  const seen = new Set<number>();
  const bySection = new Map<string, number>();
  const byLabel = new Map<string, number>();
  let mainThread: string | undefined;
  for (const sample of text.split("\n\n")) {
    const lines = sample.trim().split("\n");
    const header = lines[0]?.trim().match(/^(.+?)\s+(\d+)\s+([0-9a-f]+)\s/);
    if (!header) continue;
    const [, thread, tid, hex] = header;
    mainThread ??= tid;
    const address = parseInt(hex, 16);
    const mapping = mappings.find((m) => m.start <= address && address < m.end);
    if (!mapping) continue;
    const offset = mapping.offset + address - mapping.start;
    const section: Section | undefined = sections.find((s) => s.start <= offset && offset < s.end);
    if (!section) continue;
    const block = Math.floor(offset / BLOCK);
    if (seen.has(block)) continue;
    seen.add(block);
    bySection.set(section.name, (bySection.get(section.name) ?? 0) + BLOCK);
    const frames = lines.slice(1)
      .map((line) => line.trim().match(/^[0-9a-f]+ (.*) \((.*)\)$/))
      .filter((frame): frame is RegExpMatchArray => frame !== null && frame[2].includes("/perf-"))
      .map((frame) => frameLabel(frame[1], kept));
    let label: string;
    if (frames.length === 0) {
      label = tid === mainThread ? "(no JavaScript: the main thread)" : `(no JavaScript: thread ${thread})`;
    } else {
      const caller = frames[0].runtime ? frames.find((frame) => !frame.runtime) : undefined;
      label = caller ? `${frames[0].label} < ${caller.label}` : frames[0].label;
    }
    label = `${section.name} ${label}`;
    byLabel.set(label, (byLabel.get(label) ?? 0) + BLOCK);
  }
  // The program's JavaScript frames are named from V8's map, which perf script has read by now.
  if (mainThread) await Deno.remove(`/tmp/perf-${mainThread}.map`).catch(() => {});
  return { bySection, byLabel };
}

const results = new Map<Name, Attribution[]>(names.map((name) => [name, []]));
for (let round = 1; round <= rounds; round++) {
  for (const name of roundOrder(names, round)) {
    const data = await record(name, round);
    const attribution = await attribute(name, data);
    await Deno.remove(data);
    results.get(name)!.push(attribution);
    const total = [...attribution.bySection.values()].reduce((sum, bytes) => sum + bytes, 0);
    const parts = [...attribution.bySection].map(([section, bytes]) => `${section} ${kib(bytes)}`).join(", ");
    console.error(`[round ${round}] ${name}: ${kib(total)} KiB in ${parts}`);
  }
}

/** The median over the rounds of one contestant's figure (a label it lacks in a round counts 0 there). */
function medianOf(name: Name, pick: (attribution: Attribution) => number | undefined): number {
  return median(results.get(name)!.map((attribution) => pick(attribution) ?? 0));
}

function kib(bytes: number): string {
  return String(Math.round(bytes / 1024));
}

console.log(
  `\nBlocks of 64 KiB of the deno binary that each process faulted in within ${seconds} s, KiB, medians of ${rounds} ` +
    "round(s), by section and by what touched them first (the innermost JavaScript frame; the runtime's own, with " +
    "the program's frame that called it).\n",
);
console.log(`| section | ${names.join(" | ")} |`);
console.log(`|---|${names.map(() => "--:|").join("")}`);
for (const section of [".text", ".rodata"]) {
  const cells = names.map((name) => kib(medianOf(name, ({ bySection }) => bySection.get(section))));
  console.log(`| \`${section}\` | ${cells.join(" | ")} |`);
}
const labels = new Map<string, number>();
for (const name of names) {
  for (const label of new Set(results.get(name)!.flatMap(({ byLabel }) => [...byLabel.keys()]))) {
    labels.set(label, Math.max(labels.get(label) ?? 0, medianOf(name, ({ byLabel }) => byLabel.get(label))));
  }
}
const rows = [...labels].filter(([, bytes]) => bytes > 0).sort((a, b) => b[1] - a[1]).slice(0, top)
  .map(([label]) => label);
console.log(`\n| first touched by (section, frame) | ${names.join(" | ")} |`);
console.log(`|---|${names.map(() => "--:|").join("")}`);
for (const label of rows) {
  const cells = names.map((name) => {
    const bytes = medianOf(name, ({ byLabel }) => byLabel.get(label));
    return bytes ? kib(bytes) : "";
  });
  console.log(`| ${label.replaceAll("|", "\\|")} | ${cells.join(" | ")} |`);
}
await Deno.remove(folder, { recursive: true });
