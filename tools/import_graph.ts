/**
 * The import graph of a source tree, read from the files themselves: which module imports which,
 * counting static imports, re-exports, `import type`, `export type` and dynamic `import("…")` alike.
 * Type-only imports count because a circle made of them is still a circle for a reader: the files
 * cannot be understood (or moved) one without the other.
 *
 * The reader relies on `deno fmt`'s layout: import and export statements start at column 0, and
 * their specifier is the string after `from` (or after `import` alone, for side-effect imports).
 * Lines inside JSDoc and `//` comments are skipped, so examples in documentation are not edges.
 *
 * @example
 * ```ts ignore
 * const graph = await readImportGraph(".", ["mod.ts", "src"]);
 * console.log(findCycles(graph));
 * ```
 *
 * @module
 */

import { dirname, join, relative, resolve } from "node:path";

/** One import: the importing file, the imported file (both relative to the root), and the line. */
export interface ImportEdge {
  /** The importing module, relative to the root, with `/` separators. */
  from: string;
  /** The imported module, relative to the root; outside the root it starts with `../`. */
  to: string;
  /** The 1-based line where the statement ends (where the specifier is). */
  line: number;
  /** Whether the statement imports types only (`import type`, `export type`, `typeof import()`). */
  typeOnly: boolean;
}

/** All modules of a tree (relative paths) and the relative imports between them. */
export interface ImportGraph {
  /** Every module read, sorted. */
  modules: string[];
  /** Every relative import; bare and URL specifiers (npm:, node:, jsr:) are not edges. */
  edges: ImportEdge[];
}

// `export function …`, `export type X = …` are declarations and `import.meta`, `import(…)` are
// expressions: only these forms start a statement that names a module.
const STATEMENT_START = /^(import\b(?![.(])|export\s+(type\s+)?[{*])/;
const FROM_SPECIFIER = /\bfrom\s*["']([^"']+)["']/;
const SIDE_EFFECT_SPECIFIER = /^import\s*["']([^"']+)["']/;
const DYNAMIC_SPECIFIER = /\bimport\(\s*["']([^"']+)["']\s*\)/g;
const TYPE_ONLY_STATEMENT = /^(import|export)\s+type\b/;

/** The relative specifiers one module's text imports, with their line numbers. */
export function parseImports(text: string): { specifier: string; line: number; typeOnly: boolean }[] {
  const found: { specifier: string; line: number; typeOnly: boolean }[] = [];
  const lines = text.split("\n");
  let statement: string | undefined;
  let inBlockComment = false;
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i];
    if (inBlockComment) {
      if (line.includes("*/")) inBlockComment = false;
      continue;
    }
    const trimmed = line.trimStart();
    if (trimmed.startsWith("/*")) {
      if (!trimmed.includes("*/")) inBlockComment = true;
      continue;
    }
    if (trimmed.startsWith("//")) continue;
    if (statement === undefined && STATEMENT_START.test(line)) statement = "";
    if (statement !== undefined) {
      statement += (statement ? " " : "") + line.trim();
      const specifier = statement.match(FROM_SPECIFIER)?.[1] ?? statement.match(SIDE_EFFECT_SPECIFIER)?.[1];
      if (specifier !== undefined) {
        found.push({ specifier, line: i + 1, typeOnly: TYPE_ONLY_STATEMENT.test(statement) });
      }
      // `deno fmt` ends every statement with `;`: a local `export { a };` ends without a specifier.
      if (specifier !== undefined || line.trimEnd().endsWith(";")) statement = undefined;
      continue;
    }
    for (const match of line.matchAll(DYNAMIC_SPECIFIER)) {
      found.push({ specifier: match[1], line: i + 1, typeOnly: /\btypeof\s+import\(/.test(line) });
    }
  }
  return found.filter((item) => item.specifier.startsWith("./") || item.specifier.startsWith("../"));
}

async function listModules(root: string, folder: string, into: string[]): Promise<void> {
  for await (const entry of Deno.readDir(join(root, folder))) {
    const path = folder ? `${folder}/${entry.name}` : entry.name;
    if (entry.isDirectory) await listModules(root, path, into);
    else if (entry.isFile && entry.name.endsWith(".ts") && !entry.name.endsWith("_test.ts")) into.push(path);
  }
}

/**
 * Reads the `.ts` modules of the given files and folders of `root` (e.g. `["mod.ts", "src", "cli"]`;
 * tests excluded: they may import whatever they test) and the relative imports between them.
 */
export async function readImportGraph(root: string, include: readonly string[]): Promise<ImportGraph> {
  const modules: string[] = [];
  for (const item of include) {
    if ((await Deno.stat(join(root, item))).isDirectory) await listModules(root, item, modules);
    else modules.push(item);
  }
  modules.sort();
  const edges: ImportEdge[] = [];
  for (const module of modules) {
    const text = await Deno.readTextFile(join(root, module));
    for (const { specifier, line, typeOnly } of parseImports(text)) {
      const target = relative(resolve(root), resolve(root, dirname(module), specifier)).split("\\").join("/");
      edges.push({ from: module, to: target, line, typeOnly });
    }
  }
  return { modules, edges };
}

/**
 * The circles of the graph: every strongly connected component with more than one module (or a
 * module importing itself), each as a sorted list of modules. Found with Tarjan's algorithm.
 */
export function findCycles(graph: ImportGraph): string[][] {
  const next = new Map<string, string[]>();
  for (const module of graph.modules) next.set(module, []);
  for (const edge of graph.edges) next.get(edge.from)?.push(edge.to);

  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const onStack = new Set<string>();
  const stack: string[] = [];
  const cycles: string[][] = [];
  let counter = 0;

  // Iterative, so a deep chain of imports cannot overflow the call stack.
  for (const start of graph.modules) {
    if (index.has(start)) continue;
    const work: { node: string; child: number }[] = [{ node: start, child: 0 }];
    index.set(start, counter);
    low.set(start, counter++);
    stack.push(start);
    onStack.add(start);
    while (work.length) {
      const frame = work[work.length - 1];
      const children = next.get(frame.node) ?? [];
      if (frame.child < children.length) {
        const child = children[frame.child++];
        if (!next.has(child)) continue;
        if (!index.has(child)) {
          index.set(child, counter);
          low.set(child, counter++);
          stack.push(child);
          onStack.add(child);
          work.push({ node: child, child: 0 });
        } else if (onStack.has(child)) {
          low.set(frame.node, Math.min(low.get(frame.node)!, index.get(child)!));
        }
        continue;
      }
      work.pop();
      if (work.length) {
        const parent = work[work.length - 1].node;
        low.set(parent, Math.min(low.get(parent)!, low.get(frame.node)!));
      }
      if (low.get(frame.node) === index.get(frame.node)) {
        const component: string[] = [];
        let member: string;
        do {
          member = stack.pop()!;
          onStack.delete(member);
          component.push(member);
        } while (member !== frame.node);
        const selfImport = children.includes(frame.node);
        if (component.length > 1 || selfImport) cycles.push(component.sort());
      }
    }
  }
  return cycles.sort((a, b) => a[0].localeCompare(b[0]));
}
