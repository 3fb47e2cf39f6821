/** cli/bundle_body.ts: a bundle run as a function's body; its module syntax as cli/bundle_syntax.ts finds it. */

import assert from "node:assert/strict";
import { join } from "node:path";
import { functionBody, metaName } from "./bundle_body.ts";
import { chunksEntry } from "./bundle_chunks.ts";
import { BundleBodyError, moduleSyntax } from "./bundle_syntax.ts";
import { evalEntry, literalEntry } from "../bench/bundle_entries.ts";

/** A module with each kind of import of a built-in module, and the same texts where they are not syntax. */
const MODULE = [
  'const quoted = `import a from "node:fs"; import.meta.url \u2014 caf\u00e9 \u{1f511}`;',
  'import{parseArgs as pa}from"node:util";const pattern=/import\\.meta"/;',
  'import whole, * as space from "node:util";',
  'import { default as again, "inspect" as show } from "node:util";',
  'import "node:timers";',
  'const closing = "/* not a comment */ *@kopf-end@";',
  "// import.meta in a comment; import x from 'node:os';",
  "console.log(JSON.stringify({",
  "  url: import.meta.url, main: import.meta.main, resolved: import.meta.resolve('./x.js'), quoted,",
  "  pattern: pattern.source, closing, pa: typeof pa, whole: typeof whole.inspect, space: typeof space.inspect,",
  "  spaceDefault: space.default === whole, again: again === whole, show: typeof show,",
  "}));",
].join("\n");

Deno.test("moduleSyntax: Deno's parser finds the imports and import.meta in the code, not in strings, patterns or comments", async () => {
  const syntax = await moduleSyntax(MODULE);
  assert.deepEqual(syntax.map((piece) => piece.kind), ["import", "import", "import", "import", "meta", "meta", "meta"]);
  const [first, second, third, fourth] = syntax;
  // Places are string indices: the characters beyond ASCII (one of them two halves) before them count as such.
  assert.equal(MODULE.slice(first.start, first.end), 'import{parseArgs as pa}from"node:util";');
  assert.deepEqual(first.kind === "import" && first.bindings, [{ type: "named", local: "pa", imported: "parseArgs" }]);
  assert.deepEqual(second.kind === "import" && second.bindings, [
    { type: "default", local: "whole" },
    { type: "namespace", local: "space" },
  ]);
  assert.deepEqual(third.kind === "import" && third.bindings, [
    { type: "named", local: "again", imported: "default" },
    { type: "named", local: "show", imported: "inspect" },
  ]);
  assert.deepEqual(fourth.kind === "import" && [fourth.source, fourth.bindings], ["node:timers", []]);
  for (const meta of syntax.slice(4)) assert.equal(MODULE.slice(meta.start, meta.end), "import.meta");
});

Deno.test("functionBody and chunksEntry (and the bench's other entries): the module runs as a function's body with the entry's import.meta", async () => {
  const meta = metaName(MODULE);
  const syntax = await moduleSyntax(MODULE);
  const body = functionBody(MODULE, syntax, meta);
  assert.ok(body.body.startsWith('"use strict";'), "strict, as a module is");
  assert.deepEqual(body.builtins, ["node:util", "node:timers"]);
  // The entry imports them: the first use of `process` would set up Node's process object.
  assert.ok(!body.body.includes("process"), "the body does not use process.getBuiltinModule");
  const folder = await Deno.makeTempDir({ prefix: "kopf-bundle-entry-test-" });
  const entries = [
    ["operator.js", chunksEntry(new Map([["bundle.js", MODULE]]), new Map([["bundle.js", syntax]]), "bundle.js")],
    ["literal.js", literalEntry(body, meta)],
    ["eval.js", evalEntry(body, meta)],
  ];
  for (const [name, text] of entries) {
    const entry = join(folder, name);
    await Deno.writeTextFile(entry, text);
    const output = await new Deno.Command(Deno.execPath(), { args: ["run", "--no-config", entry], stdin: "null" })
      .output();
    const stderr = new TextDecoder().decode(output.stderr);
    assert.equal(output.code, 0, `${name}: ${stderr}`);
    const url = new URL(`file://${entry}`).href;
    assert.deepEqual(JSON.parse(new TextDecoder().decode(output.stdout)), {
      url,
      main: false,
      resolved: new URL("./x.js", url).href,
      quoted: 'import a from "node:fs"; import.meta.url \u2014 caf\u00e9 \u{1f511}',
      pattern: 'import\\.meta"',
      closing: "/* not a comment */ *@kopf-end@",
      pa: "function",
      whole: "function",
      space: "function",
      spaceDefault: true,
      again: true,
      show: "function",
    }, name);
    // Deno's graph holds the entry and the built-in modules alone: the body is not a module it parses.
    const info = await new Deno.Command(Deno.execPath(), { args: ["info", "--json", "--no-config", entry] }).output();
    const graph = JSON.parse(new TextDecoder().decode(info.stdout)) as {
      modules: { kind: string; dependencies?: { specifier: string }[] }[];
    };
    assert.deepEqual(graph.modules.map((module) => module.kind).sort(), ["esm", "node", "node"], name);
    const dependencies = graph.modules.find((module) => module.kind === "esm")!.dependencies ?? [];
    assert.deepEqual(dependencies.map((dependency) => dependency.specifier), ["node:util", "node:timers"], name);
  }
});

Deno.test("functionBody: exports, imports of anything but a built-in module, and module syntax left over are refused", async () => {
  const exported = "export const x = 1;";
  assert.throws(
    () => functionBody(exported, [{ kind: "export", start: 0, end: exported.length }], "m"),
    (error) => error instanceof BundleBodyError && /exports names/.test(error.message),
  );
  const imported = 'import x from "./x.js";\nx();';
  const syntax = await moduleSyntax(imported);
  assert.throws(
    () => functionBody(imported, syntax, "m"),
    (error) => error instanceof BundleBodyError && /imports \.\/x\.js, which it should hold/.test(error.message),
  );
  // A piece the parser's report would have missed: the compilation says so rather than a broken bundle.
  assert.throws(
    () => functionBody(MODULE, [], "m"),
    (error) => error instanceof BundleBodyError && /does not compile as a function's body/.test(error.message),
  );
});

Deno.test("metaName: a name the text does not hold", () => {
  assert.equal(metaName("const x = 1;"), "kopf$importMeta");
  assert.equal(metaName("const kopf$importMeta = 1; kopf$importMeta$;"), "kopf$importMeta$$");
});
