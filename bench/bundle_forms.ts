/**
 * The forms of the image's bundle, each started as a new container starts the image (its
 * permissions and flags, an empty `DENO_DIR`) against the scripted API server
 * (bench/scripted_api.ts): what Deno's parse of a bundle loaded as a module costs at each start.
 *
 * Deno builds a module graph of every module it loads, parsing each one in full to find its imports:
 * for a bundle (~0.6 MB minified) that parse's memory is the start's peak, which glibc's allocator
 * keeps. Code that Deno does not load as a module is not parsed that way: V8 compiles a function's
 * body lazily (cli/bundle_body.ts). The forms, all of the fixture bench/fixtures/compare_create.ts,
 * minified:
 *
 * - `module`: the module `deno bundle` makes (what `kopf build --compile` embeds; the image's form
 *   until 2026-12-04, which ran it with jemalloc to have the parse's memory back);
 * - `inline`: what `kopf build` writes, the module's text as an async function's body in a comment
 *   of a small entry module, which reads it back through a function's text (`toString`), compiles it
 *   and calls it;
 * - `function`: one file, the body in a string literal instead (what `kopf build` wrote before, on
 *   2026-12-04), which the function constructor copies into a source of its own;
 * - `eval`: one file, the literal a script that declares the function, run by an indirect `eval`;
 * - `script`: the body in a file of its own, which the entry reads (two files);
 * - `packed`: one file, the body gzipped and in base64 in it, unpacked at the start.
 *
 * Each with jemalloc preloaded (`-jemalloc`), glibc's allocator as it comes (`-glibc`), or glibc with
 * the image's environment (`-image`: `IMAGE_ENVIRONMENT` of cli/build.ts).
 *
 * Per round and form (interleaved): the time from the spawn to its watch open, its CPU in the first
 * 10 s, its RSS after `--settle` seconds and its peak RSS by then (`VmHWM`).
 *
 * Usage: `deno run -A bench/bundle_forms.ts [--rounds 3] [--settle 20]
 * [--only module-jemalloc,inline-image,function-image,script-image]`
 *
 * @module
 */

import { commandLine, usageError } from "./command_line.ts";
import { join } from "node:path";
import { bundle, IMAGE_DENO_FLAGS, IMAGE_ENVIRONMENT, OPERATOR_PERMISSIONS, OPERATOR_V8_FLAGS } from "../cli/build.ts";
import { functionBody, metaName, runEntry } from "../cli/bundle_body.ts";
import { moduleSyntax } from "../cli/bundle_syntax.ts";
import { evalEntry, literalEntry } from "./bundle_entries.ts";
import { exitOnSignals } from "./exit_on_signals.ts";
import { jemalloc, spawn } from "./compare_contestants.ts";
import { cpuSeconds, median, mib, peakRss, rss } from "./process_stats.ts";
import { roundOrder } from "./round_order.ts";
import { ScriptedApi } from "./scripted_api.ts";

const { values } = commandLine({
  options: {
    rounds: { type: "string", default: "3" },
    settle: { type: "string", default: "20" },
    only: { type: "string", default: "module-jemalloc,inline-image,function-image,script-image" },
  },
});
const rounds = Number(values.rounds);
if (!(rounds >= 1)) usageError(`--rounds takes a number of rounds, 1 or more; got ${values.rounds}.`);
const settle = Number(values.settle);
if (!(settle >= 10)) usageError(`--settle takes seconds, 10 or more (the CPU is read at 10 s); got ${values.settle}.`);
const FORMS = {
  module: "operator.js",
  inline: "inline.js",
  script: "entry.js",
  packed: "packed.js",
  function: "function.js",
  eval: "eval.js",
} as const;
type Form = keyof typeof FORMS;
const names = values.only.split(",");
for (const name of names) {
  const [form, allocator] = name.split("-");
  if (!(form in FORMS) || !["jemalloc", "glibc", "image"].includes(allocator)) {
    usageError(
      `Unknown contestant ${name}: a form (module, inline, function, eval, script, packed), a dash, an allocator (jemalloc, glibc, image).`,
    );
  }
}
const preload = names.some((name) => name.endsWith("-jemalloc")) ? jemalloc() : "";

exitOnSignals();

const folder = await Deno.makeTempDir({ prefix: "kopf-bench-bundle-forms-" });
await buildForms(folder);

await using api = await ScriptedApi.start();
const kubeconfig = join(folder, "kubeconfig.json");
await Deno.writeTextFile(kubeconfig, api.kubeconfig());

interface Measured {
  watchOpen: number;
  cpu: number;
  rss: number;
  peak: number;
}
const measured = new Map<string, Measured[]>(names.map((name) => [name, []]));
for (let round = 1; round <= rounds; round++) {
  for (const name of roundOrder(names, round)) {
    const [form, allocator] = name.split("-") as [Form, string];
    const namespace = `forms-${name}-${round}`;
    api.serve(namespace);
    const deno = await Deno.makeTempDir({ prefix: "kopf-bench-deno-dir-" });
    const started = spawn(join(folder, `${namespace}.log`), folder, Deno.execPath(), [
      "run",
      ...OPERATOR_PERMISSIONS,
      "--no-config",
      ...IMAGE_DENO_FLAGS,
      OPERATOR_V8_FLAGS,
      FORMS[form],
      "run",
      "--standalone",
      "-n",
      namespace,
    ], {
      KUBECONFIG: kubeconfig,
      DENO_NO_UPDATE_CHECK: "1",
      DENO_DIR: deno,
      ...(allocator === "jemalloc" ? { LD_PRELOAD: preload } : allocator === "image" ? IMAGE_ENVIRONMENT : {}),
    });
    try {
      await started.guard(api.watched, "its watch to open");
      const watchOpen = performance.now() - started.started;
      await started.guard(sleepUntil(started.started + 10_000), "10 s");
      const cpu = await cpuSeconds(started.pid);
      await started.guard(sleepUntil(started.started + settle * 1000), `${settle} s`);
      const result = { watchOpen, cpu, rss: await rss(started.pid), peak: await peakRss(started.pid) };
      measured.get(name)!.push(result);
      console.error(
        `[round ${round}, ${name}] watch open at ${watchOpen.toFixed(0)} ms, ${result.cpu.toFixed(2)} s CPU in 10 s, ` +
          `RSS ${mib(result.rss)} MiB, peak ${mib(result.peak)} MiB`,
      );
    } finally {
      await started.stop();
      await Deno.remove(deno, { recursive: true });
    }
  }
}

console.log(`\nMedians of ${rounds} round(s); RSS after ${settle} s.\n`);
console.log(`| metric | ${names.join(" | ")} |`);
console.log(`|---|${names.map(() => "--:|").join("")}`);
const rows: [string, (m: Measured) => number][] = [
  ["from the spawn to the watch open, ms", (m) => m.watchOpen],
  ["CPU in the first 10 s, s", (m) => m.cpu],
  ["RSS, MiB", (m) => m.rss / 2 ** 20],
  ["peak RSS, MiB", (m) => m.peak / 2 ** 20],
];
for (const [label, pick] of rows) {
  const digits = label.endsWith("ms") ? 0 : label.endsWith(", s") ? 2 : 1;
  console.log(
    `| ${label} | ${names.map((name) => median(measured.get(name)!.map(pick)).toFixed(digits)).join(" | ")} |`,
  );
}
await Deno.remove(folder, { recursive: true });

/** Builds the fixture's minified bundle into `folder` in each form. */
async function buildForms(folder: string): Promise<void> {
  const fixture = new URL("./fixtures/compare_create.ts", import.meta.url).href;
  const module = join(folder, FORMS.module);
  await bundle([fixture], module, { minify: true, form: "module" });
  await bundle([fixture], join(folder, FORMS.inline), { minify: true });
  const text = await Deno.readTextFile(module);
  const parsing = await Deno.makeTempDir({ prefix: "kopf-bench-syntax-" });
  const meta = metaName(text);
  const body = functionBody(text, await moduleSyntax(text, parsing), meta);
  const { builtins } = body;
  await Deno.remove(parsing, { recursive: true });
  await Deno.writeTextFile(join(folder, "operator.body.js"), body.body);
  await Deno.writeTextFile(
    join(folder, FORMS.script),
    runEntry(`await Deno.readTextFile(new URL("./operator.body.js", import.meta.url))`, meta, builtins),
  );
  const packed = await new Response(
    new Blob([body.body]).stream().pipeThrough(new CompressionStream("gzip")),
  ).bytes();
  const unpack = `await new Response(new Blob([Uint8Array.from(atob(${
    JSON.stringify(packed.toBase64())
  }), (char) => char.charCodeAt(0))]).stream().pipeThrough(new DecompressionStream("gzip"))).text()`;
  await Deno.writeTextFile(join(folder, FORMS.packed), runEntry(unpack, meta, builtins));
  await Deno.writeTextFile(join(folder, FORMS.function), literalEntry(body, meta));
  await Deno.writeTextFile(join(folder, FORMS.eval), evalEntry(body, meta));
}

function sleepUntil(time: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, Math.max(0, time - performance.now())));
}
