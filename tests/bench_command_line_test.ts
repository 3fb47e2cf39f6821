/** The benches' command line (bench/command_line.ts): options parsed, `--help`, and mistakes told with the usage, exit code 2. */

import assert from "node:assert/strict";
import { readCommandLine, usageOf } from "../bench/command_line.ts";

const CONFIG = {
  options: {
    rounds: { type: "string", default: "3" },
    only: { type: "string", default: "ours,lean" },
    before: { type: "string" },
    threads: { type: "boolean", default: false },
  },
} as const;
const USAGE = usageOf("bench/example.ts", CONFIG);

Deno.test("the options given are parsed over their defaults", () => {
  const read = readCommandLine(["--rounds", "5", "--threads"], CONFIG, USAGE);
  assert.ok("parsed" in read, JSON.stringify(read));
  assert.deepEqual({ ...read.parsed.values }, { rounds: "5", only: "ours,lean", threads: true });
});

Deno.test("--help prints the usage, exit code 0, whatever else is given", () => {
  assert.deepEqual(readCommandLine(["--rounds", "5", "--help"], CONFIG, USAGE), { exit: 0, text: USAGE });
});

Deno.test("an unknown option or a missing value: what is wrong and the usage, exit code 2", () => {
  const unknown = readCommandLine(["--round", "5"], CONFIG, USAGE);
  assert.ok("exit" in unknown && unknown.exit === 2, JSON.stringify(unknown));
  assert.match(unknown.text, /Unknown option '--round'/);
  assert.ok(unknown.text.endsWith(USAGE), unknown.text);
  const missing = readCommandLine(["--before"], CONFIG, USAGE);
  assert.ok("exit" in missing && missing.exit === 2, JSON.stringify(missing));
  assert.match(missing.text, /--before/);
});

Deno.test("the usage made from the options names each with its default and points to the description", () => {
  assert.equal(
    USAGE,
    "Usage: deno run -A bench/example.ts [--rounds 3] [--only ours,lean] [--before VALUE] [--threads]\n" +
      "(what each option means: the description at the top of bench/example.ts)",
  );
  assert.match(
    usageOf("bench/profile.ts", { options: {}, allowPositionals: true }),
    /^Usage: deno run -A bench\/profile\.ts ARGUMENT…\n/,
  );
});

/** Runs a bench with the given arguments; it must end before it starts anything. */
async function bench(script: string, args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const root = new URL("..", import.meta.url).pathname;
  const output = await new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", script, ...args],
    cwd: root,
    env: { NO_COLOR: "1" },
    stdin: "null",
  }).output();
  const decoder = new TextDecoder();
  return { code: output.code, stdout: decoder.decode(output.stdout), stderr: decoder.decode(output.stderr) };
}

Deno.test("a bench run with --help, a wrong option or a value it cannot take: the text and the exit code", async () => {
  const help = await bench("bench/warm_up.ts", ["--help"]);
  assert.equal(help.code, 0, help.stderr);
  assert.match(help.stdout, /^Usage: deno run -A bench\/warm_up\.ts \[--objects 4000\]/);
  const wrong = await bench("bench/warm_up.ts", ["--object", "5"]);
  assert.equal(wrong.code, 2, wrong.stderr);
  assert.match(wrong.stderr, /Unknown option '--object'[^]*Usage: deno run -A bench\/warm_up\.ts/);
  const value = await bench("bench/warm_up.ts", ["--only", "nobody"]);
  assert.equal(value.code, 2, value.stderr);
  assert.match(
    value.stderr,
    /--only takes ours, lean, raw, raw2, cr and rs; not nobody\.\n\(bench\/warm_up\.ts --help lists the options\)/,
  );
});

Deno.test("bench/bundle_forms.ts refuses a form or an allocator it does not know before it builds anything", async () => {
  const wrong = await bench("bench/bundle_forms.ts", ["--only", "module-jemalloc,file-glibc"]);
  assert.equal(wrong.code, 2, wrong.stderr);
  assert.match(
    wrong.stderr,
    /Unknown contestant file-glibc: a form \(module, inline, function, eval, script, packed\)/,
  );
  const settle = await bench("bench/bundle_forms.ts", ["--settle", "5"]);
  assert.equal(settle.code, 2, settle.stderr);
  assert.match(settle.stderr, /--settle takes seconds, 10 or more/);
});
