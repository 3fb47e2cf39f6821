/**
 * The image's bundle in other forms than the module `kopf build` writes, started as a new container
 * starts the image (its permissions and flags, an empty `DENO_DIR`) against the scripted API server
 * (bench/scripted_api.ts): what Deno's analysis of the bundle at each start costs.
 *
 * Deno builds a module graph of every module it loads, parsing each one in full to find its imports:
 * for the bundle (~0.6 MB minified) that parse's memory is the start's peak, and glibc keeps it
 * (hence jemalloc in the image). Code that Deno does not load as a module is not parsed that way:
 * V8 compiles a function's body lazily. The forms:
 *
 * - `module`: the bundle of `kopf build --minify` as it is (the image);
 * - `script`: the bundle's text as the body of an async function, in a file of its own beside a small
 *   entry module that reads it and runs it, its `import` declarations of Node's modules made
 *   `process.getBuiltinModule` calls and `import.meta` an object the entry passes;
 * - `inline`: the same body as a string literal in the entry module, one file as now (V8 then keeps
 *   the text twice: the module's source and the string);
 * - `packed`: one file too, the body gzipped and in base64 in it, unpacked at the start (the
 *   module's source a quarter of the body's size).
 *
 * Each with jemalloc preloaded (`-jemalloc`, the image's way) or glibc's allocator (`-glibc`). The
 * body is made by rewriting esbuild's minified spelling (`import{a as b}from"node:x";`); a string that
 * quotes such a declaration in that spelling would be rewritten too: a measurement, not a build step
 * (the result is checked by compiling it as a function body, which fails on any declaration left).
 *
 * Per round and form (interleaved): the time from the spawn to its watch open, its CPU in the first
 * 10 s, its RSS after `--settle` seconds and its peak RSS by then (`VmHWM`).
 *
 * Usage: `deno run -A bench/bundle_forms.ts [--rounds 3] [--settle 20]
 * [--only module-jemalloc,module-glibc,script-glibc,inline-glibc]`
 *
 * @module
 */

import { commandLine, usageError } from "./command_line.ts";
import { join } from "node:path";
import { IMAGE_DENO_FLAGS, OPERATOR_PERMISSIONS, OPERATOR_V8_FLAGS } from "../cli/build.ts";
import { jemalloc, spawn } from "./compare_contestants.ts";
import { cpuSeconds, median, mib, peakRss, rss } from "./process_stats.ts";
import { roundOrder } from "./round_order.ts";
import { ScriptedApi } from "./scripted_api.ts";

const { values } = commandLine({
  options: {
    rounds: { type: "string", default: "3" },
    settle: { type: "string", default: "20" },
    only: { type: "string", default: "module-jemalloc,module-glibc,script-glibc,inline-glibc" },
  },
});
const rounds = Number(values.rounds);
if (!(rounds >= 1)) usageError(`--rounds takes a number of rounds, 1 or more; got ${values.rounds}.`);
const settle = Number(values.settle);
if (!(settle >= 10)) usageError(`--settle takes seconds, 10 or more (the CPU is read at 10 s); got ${values.settle}.`);
const FORMS = { module: "operator.js", script: "entry.js", inline: "inline.js", packed: "packed.js" } as const;
type Form = keyof typeof FORMS;
const names = values.only.split(",");
for (const name of names) {
  const [form, allocator] = name.split("-");
  if (!(form in FORMS) || !["jemalloc", "glibc"].includes(allocator)) {
    usageError(
      `Unknown contestant ${name}: a form (module, script, inline, packed), a dash, an allocator (jemalloc, glibc).`,
    );
  }
}
const preload = names.some((name) => name.endsWith("-jemalloc")) ? jemalloc() : "";

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
      ...(allocator === "jemalloc" ? { LD_PRELOAD: preload } : {}),
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

/** Builds the fixture's minified bundle into `folder` and writes the other forms beside it. */
async function buildForms(folder: string): Promise<void> {
  const root = new URL("..", import.meta.url).pathname;
  const module = join(folder, FORMS.module);
  const built = await new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", "cli/main.ts", "build", "bench/fixtures/compare_create.ts", "--minify", "-o", module],
    cwd: root,
    stdout: "null",
  }).output();
  if (!built.success) throw new Error(`kopf build failed: ${new TextDecoder().decode(built.stderr)}`);
  const body = functionBody(await Deno.readTextFile(module));
  const meta =
    `{ url: import.meta.url, main: false, resolve: (specifier) => new URL(specifier, import.meta.url).href }`;
  const run = (text: string) => `await new (async () => {}).constructor("__kopfMeta", ${text})(${meta});\n`;
  await Deno.writeTextFile(join(folder, "operator.body.js"), body);
  await Deno.writeTextFile(
    join(folder, FORMS.script),
    run(`await Deno.readTextFile(new URL("./operator.body.js", import.meta.url))`),
  );
  await Deno.writeTextFile(join(folder, FORMS.inline), run(JSON.stringify(body)));
  const packed = await new Response(
    new Blob([body]).stream().pipeThrough(new CompressionStream("gzip")),
  ).bytes();
  const unpack = `await new Response(new Blob([Uint8Array.from(atob(${
    JSON.stringify(packed.toBase64())
  }), (char) => char.charCodeAt(0))]).stream().pipeThrough(new DecompressionStream("gzip"))).text()`;
  await Deno.writeTextFile(join(folder, FORMS.packed), run(unpack));
}

/** The bundle's text as an async function's body (see the module's description). */
function functionBody(bundle: string): string {
  const declarations: string[] = [];
  const rest = bundle
    .replace(/import\{([^}]*)\}from"(node:[\w/]+)";?/g, (_, names: string, specifier: string) => {
      const bindings = names.split(",").map((name) => name.trim().replace(/\s+as\s+/, ":"));
      declarations.push(`var{${bindings.join(",")}}=process.getBuiltinModule("${specifier}");`);
      return "";
    })
    .replace(/import ([\w$]+) ?from"(node:[\w/]+)";?/g, (_, name: string, specifier: string) => {
      declarations.push(`var ${name}=process.getBuiltinModule("${specifier}");`);
      return "";
    })
    .replaceAll("import.meta", "__kopfMeta");
  const body = `"use strict";${declarations.join("")}${rest}\n//# sourceURL=operator.js\n`;
  // Compiled, not run: a declaration left over is a syntax error in a function's body.
  new ((async () => {}).constructor as FunctionConstructor)("__kopfMeta", body);
  return body;
}

function sleepUntil(time: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, Math.max(0, time - performance.now())));
}
