/** The benches' command line (bench/command_line.ts): options parsed, `--help`, and mistakes told with the usage. */

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
