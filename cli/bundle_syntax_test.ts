/** cli/bundle_syntax.ts: the module syntax of the files that `deno bundle` writes, found by Deno's parser. */

import assert from "node:assert/strict";
import { moduleSyntaxes } from "./bundle_syntax.ts";

/** Assignments to top-level bindings, in functions and not, shadowed and not, the kinds a chunk holds. */
const CHUNK = [
  'import{a as X}from"./chunk-A.js";',
  "var top = 1, other = 2; let later; var [p, { q }] = [1, { q: 2 }];",
  "function shadowed(top) { top = 3; other = 4; }",
  "const arrow = () => { { let later; later = 1; } later = 5; };",
  "class C { static { top = 9; } method() { for (later of []) {} try {} catch (other) { other = 1; } } }",
  "top = 7; other++;",
  "function destructure() { [p, { q }] = [3, { q: 4 }]; }",
  'const lazy = import("./chunk-B.js"), builtin = import("node:v8"), computed = import(X), url = import.meta.url;',
  "export { top as a, later as b, shadowed as default };",
].join("\n");

Deno.test("moduleSyntaxes: imports, dynamic imports with a string, lists of exports, default exports, in one run", async () => {
  const texts = new Map([["chunk-X.js", CHUNK], ["dist-Y.js", "var a = () => 1;\nexport default a();"]]);
  const found = await moduleSyntaxes(texts);
  const chunk = found.get("chunk-X.js")!;
  const pick = (kind: string) => chunk.filter((piece) => piece.kind === kind);
  assert.deepEqual(pick("import").map((piece) => piece.kind === "import" && [piece.source, piece.bindings]), [
    ["./chunk-A.js", [{ type: "named", local: "X", imported: "a" }]],
  ]);
  assert.deepEqual(pick("dynamic").map((piece) => CHUNK.slice(piece.start, piece.end)), [
    'import("./chunk-B.js")',
    'import("node:v8")',
  ]);
  assert.deepEqual(pick("export").map((piece) => piece.kind === "export" && piece.specifiers), [[
    { local: "top", exported: "a" },
    { local: "later", exported: "b" },
    { local: "shadowed", exported: "default" },
  ]]);
  const other = found.get("dist-Y.js")!;
  assert.equal(other.length, 1);
  const [exported] = other;
  assert.ok(exported.kind === "export" && exported.defaultStart !== undefined);
  assert.equal("var a = () => 1;\nexport default a();".slice(exported.defaultStart, exported.end), "a();");
});

Deno.test("moduleSyntaxes: a top-level binding that a function, a class's static block or a loop in a method assigns is reported; a shadowed one, or one assigned at the top level, is not", async () => {
  const found = await moduleSyntaxes(new Map([["chunk.js", CHUNK]]));
  const reassigned = found.get("chunk.js")!.flatMap((piece) =>
    piece.kind === "reassigned" ? [`${piece.name}: ${CHUNK.slice(piece.start, piece.end)}`] : []
  );
  assert.deepEqual(reassigned, [
    "other: other = 4",
    "later: later = 5",
    "top: top = 9",
    "later: for (later of []) {}",
    "p: [p, { q }] = [3, { q: 4 }]",
    "q: [p, { q }] = [3, { q: 4 }]",
  ]);
});
