/** bench/callgrind_origins.ts: a callgrind dump's counts by the origin of the code, through V8's code map. */

import assert from "node:assert/strict";
import {
  annotatedRows,
  callerWeights,
  chargedToCallers,
  originOf,
  type OwnCounts,
  parseCodeMap,
} from "../bench/callgrind_origins.ts";

// As `callgrind_annotate --show=Ir,I1mr` prints it (shortened): counts with shares, a dot for nothing.
const ANNOTATED = `
--------------------------------------------------------------------------------
Ir                    I1mr
--------------------------------------------------------------------------------
827,752,242 (100.0%) 17,092,090 (100.0%)  PROGRAM TOTALS

--------------------------------------------------------------------------------
Ir                  I1mr              file:function
--------------------------------------------------------------------------------
31,217,719 ( 3.77%)   1,482 ( 0.01%)  ???:0x00000000022d83b0 [/usr/bin/deno]
26,053,127 ( 3.15%)  18,172 ( 0.11%)  ./string/../sysdeps/x86_64/multiarch/memcmp-avx2-movbe.S:__memcmp_avx2_movbe [/usr/lib/x86_64-linux-gnu/libc.so.6]
 9,966,396 ( 1.20%)       .           ???:0x00000000280b7fda'2 [???]
     1,000 ( 0.00%)      10 ( 0.00%)  ???:0x0000000000001010 [???]
`;

const CODE_MAP = [
  "1000 20 JS:~resolveField file:///work/main/src/state/fields.ts:43:22",
  "2000 10 JS:^parseSimpleSpecialUrl ext:deno_web/00_url.js:2:1",
  "3000 10 Builtin:KeyedStoreIC_Megamorphic",
  "4000 10 BytecodeHandler:Ldar",
  "5000 10 JS:*getLogger file:///work/main/node_modules/.deno/@logtape+logtape@2.4.2/node_modules/logger.js:1:1",
  "6000 10 JS:~handler file:///work/main/bench/fixtures/compare_create.ts:12:1",
  "7000 10 RegExp.<^a+$>",
].join("\n");

Deno.test("the rows of the table of functions, the totals above it left out", () => {
  const rows = [...annotatedRows(ANNOTATED)];
  assert.deepEqual(rows.map((row) => [row.instructions, row.instructionMisses, row.object]), [
    [31_217_719, 1_482, "/usr/bin/deno"],
    [26_053_127, 18_172, "/usr/lib/x86_64-linux-gnu/libc.so.6"],
    [9_966_396, 0, "???"],
    [1_000, 10, "???"],
  ]);
  assert.equal(rows[0].function, "???:0x00000000022d83b0");
});

Deno.test("each address is placed by the code map; what it does not hold, by its object file", () => {
  const ranges = parseCodeMap(CODE_MAP);
  const origin = (address: number, object = "???") =>
    originOf(`???:0x${address.toString(16).padStart(16, "0")}`, object, ranges);
  assert.equal(origin(0x1010), "framework (src/)");
  assert.equal(origin(0x2005), "Deno's JavaScript");
  assert.equal(origin(0x3000), "V8's builtins");
  assert.equal(origin(0x4009), "V8's builtins");
  assert.equal(origin(0x5000), "libraries (node_modules)");
  assert.equal(origin(0x6000), "the operator's and the bench's scripts");
  assert.equal(origin(0x7000), "V8's builtins");
  // Past a range's end, or before the first: not V8's named code.
  assert.equal(origin(0x1020), "machine code V8 did not name");
  assert.equal(origin(0x1020, "/usr/bin/deno"), "the binary's native code");
  assert.equal(
    originOf("./string/memcmp.S:__memcmp_avx2_movbe", "/usr/lib/x86_64-linux-gnu/libc.so.6", ranges),
    "the C library",
  );
});

// As `callgrind_annotate --tree=caller --show=Ir,I1mr` prints it: each function's callers above it.
const CALLERS = `
--------------------------------------------------------------------------------
Ir                  I1mr              file:function
--------------------------------------------------------------------------------
 3,000 ( 0.10%)   10 ( 0.00%)  < ???:0x0000000000001010 (3x) [???]
 1,000 ( 0.03%)    2 ( 0.00%)  < ???:0x0000000000002000'2 (1x) [???]
 2,500 ( 0.08%)    8 ( 0.00%)  *  ???:0x00000000022d83b0 [/usr/bin/deno]

   700 ( 0.02%)    .           < ???:0x00000000022d83b0 (7x) [/usr/bin/deno]
   700 ( 0.02%)    1 ( 0.00%)  *  ./malloc/malloc.c:malloc [/usr/lib/x86_64-linux-gnu/libc.so.6]
`;

Deno.test("the callers of each function, weighed by what their calls cost, recursion's suffix dropped", () => {
  const callers = callerWeights(CALLERS);
  assert.deepEqual([...callers.get("???:0x00000000022d83b0")!], [
    ["???:0x0000000000001010", 3_000],
    ["???:0x0000000000002000", 1_000],
  ]);
  assert.deepEqual([...callers.get("./malloc/malloc.c:malloc")!], [["???:0x00000000022d83b0", 700]]);
});

Deno.test("native code is charged to its callers by their weights, through native callers, else stays native", () => {
  const own: OwnCounts = new Map([
    ["handler", { instructions: 10, instructionMisses: 1, origin: "framework (src/)" }],
    ["fetch", { instructions: 20, instructionMisses: 2, origin: "Deno's JavaScript" }],
    // Called by the handler three times as much as by fetch; calls the allocator.
    ["runtime", { instructions: 400, instructionMisses: 40, origin: "the binary's native code" }],
    ["malloc", { instructions: 100, instructionMisses: 8, origin: "the C library" }],
    // The event loop: called by nothing named.
    ["loop", { instructions: 50, instructionMisses: 5, origin: "the binary's native code" }],
  ]);
  const callers = new Map([
    ["runtime", new Map([["handler", 300], ["fetch", 100], ["loop", 0]])],
    ["malloc", new Map([["runtime", 10]])],
    ["fetch", new Map([["loop", 1]])],
  ]);
  const counts = chargedToCallers(own, callers);
  assert.deepEqual(counts.get("framework (src/)"), { instructions: 10 + 0.75 * 500, instructionMisses: 1 + 0.75 * 48 });
  assert.deepEqual(counts.get("Deno's JavaScript"), {
    instructions: 20 + 0.25 * 500,
    instructionMisses: 2 + 0.25 * 48,
  });
  assert.deepEqual(counts.get("the binary's native code"), { instructions: 50, instructionMisses: 5 });
  assert.deepEqual(counts.get("the C library"), { instructions: 0, instructionMisses: 0 });
});
