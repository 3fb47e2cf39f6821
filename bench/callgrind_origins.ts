/**
 * Where a thread's instructions and instruction-cache misses come from, by the origin of the code that
 * ran: a callgrind dump (Valgrind) read with `callgrind_annotate`, its addresses placed with V8's code map
 * (`/tmp/perf-PID.map`, written with `--perf-basic-prof`: the machine code V8 made for JavaScript
 * functions and its builtins, by name and address). Callgrind alone names only the C library's
 * functions: Deno's binary is stripped, and V8's code lives in memory it maps itself.
 *
 * The origins: the framework's JavaScript (`src/`), the operator's own and the bench's scripts (other
 * files), libraries (`node_modules`), Deno's JavaScript (`ext:`, `node:`), V8's builtins (the code of
 * the interpreter, of the language's built-in functions and of regular expressions), the C library,
 * and the rest of the binary's native code -- V8's runtime, parser, compilers and collector, and
 * Deno's Rust (its ops, HTTP, TLS) -- which the map does not name. An address that V8 gave to newer
 * code after freeing older code is placed with one of them.
 *
 * @module
 */

/** Where code comes from. */
export type Origin =
  | "framework (src/)"
  | "the operator's and the bench's scripts"
  | "libraries (node_modules)"
  | "Deno's JavaScript"
  | "V8's builtins"
  | "the C library"
  | "the binary's native code"
  | "machine code V8 did not name";

/** The origins in the order they are shown. */
export const ORIGINS: readonly Origin[] = [
  "framework (src/)",
  "the operator's and the bench's scripts",
  "libraries (node_modules)",
  "Deno's JavaScript",
  "V8's builtins",
  "the C library",
  "the binary's native code",
  "machine code V8 did not name",
];

/** What ran of one origin: instructions and misses of the first-level instruction cache. */
export interface OriginCounts {
  instructions: number;
  instructionMisses: number;
}

interface CodeRange {
  start: bigint;
  end: bigint;
  name: string;
}

/** A dump's counts by origin: each function's own, and with native code charged to its callers. */
export interface OriginSplits {
  own: Map<Origin, OriginCounts>;
  calling: Map<Origin, OriginCounts>;
}

/**
 * The counts of one callgrind dump by origin, and the same with the native code's counts (the
 * binary's and the C library's) charged to the code that called it -- each native function's own counts
 * shared among its callers in proportion to the instructions each call cost, a native caller passing its
 * share on to its own callers, up to the nearest code of another origin (V8's runtime under a JavaScript
 * function, the collector under the allocation that started it, Deno's ops under their JavaScript side).
 * What no such caller reaches (the event loop, V8's tasks, recursion among native functions) stays native.
 * `codeMap` is V8's map of the same process (absent: all of V8's code counts as unnamed machine code,
 * the binary's as native code).
 */
export async function originSplits(dump: string, codeMap?: string): Promise<OriginSplits> {
  const own = await ownCounts(dump, codeMap);
  return { own: summed(own), calling: chargedToCallers(own, callerWeights(await annotate(dump, ["--tree=caller"]))) };
}

/** Each function's own counts in a dump, and its origin. */
async function ownCounts(dump: string, codeMap?: string): Promise<OwnCounts> {
  const ranges = codeMap ? parseCodeMap(await Deno.readTextFile(codeMap)) : [];
  const own: OwnCounts = new Map();
  for (const row of annotatedRows(await annotate(dump, []))) {
    const name = functionKey(row.function);
    const entry = own.get(name) ??
      { instructions: 0, instructionMisses: 0, origin: originOf(name, row.object, ranges) };
    entry.instructions += row.instructions;
    entry.instructionMisses += row.instructionMisses;
    own.set(name, entry);
  }
  return own;
}

/** The functions' own counts summed by origin. */
function summed(own: OwnCounts): Map<Origin, OriginCounts> {
  const counts = emptyCounts();
  for (const { origin, instructions, instructionMisses } of own.values()) {
    const entry = counts.get(origin)!;
    entry.instructions += instructions;
    entry.instructionMisses += instructionMisses;
  }
  return counts;
}

/** Each function's own counts and origin, by the function's name as callgrind gives it. */
export type OwnCounts = Map<string, OriginCounts & { origin: Origin }>;

/**
 * The counts by origin, each native function's (see {@linkcode originSplits}) shared among its callers
 * in proportion to `callers`' weights, passed on through native callers.
 */
export function chargedToCallers(own: OwnCounts, callers: Map<string, Map<string, number>>): Map<Origin, OriginCounts> {
  const shares = new Map<string, Map<Origin, number>>();
  const sharesOf = (name: string, path: Set<string>): Map<Origin, number> => {
    const origin = own.get(name)?.origin ?? "the binary's native code";
    if (!NATIVE.has(origin)) return new Map([[origin, 1]]);
    const known = shares.get(name);
    if (known) return known;
    const weights = [...callers.get(name) ?? []].filter(([caller]) => caller !== name && !path.has(caller));
    const total = weights.reduce((sum, [, weight]) => sum + weight, 0);
    if (total === 0) return new Map([[origin, 1]]);
    path.add(name);
    const result = new Map<Origin, number>();
    for (const [caller, weight] of weights) {
      for (const [to, share] of sharesOf(caller, path)) result.set(to, (result.get(to) ?? 0) + share * weight / total);
    }
    path.delete(name);
    shares.set(name, result);
    return result;
  };
  const counts = emptyCounts();
  for (const [name, { instructions, instructionMisses }] of own) {
    for (const [origin, share] of sharesOf(name, new Set())) {
      const entry = counts.get(origin)!;
      entry.instructions += instructions * share;
      entry.instructionMisses += instructionMisses * share;
    }
  }
  return counts;
}

/** The origins whose code {@linkcode chargedToCallers} charges to its callers. */
const NATIVE = new Set<Origin>(["the binary's native code", "the C library"]);

function emptyCounts(): Map<Origin, OriginCounts> {
  return new Map(ORIGINS.map((origin) => [origin, { instructions: 0, instructionMisses: 0 }]));
}

/** A function as callgrind names it, without the suffix it adds to a function called within itself (`'2`). */
function functionKey(name: string): string {
  return name.replace(/'\d+$/, "");
}

/**
 * Per function, its callers and the instructions their calls cost (the callee and everything below it),
 * from `callgrind_annotate --tree=caller`: blocks of `< caller` lines, each ended by its `* function`.
 */
export function callerWeights(text: string): Map<string, Map<string, number>> {
  const callers = new Map<string, Map<string, number>>();
  const row =
    /^\s*([\d,]+|\.)\s+(?:\(\s*[\d.]+%\)\s+)?(?:[\d,]+|\.)\s+(?:\(\s*[\d.]+%\)\s+)?([<*])\s+(\S.*?)(?: \([\d,]+x\))?(?: \[.*\])?$/;
  let pending: [string, number][] = [];
  for (const line of text.split("\n")) {
    const match = row.exec(line);
    if (!match) {
      if (!line.trim()) pending = [];
      continue;
    }
    const name = functionKey(match[3]);
    const instructions = match[1] === "." ? 0 : Number(match[1].replaceAll(",", ""));
    if (match[2] === "<") {
      pending.push([name, instructions]);
      continue;
    }
    const weights = callers.get(name) ?? new Map<string, number>();
    for (const [caller, weight] of pending) weights.set(caller, (weights.get(caller) ?? 0) + weight);
    callers.set(name, weights);
    pending = [];
  }
  return callers;
}

/** What `callgrind_annotate` prints of a dump, every function shown. */
async function annotate(dump: string, options: string[]): Promise<string> {
  const output = await new Deno.Command("callgrind_annotate", {
    args: [...options, "--threshold=100", "--show=Ir,I1mr", dump],
    stdout: "piped",
    stderr: "piped",
  }).output();
  if (!output.success) {
    throw new Error(`callgrind_annotate ${dump} failed: ${new TextDecoder().decode(output.stderr)}`);
  }
  return new TextDecoder().decode(output.stdout);
}

/** The rows of `callgrind_annotate --show=Ir,I1mr`: each function's counts, its name and its object file. */
export function* annotatedRows(
  text: string,
): Generator<{ instructions: number; instructionMisses: number; function: string; object: string }> {
  // `1,234 ( 3.77%)  56 ( 0.01%)  file:function [object]`; a count of nothing is a dot, without a share.
  const row = /^\s*([\d,]+|\.)\s+(?:\(\s*[\d.]+%\)\s+)?([\d,]+|\.)\s+(?:\(\s*[\d.]+%\)\s+)?(\S.*?)(?: \[(.*)\])?$/;
  let inTable = false;
  for (const line of text.split("\n")) {
    // The table of functions follows the header line that names its last column.
    if (/\bfile:function\s*$/.test(line)) {
      inTable = true;
      continue;
    }
    if (!inTable || line.startsWith("--")) continue;
    const match = row.exec(line);
    if (!match) continue;
    const count = (text: string) => text === "." ? 0 : Number(text.replaceAll(",", ""));
    yield {
      instructions: count(match[1]),
      instructionMisses: count(match[2]),
      function: match[3],
      object: match[4] ?? "",
    };
  }
}

/** V8's code map: `<start hex> <size hex> <name>` per line, sorted by start. */
export function parseCodeMap(text: string): CodeRange[] {
  const ranges: CodeRange[] = [];
  for (const line of text.split("\n")) {
    const match = /^([0-9a-f]+) ([0-9a-f]+) (.*)$/.exec(line);
    if (!match) continue;
    const start = BigInt(`0x${match[1]}`);
    ranges.push({ start, end: start + BigInt(`0x${match[2]}`), name: match[3] });
  }
  return ranges.sort((a, b) => (a.start < b.start ? -1 : a.start > b.start ? 1 : 0));
}

/** The origin of a function as callgrind names it (`???:0x…` where it knows no name), with its object file. */
export function originOf(name: string, object: string, ranges: readonly CodeRange[]): Origin {
  const address = /^\?\?\?:0x([0-9a-f]+)/.exec(name);
  if (!address) return /\blibc\b|\blibm\b|ld-linux/.test(object) ? "the C library" : "the binary's native code";
  const code = codeAt(ranges, BigInt(`0x${address[1]}`));
  if (code === undefined) return object === "???" ? "machine code V8 did not name" : "the binary's native code";
  if (/^(Builtin:|BytecodeHandler:|RegExp)/.test(code)) return "V8's builtins";
  if (/ (ext|node):/.test(code)) return "Deno's JavaScript";
  if (code.includes("/node_modules/")) return "libraries (node_modules)";
  if (/ file:\/\/\S*\/src\//.test(code)) return "framework (src/)";
  if (code.includes(" file://")) return "the operator's and the bench's scripts";
  return "machine code V8 did not name";
}

/** The name of the code that holds an address, if the map has it. */
function codeAt(ranges: readonly CodeRange[], address: bigint): string | undefined {
  let low = 0;
  let high = ranges.length - 1;
  let found = -1;
  while (low <= high) {
    const middle = (low + high) >> 1;
    if (ranges[middle].start <= address) {
      found = middle;
      low = middle + 1;
    } else {
      high = middle - 1;
    }
  }
  return found >= 0 && address < ranges[found].end ? ranges[found].name : undefined;
}
