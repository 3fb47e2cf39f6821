/**
 * The chunks of `deno bundle --code-splitting` in one entry module, each chunk the body of an async
 * function (cli/bundle_body.ts) held in a comment, compiled when it is first loaded.
 *
 * The CLI imports its commands on demand, and the framework its optional parts (peering, admission,
 * YAML kubeconfigs, tracing): split, an operator compiles and runs the code that it loads, not the
 * generators of `kopf generate` or the YAML parser. A chunk's static imports of other chunks are
 * awaited at its start, depth first in their order, as a module's are; its dynamic imports load on
 * demand; its exports are handed over as the getters of the object its function returns.
 *
 * An importer binds the values of the names it imports when it starts, where a module's import
 * stays bound to the exporter's variable: the two differ only where the variable changes after the
 * exporter ran, or while it runs (a cycle of imports). {@linkcode chunksEntry} refuses both, and
 * `kopf build` bundles without splitting then.
 *
 * @module
 */

import {
  builtinImports,
  builtinNamespaces,
  builtinsName,
  chunkBody,
  loadName,
  META_ARGUMENT,
  metaName,
} from "./bundle_body.ts";
import { BundleBodyError, type ModuleSyntax } from "./bundle_syntax.ts";

/**
 * The entry module of a bundle's chunks: each chunk a strict script that declares its async function,
 * held in a comment of a function of its own, whose text (`Function.prototype.toString`) is a slice
 * of the module's source; a loader that runs each script once, at the chunk's first load, by an
 * indirect `eval` and calls the function it declares; and the entry chunk loaded. Only the chunks
 * the entry chunk reaches are held.
 *
 * In a comment, the code is not scanned as a string literal at the start, and V8 compiles a slice
 * of the module's source without copying it, where the async function constructor builds a source of
 * its own around the body (a second copy of the code in V8's heap, docs/performance/memory.md, "The
 * bundle in chunks, compiled from slices of the entry"). The script declares its function rather
 * than holding it in parentheses, which V8 takes for a sign to compile it at once. The comments'
 * `*` + `/` pairs are written with a marker that no body holds, and restored in the chunks that
 * hold one (a copy, for those only). The built-in modules of the chunks that the entry chunk
 * imports statically are imported by the entry; the others, by the loader before their chunk runs.
 *
 * @param texts The chunks' texts by their file names, as `deno bundle` wrote them into its folder.
 * @param syntaxes Their module syntax, by the same names (`moduleSyntaxes` of cli/bundle_syntax.ts).
 * @param entry The name of the entry chunk.
 * @throws {BundleBodyError} For chunks that import each other in a cycle, a name imported from a
 *   chunk whose variable a function assigns, or what `chunkBody` refuses.
 */
export function chunksEntry(
  texts: ReadonlyMap<string, string>,
  syntaxes: ReadonlyMap<string, readonly ModuleSyntax[]>,
  entry: string,
): string {
  const meta = metaName([...texts.values()].join("\n"));
  const order = reachable(syntaxes, entry);
  const index = new Map(order.map((name, at) => [name, at]));
  refuseCycles(syntaxes, order);
  refuseChangingImports(syntaxes, order);
  const chunkOf = (source: string) => source.startsWith("./") ? index.get(source.slice(2)) : undefined;
  const bodies = order.map((name) => chunkBody(texts.get(name)!, syntaxes.get(name)!, meta, chunkOf));
  const eager = new Set(reachable(syntaxes, entry, false).flatMap((name) => bodies[index.get(name)!].builtins));
  const imported = [...eager];
  let marker = "@kopf-end@";
  while (bodies.some(({ body }) => body.includes(marker))) marker += "@";
  const close = "*" + "/";
  const declared = `${meta}_chunk`;
  const parameters = [meta, builtinsName(meta), loadName(meta)].join(",");
  const holders = bodies.map(({ body }, at) =>
    `function kopf$chunk${at}() {/*"use strict";async function ${declared}(${parameters}){${
      body.replaceAll(close, `*${marker}`)
    }\n}${declared}*/}`
  );
  const chunks = bodies.map(({ body, builtins }, at) =>
    `[kopf$chunk${at}, ${JSON.stringify(builtins.filter((specifier) => !eager.has(specifier)))}, ${
      body.includes(close)
    }]`
  );
  return [
    "// Made by `kopf build`: the operator's chunks as async functions' bodies, each compiled when it is",
    "// first loaded; as modules, Deno would parse them all in full at every start",
    `// (docs/performance/memory.md, "The bundle outside Deno's module graph").`,
    builtinImports(imported).trimEnd(),
    ...holders,
    `const kopf$chunks = [${chunks.join(", ")}];`,
    `const kopf$meta = ${META_ARGUMENT};`,
    `const kopf$builtins = ${builtinNamespaces(imported)};`,
    "const kopf$loaded = [];",
    "function kopf$load(index) {",
    "  return kopf$loaded[index] ??= (async () => {",
    "    const [holder, builtins, marked] = kopf$chunks[index];",
    "    for (const specifier of builtins) kopf$builtins[specifier] ??= await import(specifier);",
    "    const text = holder.toString();",
    '    const source = text.slice(text.indexOf("/*") + 2, -3);',
    `    const script = marked ? source.replaceAll(${JSON.stringify(`*${marker}`)}, ${
      JSON.stringify(close)
    }) : source;`,
    "    return await (0, eval)(script)(kopf$meta, kopf$builtins, kopf$load);",
    "  })();",
    "}",
    "await kopf$load(0);",
  ].filter((line) => line !== "").join("\n") + "\n";
}

/** The chunks that `from` reaches by imports (`dynamic`: also by dynamic ones), `from` first, depth first. */
function reachable(
  syntaxes: ReadonlyMap<string, readonly ModuleSyntax[]>,
  from: string,
  dynamic = true,
): string[] {
  const found: string[] = [];
  const visit = (name: string) => {
    if (found.includes(name)) return;
    found.push(name);
    for (const next of chunkImports(syntaxes, name, dynamic)) visit(next);
  };
  visit(from);
  return found;
}

/** The chunks that a chunk imports (`dynamic`: also dynamically), in the order of the imports. */
function chunkImports(
  syntaxes: ReadonlyMap<string, readonly ModuleSyntax[]>,
  name: string,
  dynamic: boolean,
): string[] {
  const syntax = syntaxes.get(name);
  if (!syntax) throw new BundleBodyError(`deno bundle wrote no chunk ${name}, which another chunk imports.`);
  return syntax.flatMap((piece) =>
    (piece.kind === "import" || (dynamic && piece.kind === "dynamic")) && piece.source.startsWith("./")
      ? [piece.source.slice(2)]
      : []
  );
}

/** Throws where the static imports among `chunks` (and the chunks they import) form a cycle. */
function refuseCycles(syntaxes: ReadonlyMap<string, readonly ModuleSyntax[]>, chunks: readonly string[]): void {
  const done = new Set<string>();
  const path: string[] = [];
  const visit = (name: string) => {
    if (done.has(name)) return;
    if (path.includes(name)) {
      throw new BundleBodyError(`The chunks import each other in a cycle: ${[...path, name].join(" -> ")}.`);
    }
    path.push(name);
    for (const next of chunkImports(syntaxes, name, false)) visit(next);
    path.pop();
    done.add(name);
  };
  for (const name of chunks) visit(name);
}

/** Throws where a chunk imports by name a binding that a function of its exporter assigns. */
function refuseChangingImports(
  syntaxes: ReadonlyMap<string, readonly ModuleSyntax[]>,
  chunks: readonly string[],
): void {
  for (const importer of chunks) {
    for (const piece of syntaxes.get(importer)!) {
      if (piece.kind !== "import" || !piece.source.startsWith("./")) continue;
      const exporter = piece.source.slice(2);
      const exporterSyntax = syntaxes.get(exporter)!;
      const locals = new Map(
        exporterSyntax.flatMap((other) => other.kind === "export" ? other.specifiers ?? [] : [])
          .map(({ local, exported }) => [exported, local]),
      );
      const changing = new Set(exporterSyntax.flatMap((other) => other.kind === "reassigned" ? [other.name] : []));
      for (const binding of piece.bindings) {
        if (binding.type === "namespace") continue;
        const local = locals.get(binding.type === "default" ? "default" : binding.imported!);
        if (local !== undefined && changing.has(local)) {
          throw new BundleBodyError(
            `${importer} imports ${local} of ${exporter}, which a function of ${exporter} assigns.`,
          );
        }
      }
    }
  }
}
