/**
 * The house rules over the import graph (tools/layering.ts, docs/architecture.md): imports point
 * down the layers of `src/`, peers stay independent, the CLI uses only the published names, and
 * there are no circles, type imports included. The rules are checked on the repository itself,
 * and, so that a broken reader or checker cannot pass silently, on small graphs that break them.
 */

import assert from "node:assert/strict";
import { fileURLToPath } from "node:url";
import { findCycles, type ImportGraph, parseImports, readImportGraph } from "../tools/import_graph.ts";
import { checkLayering, ENTRY_POINTS } from "../tools/layering.ts";

const ROOT = fileURLToPath(new URL("../", import.meta.url));

function graphOf(edges: [string, string][]): ImportGraph {
  const modules = [...new Set(edges.flat())].sort();
  return { modules, edges: edges.map(([from, to]) => ({ from, to, line: 1, typeOnly: false })) };
}

Deno.test("the repository keeps the layers: no upward import, no import between peers, no circle", async () => {
  const graph = await readImportGraph(ROOT, [...ENTRY_POINTS, "src", "cli"]);
  // The reader must see the real graph, or an empty one would pass: a few edges known to exist.
  const has = (from: string, to: string) => graph.edges.some((edge) => edge.from === from && edge.to === to);
  assert.ok(graph.modules.length > 100, `only ${graph.modules.length} modules read`);
  assert.ok(has("mod.ts", "src/reactor/operator.ts"));
  assert.ok(has("src/handling/registry.ts", "src/handling/handlers.ts"), "a type import is an edge");
  assert.ok(
    has("src/reactor/cycle_steps.ts", "src/handling/execution.ts") ||
      has("src/reactor/cycle_steps.ts", "src/handling/causes.ts"),
  );
  assert.deepEqual(checkLayering(graph), []);
});

Deno.test("the reader finds static, type, multi-line, side-effect and dynamic imports, not documentation", () => {
  const text = [
    "/**",
    " * @example",
    " * ```ts",
    ' * import * as kopf from "../mod.ts";',
    ' * const m = await import("./doc_only.ts");',
    " * ```",
    " */",
    'import { a } from "./a.ts";',
    'import type { B } from "../b/b.ts";',
    "import {",
    "  c,",
    "  type C,",
    '} from "./c.ts";',
    'import "./side.ts";',
    'import { parseArgs } from "node:util";',
    'export { d } from "./d.ts";',
    'export type * from "./e.ts";',
    "export { a };",
    "export function f(): string {",
    '  return "from \\"./not_an_import.ts\\"";',
    "}",
    '// import { g } from "./commented.ts";',
    'const lazy = () => import("./lazy.ts");',
    "import.meta.main;",
    'import("./also_lazy.ts");',
  ].join("\n");
  assert.deepEqual(parseImports(text), [
    { specifier: "./a.ts", line: 8, typeOnly: false },
    { specifier: "../b/b.ts", line: 9, typeOnly: true },
    { specifier: "./c.ts", line: 13, typeOnly: false },
    { specifier: "./side.ts", line: 14, typeOnly: false },
    { specifier: "./d.ts", line: 16, typeOnly: false },
    { specifier: "./e.ts", line: 17, typeOnly: true },
    { specifier: "./lazy.ts", line: 23, typeOnly: false },
    { specifier: "./also_lazy.ts", line: 25, typeOnly: false },
  ]);
});

Deno.test("an upward import, an import between peers, and an escape of the CLI are reported", () => {
  const problems = checkLayering(graphOf([
    ["src/model/diff.ts", "src/reactor/operator.ts"],
    ["src/engines/queueing.ts", "src/kits/connect.ts"],
    ["cli/main.ts", "src/reactor/operator.ts"],
    ["src/api/client.ts", "mod.ts"],
    ["src/handling/registry.ts", "src/model/selector.ts"],
  ]));
  assert.equal(problems.length, 4, problems.join("\n"));
  assert.match(
    problems[0],
    /src\/model\/diff\.ts:1 imports src\/reactor\/operator\.ts: model\/ may not import the higher layer reactor\//,
  );
  assert.match(problems[1], /engines\/ and kits\/ share a layer/);
  assert.match(problems[2], /the CLI uses the library through "@kopf\/kopf"/);
  assert.match(problems[3], /src\/ must not import an entry point/);
});

Deno.test("a circle is reported, within one folder too, and a folder outside the layers is named", () => {
  const graph = graphOf([
    ["src/handling/a.ts", "src/handling/b.ts"],
    ["src/handling/b.ts", "src/handling/c.ts"],
    ["src/handling/c.ts", "src/handling/a.ts"],
    ["src/handling/c.ts", "src/handling/d.ts"],
    ["src/widgets/w.ts", "src/model/body.ts"],
  ]);
  assert.deepEqual(findCycles(graph), [["src/handling/a.ts", "src/handling/b.ts", "src/handling/c.ts"]]);
  const problems = checkLayering(graph);
  assert.equal(problems.length, 2, problems.join("\n"));
  assert.match(problems[0], /src\/widgets\/ is in no layer; add it to LAYERS/);
  assert.match(
    problems[1],
    /a circle of imports \(type imports count\): src\/handling\/a\.ts, src\/handling\/b\.ts, src\/handling\/c\.ts/,
  );
});
