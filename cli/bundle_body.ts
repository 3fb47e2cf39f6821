/**
 * The bundle of `kopf build` as the body of an async function, held as a string by a small entry
 * module that compiles and runs it: V8 compiles it, lazily, and Deno does not parse it.
 *
 * Deno parses every module it loads in full to find its imports, and a container of the image starts
 * with an empty Deno cache: the bundle (~0.6 MB minified) was parsed as a module at every start,
 * which made the start's peak memory (~20 MiB above the idle operator's) and which glibc's allocator
 * kept (docs/performance.md, "The bundle outside Deno's module graph").
 *
 * A function's body cannot hold the module syntax that `deno bundle` leaves: its `import`
 * declarations of Node's built-in modules move to the entry, which passes their namespaces in (the
 * body declares its bindings from them, hoisted, as imports are), and `import.meta` becomes the
 * entry module's, passed in too. Their places come from Deno's own parser (a lint plugin run by
 * `deno lint`), so the same text inside a string, a template or a regular expression stays as it
 * is; the body is compiled once at build time, which fails on any module syntax left.
 *
 * @module
 */

import { join } from "node:path";

/** A piece of module syntax in the bundle, with its place in the text (indices of the string). */
export type ModuleSyntax =
  | {
    kind: "import";
    start: number;
    end: number;
    /** The module imported, e.g. `node:util`. */
    source: string;
    /** What it binds: `default`, `namespace`, or a `named` export (`imported`) under a local name. */
    bindings: { type: "default" | "namespace" | "named"; local: string; imported?: string }[];
  }
  | { kind: "meta"; start: number; end: number }
  | { kind: "export"; start: number; end: number };

/** The module syntax of a bundle could not be made a function's body: what and why. */
export class BundleBodyError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "BundleBodyError";
  }
}

/** The lint plugin that reports the module syntax of a file, each piece as a JSON message. */
const PLUGIN = `
const report = (context, node, details) =>
  context.report({ node, message: JSON.stringify({ ...details, start: node.range[0], end: node.range[1] }) });
const name = (node) => node.type === "Identifier" ? node.name : node.value;
export default {
  name: "kopf-bundle",
  rules: {
    "module-syntax": {
      create(context) {
        return {
          ImportDeclaration(node) {
            report(context, node, {
              kind: "import",
              source: node.source.value,
              bindings: node.specifiers.map((specifier) =>
                specifier.type === "ImportDefaultSpecifier"
                  ? { type: "default", local: specifier.local.name }
                  : specifier.type === "ImportNamespaceSpecifier"
                  ? { type: "namespace", local: specifier.local.name }
                  : { type: "named", local: specifier.local.name, imported: name(specifier.imported) }
              ),
            });
          },
          MetaProperty(node) {
            if (node.meta.name === "import") report(context, node, { kind: "meta" });
          },
          ExportNamedDeclaration(node) { report(context, node, { kind: "export" }); },
          ExportDefaultDeclaration(node) { report(context, node, { kind: "export" }); },
          ExportAllDeclaration(node) { report(context, node, { kind: "export" }); },
        };
      },
    },
  },
};
`;

/**
 * The module syntax of a module's text, found by Deno's parser: `deno lint` with a plugin of ours
 * and none of its own rules, in `folder` (which must be empty and is left with the files it used).
 *
 * @param text The module's text.
 * @param folder An empty folder for the plugin, its configuration and the text.
 */
export async function moduleSyntax(text: string, folder: string): Promise<ModuleSyntax[]> {
  await Deno.writeTextFile(join(folder, "plugin.js"), PLUGIN);
  await Deno.writeTextFile(
    join(folder, "deno.json"),
    JSON.stringify({ lint: { plugins: ["./plugin.js"], rules: { tags: [], include: [] } } }),
  );
  const file = join(folder, "bundle.js");
  await Deno.writeTextFile(file, text);
  const output = await new Deno.Command(Deno.execPath(), {
    args: ["lint", "--json", `--config=${join(folder, "deno.json")}`, file],
    env: { NO_COLOR: "1" },
    stdin: "null",
  }).output();
  const decoder = new TextDecoder();
  let report: { diagnostics?: { code: string; message: string }[]; errors?: { message: string }[] };
  try {
    report = JSON.parse(decoder.decode(output.stdout));
  } catch {
    throw new BundleBodyError(`'deno lint' could not read the bundle: ${decoder.decode(output.stderr).trim()}`);
  }
  if (report.errors?.length) {
    throw new BundleBodyError(`'deno lint' could not parse the bundle: ${report.errors[0].message}`);
  }
  return (report.diagnostics ?? [])
    .filter((diagnostic) => diagnostic.code === "kopf-bundle/module-syntax")
    .map((diagnostic) => JSON.parse(diagnostic.message) as ModuleSyntax)
    .sort((a, b) => a.start - b.start);
}

/**
 * A name for the entry's `import.meta` in the body: one that the bundle's text does not hold.
 *
 * @param text The bundle's text.
 */
export function metaName(text: string): string {
  let name = "kopf$importMeta";
  while (text.includes(name)) name += "$";
  return name;
}

/** A bundle's code as an async function's body, and the built-in modules it takes as its second parameter. */
export interface BundleBody {
  /** The function's body. */
  body: string;
  /** The built-in modules the bundle imported (e.g. `node:path`), in the order of their first import. */
  builtins: string[];
}

/**
 * The name of the body's second parameter, which holds the namespaces of the built-in modules by
 * their specifiers: not in the bundle's text, as `meta` is not.
 *
 * @param meta The parameter for `import.meta` (see {@linkcode metaName}).
 */
export function builtinsName(meta: string): string {
  return `${meta}_builtins`;
}

/**
 * The bundle's text as an async function's body: its `import.meta` the parameter `meta`, its imports
 * of built-in modules declarations (hoisted, as imports are) that read the namespaces the entry
 * imported and passed in; strict as a module is. Compiled (not run) before it is returned.
 *
 * @param text The bundle, a module.
 * @param syntax Its module syntax, as {@linkcode moduleSyntax} found it.
 * @param meta The parameter that stands for `import.meta` (see {@linkcode metaName}).
 * @throws {BundleBodyError} For an export, or an import of anything but a built-in module.
 */
export function functionBody(text: string, syntax: readonly ModuleSyntax[], meta: string): BundleBody {
  const builtins = builtinsName(meta);
  const declarations: string[] = [];
  const pieces: string[] = [];
  const modules = new Set<string>();
  let at = 0;
  for (const piece of syntax) {
    if (piece.kind === "export") {
      throw new BundleBodyError("The bundle exports names; an operator's bundle is run, not imported.");
    }
    pieces.push(text.slice(at, piece.start));
    at = piece.end;
    if (piece.kind === "meta") {
      pieces.push(meta);
      continue;
    }
    if (!piece.source.startsWith("node:")) {
      throw new BundleBodyError(
        `The bundle imports ${piece.source}, which it should hold: only Node's built-in modules are left outside.` +
          " Import it from the handlers by a path, a URL or an npm: name that deno bundle can read.",
      );
    }
    modules.add(piece.source);
    declarations.push(builtinDeclaration(`${builtins}[${JSON.stringify(piece.source)}]`, piece.bindings));
    // The declaration's place keeps a statement's end, in case the code before it needs one.
    pieces.push(";");
  }
  pieces.push(text.slice(at));
  const body = `"use strict";${declarations.join("")}\n${pieces.join("")}`;
  try {
    new AsyncFunction(meta, builtins, body);
  } catch (error) {
    throw new BundleBodyError(`The bundle does not compile as a function's body: ${(error as Error).message}`);
  }
  return { body, builtins: [...modules] };
}

/**
 * The entry module: the body in a comment of a function of its own (`holder`), whose text
 * (`Function.prototype.toString`, a slice of the module's source) gives it back to the async
 * function constructor, called with the entry's `import.meta` (its `main` false: the body is not the
 * program's main module, the entry is) and the built-in modules, which the entry imports.
 *
 * In a comment, the code is neither scanned as a string literal at the start nor kept as one beside
 * the module's source and the function's (one copy of the code fewer in V8's heap,
 * docs/performance.md). The comment's `*` + `/` pairs are written with a marker that the body does
 * not hold, and restored.
 *
 * @param body The function's body, from {@linkcode functionBody}.
 * @param meta Its parameter for `import.meta`.
 */
export function bodyEntry({ body, builtins }: BundleBody, meta: string): string {
  let marker = "@kopf-end@";
  while (body.includes(marker)) marker += "@";
  const close = "*" + "/";
  const held = body.replaceAll(close, `*${marker}`);
  const source = `holder.toString().slice(holder.toString().indexOf("/*") + 2, -3).replaceAll(${
    JSON.stringify(`*${marker}`)
  }, ${JSON.stringify(close)})`;
  return [
    "// Made by `kopf build`: the operator as an async function's body, which V8 compiles lazily; as a",
    "// module, Deno would parse it in full at every start (docs/performance.md).",
    `function holder() {/*${held}*/}`,
    runEntry(source, meta, builtins),
  ].join("\n");
}

/**
 * A module that compiles a body, given as the JavaScript expression `source` (a string literal, or
 * an `await` of one read from elsewhere), with the async function constructor and calls it with its
 * `import.meta` and the namespaces of the built-in modules it uses.
 *
 * @param source The expression that gives the body.
 * @param meta Its parameter for `import.meta`.
 * @param builtins The built-in modules the body uses ({@linkcode BundleBody}).
 */
export function runEntry(source: string, meta: string, builtins: readonly string[]): string {
  return `${builtinImports(builtins)}await new (async () => {}).constructor(${JSON.stringify(meta)}, ` +
    `${JSON.stringify(builtinsName(meta))}, ${source})(${bodyArguments(builtins)});\n`;
}

/**
 * The entry's import of each built-in module, as `kopf$builtinN` (the entry holds nothing else that
 * could be named so: the body is a string). `process.getBuiltinModule` in the body would do as well,
 * but the first use of `process` sets up Node's process object (4.3 MiB in a bare script).
 *
 * @param builtins The built-in modules the body uses ({@linkcode BundleBody}).
 */
export function builtinImports(builtins: readonly string[]): string {
  return builtins.map((specifier, index) => `import * as kopf$builtin${index} from ${JSON.stringify(specifier)};\n`)
    .join("");
}

/**
 * The arguments of the body's call in the entry: its `import.meta`, and the namespaces that
 * {@linkcode builtinImports} imported by their specifiers.
 *
 * @param builtins The built-in modules the body uses ({@linkcode BundleBody}).
 */
export function bodyArguments(builtins: readonly string[]): string {
  const namespaces = builtins.map((specifier, index) => `${JSON.stringify(specifier)}: kopf$builtin${index}`);
  return `{\n  url: import.meta.url,\n  filename: import.meta.filename,\n  dirname: import.meta.dirname,\n` +
    `  main: false,\n  resolve: (specifier) => import.meta.resolve(specifier),\n}, { ${namespaces.join(", ")} }`;
}

const AsyncFunction = (async () => {}).constructor as FunctionConstructor;

function builtinDeclaration(
  namespace: string,
  bindings: readonly { type: "default" | "namespace" | "named"; local: string; imported?: string }[],
): string {
  const parts = bindings.filter((binding) => binding.type === "namespace").map((binding) =>
    `var ${binding.local}=${namespace};`
  );
  const named = bindings.filter((binding) => binding.type !== "namespace").map((binding) =>
    `${JSON.stringify(binding.type === "default" ? "default" : binding.imported)}:${binding.local}`
  );
  if (named.length) parts.push(`var{${named.join(",")}}=${namespace};`);
  return parts.join("");
}
