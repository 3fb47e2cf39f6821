/**
 * What one piece of the runtime costs an idle Deno process: each snippet below is run as a script of
 * its own (`deno run -A --no-config`), left idle, and its RSS and the resident pages of the `deno`
 * binary's code (its `r-xp` mapping in `/proc/PID/smaps`) are read. Medians of `--rounds`.
 *
 * Usage: `deno run -A bench/snippet_memory.ts [--rounds 3] [--settle 5] [--only bare,node,…]`
 *
 * @module
 */

import { commandLine, usageError } from "./command_line.ts";
import { join } from "node:path";
import { median } from "./process_stats.ts";

interface Snippet {
  readonly code: string;
  readonly v8Flags?: string;
}

const WAIT = "setInterval(() => {}, 2 ** 30);";
const GC_BY_VM = `
const { default: v8 } = await import("node:v8");
const { default: vm } = await import("node:vm");
v8.setFlagsFromString("--expose-gc");
vm.runInNewContext("typeof gc === 'function' ? gc : undefined")();`;
const HOT_LOOP = "let s = 0; for (let i = 0; i < 1e7; i++) s += i % 7; console.log(s);";

/** Imports of `node:*` modules, each kept alive. */
function imports(...modules: string[]): string {
  return modules.map((name, index) =>
    `import * as m${index} from "node:${name}";\n(globalThis as Record<string, unknown>).m${index} = m${index};\n`
  )
    .join("");
}

const SNIPPETS: Record<string, Snippet> = {
  bare: { code: WAIT },
  // The node:* modules an operator loads (a bundle hoists every static import to its top).
  node: {
    code: `import { AsyncLocalStorage } from "node:async_hooks";
import { setImmediate } from "node:timers";
import util from "node:util";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { hostname } from "node:os";
new AsyncLocalStorage().run(1, () => setImmediate(() => console.log(util.inspect({}), join("a"), pathToFileURL("/x").href, hostname())));
${WAIT}`,
  },
  // One at a time over the three that LogTape and the queues need (what node:path and node:url add),
  // and what a bundle's CommonJS helper may load: node:module, node:process.
  "node-base": { code: `${imports("util", "async_hooks", "timers")}${WAIT}` },
  "node-base+path": { code: `${imports("util", "async_hooks", "timers", "path")}${WAIT}` },
  "node-base+url": { code: `${imports("util", "async_hooks", "timers", "url")}${WAIT}` },
  // What the bundle of `kopf build` imports at its top, and the part of it that has no replacement of
  // our own (AsyncLocalStorage; setImmediate): what the others cost together.
  "node-bundle": { code: `${imports("util", "async_hooks", "timers", "path", "url")}${WAIT}` },
  "node-async": { code: `${imports("async_hooks", "timers")}${WAIT}` },
  "node-module": { code: `${imports("module")}${WAIT}` },
  "node-process": { code: `${imports("process")}${WAIT}` },
  // The idle collection's gc() without --expose-gc: node:v8, node:vm and a second V8 context.
  "gc-by-vm": { code: GC_BY_VM + WAIT },
  "gc-by-flag": { code: `(globalThis as unknown as { gc: () => void }).gc();\n${WAIT}`, v8Flags: "--expose-gc" },
  // ICU's collation data.
  localeCompare: { code: `console.log(["b", "a"].sort((a, b) => a.localeCompare(b)));\n${WAIT}` },
  // V8's optimising compilers, with them and without.
  "hot-loop": { code: HOT_LOOP + WAIT },
  "hot-loop-no-opt": { code: HOT_LOOP + WAIT, v8Flags: "--no-opt,--no-maglev" },
};

const { values } = commandLine({
  options: {
    rounds: { type: "string", default: "3" },
    settle: { type: "string", default: "5" },
    only: { type: "string", default: Object.keys(SNIPPETS).join(",") },
  },
});
const names = values.only.split(",");
const unknown = names.filter((name) => !(name in SNIPPETS));
if (unknown.length > 0) {
  usageError(`Unknown snippets in --only: ${unknown.join(", ")}; known: ${Object.keys(SNIPPETS).join(", ")}.`);
}

/** RSS and the resident pages of the deno binary's code, in MiB. */
function residentMiB(pid: number): { rss: number; code: number } {
  let mapping = "";
  let code = 0;
  let rss = 0;
  for (const line of Deno.readTextFileSync(`/proc/${pid}/smaps`).split("\n")) {
    const header = line.match(/^[0-9a-f]+-[0-9a-f]+ (\S+) \S+ \S+ \S+\s*(.*)$/);
    if (header) {
      mapping = header[1] === "r-xp" && header[2] === Deno.execPath() ? "code" : "";
      continue;
    }
    const size = line.match(/^Rss:\s+(\d+) kB/);
    if (size) {
      rss += Number(size[1]);
      if (mapping === "code") code += Number(size[1]);
    }
  }
  return { rss: rss / 1024, code: code / 1024 };
}

async function measure(name: string, snippet: Snippet, folder: string): Promise<{ rss: number; code: number }> {
  const file = join(folder, `${name}.ts`);
  await Deno.writeTextFile(file, snippet.code);
  const flags = snippet.v8Flags ? [`--v8-flags=${snippet.v8Flags}`] : [];
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", "--no-config", ...flags, file],
    stdout: "null",
    stderr: "piped",
  }).spawn();
  const output = child.output();
  let exited = false;
  child.status.then(() => exited = true);
  await new Promise((resolve) => setTimeout(resolve, Number(values.settle) * 1000));
  if (exited) {
    const { code, stderr } = await output;
    throw new Error(
      `The snippet ${name} exited (code ${code}) before it was measured:\n${new TextDecoder().decode(stderr)}`,
    );
  }
  try {
    return residentMiB(child.pid);
  } finally {
    child.kill("SIGKILL");
    await output;
  }
}

const folder = await Deno.makeTempDir({ prefix: "kopf-bench-snippet-" });
const samples = new Map<string, { rss: number[]; code: number[] }>(names.map((name) => [name, { rss: [], code: [] }]));
try {
  for (let round = 1; round <= Number(values.rounds); round++) {
    for (const name of names) {
      console.error(`[round ${round}] ${name}`);
      const { rss, code } = await measure(name, SNIPPETS[name], folder);
      samples.get(name)!.rss.push(rss);
      samples.get(name)!.code.push(code);
    }
  }
} finally {
  await Deno.remove(folder, { recursive: true });
}
console.log(`MiB, idle ${values.settle} s, medians of ${values.rounds} rounds:\n`);
console.log("| snippet | RSS | the deno binary's code |\n| --- | ---: | ---: |");
for (const [name, { rss, code }] of samples) {
  console.log(`| ${name} | ${median(rss).toFixed(1)} | ${median(code).toFixed(1)} |`);
}
