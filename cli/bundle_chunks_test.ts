/** cli/bundle_chunks.ts: the chunks of a split bundle run as functions' bodies from one entry module. */

import assert from "node:assert/strict";
import { join } from "node:path";
import { chunksEntry } from "./bundle_chunks.ts";
import { BundleBodyError, moduleSyntaxes } from "./bundle_syntax.ts";

/** Chunks as `deno bundle --code-splitting` writes them: lists of imports and exports, a lazy chunk. */
const CHUNKS = new Map([
  [
    "entry.js",
    [
      'import{a as greet,b as count}from"./chunk-A.js";import*as shared from"./chunk-A.js";',
      'import{parseArgs}from"node:util";',
      'console.log(JSON.stringify(["entry", greet("x"), count, typeof parseArgs]));',
      'const lazy = await import("./lazy-B.js");',
      'console.log(JSON.stringify(["lazy", lazy.run(), lazy.run(), lazy.state, lazy.default, shared.a === greet]));',
      'const { parse } = await import("./dist-E.js");',
      'console.log(JSON.stringify(["CommonJS", parse("abc")]));',
    ].join("\n"),
  ],
  [
    "chunk-A.js",
    'import{c as side}from"./chunk-C.js";\nconsole.log(JSON.stringify(["A", side]));\n' +
    'function g(n){return "hello " + n}\nvar count = 1;\nexport{g as a,count as b};',
  ],
  ["chunk-C.js", 'console.log(JSON.stringify(["C"]));\nvar c = "c";\nexport{c};'],
  [
    "lazy-B.js",
    'import{a as g}from"./chunk-A.js";import{join}from"node:path";\n' +
    "var state = 0; function bump(){ return ++state; }\n" +
    'export{bump as run,state};\nexport default join("a", "b") + import.meta.url.slice(0, 7);',
  ],
  // A CommonJS package's exports, which esbuild's code reads by their names from the chunk's namespace.
  ["dist-E.js", "var exportsOf = { parse: (text) => text.length };\nexport default exportsOf;"],
  ["orphan-D.js", 'console.log("never held");\nexport{};'],
]);

Deno.test("chunksEntry: chunks run once each, imports first and in order, lazy chunks on demand, exports read live", async () => {
  const entry = chunksEntry(CHUNKS, await moduleSyntaxes(CHUNKS), "entry.js");
  assert.ok(!entry.includes("never held"), "a chunk that the entry does not reach is left out");
  const folder = await Deno.makeTempDir({ prefix: "kopf-bundle-chunks-test-" });
  try {
    const file = join(folder, "operator.js");
    await Deno.writeTextFile(file, entry);
    const output = await new Deno.Command(Deno.execPath(), { args: ["run", "--no-config", file], stdin: "null" })
      .output();
    assert.equal(output.code, 0, new TextDecoder().decode(output.stderr));
    const lines = new TextDecoder().decode(output.stdout).trim().split("\n").map((line) => JSON.parse(line));
    assert.deepEqual(lines, [
      ["C"],
      ["A", "c"],
      ["entry", "hello x", 1, "function"],
      // The lazy chunk's `state` changes after it ran: its namespace's getter reads it as it is now.
      ["lazy", 1, 2, 2, `${join("a", "b")}file://`, true],
      ["CommonJS", 3],
    ]);
    // Deno's graph holds the entry and the built-in module of the chunks it loads at once: node:path comes later.
    const info = await new Deno.Command(Deno.execPath(), { args: ["info", "--json", "--no-config", file] }).output();
    const graph = JSON.parse(new TextDecoder().decode(info.stdout)) as {
      modules: { kind: string; dependencies?: { specifier: string }[] }[];
    };
    const dependencies = graph.modules.find((module) => module.kind === "esm")!.dependencies ?? [];
    assert.deepEqual(dependencies.map((dependency) => dependency.specifier), ["node:util"]);
  } finally {
    await Deno.remove(folder, { recursive: true });
  }
});

Deno.test("chunksEntry: chunks that import each other in a cycle are refused", async () => {
  const texts = new Map([
    ["entry.js", 'import{a}from"./chunk-A.js";\nconsole.log(a);'],
    ["chunk-A.js", 'import{b}from"./chunk-B.js";\nvar a = 1;\nexport{a};'],
    ["chunk-B.js", 'import{a}from"./chunk-A.js";\nvar b = () => a;\nexport{b};'],
  ]);
  const syntaxes = await moduleSyntaxes(texts);
  assert.throws(
    () => chunksEntry(texts, syntaxes, "entry.js"),
    (error) =>
      error instanceof BundleBodyError &&
      error.message.includes("cycle: entry.js -> chunk-A.js -> chunk-B.js -> chunk-A.js"),
  );
});

Deno.test("chunksEntry: a name imported from a chunk whose variable a function assigns is refused", async () => {
  const texts = new Map([
    ["entry.js", 'import{a,b}from"./chunk-A.js";\nb();\nconsole.log(a);'],
    ["chunk-A.js", "var count = 1;\nfunction bump() { count++; }\nexport{count as a,bump as b};"],
  ]);
  const syntaxes = await moduleSyntaxes(texts);
  assert.throws(
    () => chunksEntry(texts, syntaxes, "entry.js"),
    (error) =>
      error instanceof BundleBodyError &&
      error.message === "entry.js imports count of chunk-A.js, which a function of chunk-A.js assigns.",
  );
});
