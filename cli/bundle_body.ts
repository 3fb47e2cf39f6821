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
 * declarations of Node's built-in modules become `process.getBuiltinModule` calls (hoisted, as
 * imports are), and `import.meta` the entry module's, passed in. Their places come from Deno's own
 * parser (a lint plugin run by `deno lint`), so the same text inside a string, a template or a
 * regular expression stays as it is; the body is compiled once at build time, which fails on any
 * module syntax left.
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

/**
 * The bundle's text as an async function's body: its imports of built-in modules hoisted as
 * `process.getBuiltinModule` calls, its `import.meta` the parameter `meta`, strict as a module is.
 * Compiled (not run) before it is returned.
 *
 * @param text The bundle, a module.
 * @param syntax Its module syntax, as {@linkcode moduleSyntax} found it.
 * @param meta The parameter that stands for `import.meta` (see {@linkcode metaName}).
 * @throws {BundleBodyError} For an export, or an import of anything but a built-in module.
 */
export function functionBody(text: string, syntax: readonly ModuleSyntax[], meta: string): string {
  const declarations: string[] = [];
  const pieces: string[] = [];
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
    declarations.push(builtinDeclaration(piece.source, piece.bindings));
    // The declaration's place keeps a statement's end, in case the code before it needs one.
    pieces.push(";");
  }
  pieces.push(text.slice(at));
  const body = `"use strict";${declarations.join("")}\n${pieces.join("")}`;
  try {
    new AsyncFunction(meta, body);
  } catch (error) {
    throw new BundleBodyError(`The bundle does not compile as a function's body: ${(error as Error).message}`);
  }
  return body;
}

/**
 * The entry module: the body as a string literal, compiled as an async function and called with the
 * entry's `import.meta` (its `main` false: the body is not the program's main module, the entry is).
 *
 * @param body The function's body, from {@linkcode functionBody}.
 * @param meta Its parameter for `import.meta`.
 */
export function bodyEntry(body: string, meta: string): string {
  // Escaped: one character outside Latin-1 would make V8 keep the entry as two bytes per character.
  const literal = JSON.stringify(body).replace(
    /[\u0080-\uffff]/g,
    (char) => `\\u${char.charCodeAt(0).toString(16).padStart(4, "0")}`,
  );
  return [
    "// Made by `kopf build`: the operator as an async function's body, which V8 compiles lazily; as a",
    "// module, Deno would parse it in full at every start (docs/performance.md).",
    runEntry(literal, meta),
  ].join("\n");
}

/**
 * A module that compiles a body, given as the JavaScript expression `source` (a string literal, or
 * an `await` of one read from elsewhere), as an async function and calls it with its `import.meta`.
 *
 * @param source The expression that gives the body.
 * @param meta Its parameter for `import.meta`.
 */
export function runEntry(source: string, meta: string): string {
  return `await new (async () => {}).constructor(${JSON.stringify(meta)}, ${source})({\n` +
    `  url: import.meta.url,\n  filename: import.meta.filename,\n  dirname: import.meta.dirname,\n  main: false,\n` +
    `  resolve: (specifier) => import.meta.resolve(specifier),\n});\n`;
}

const AsyncFunction = (async () => {}).constructor as FunctionConstructor;

function builtinDeclaration(
  source: string,
  bindings: readonly { type: "default" | "namespace" | "named"; local: string; imported?: string }[],
): string {
  const module = `globalThis.process.getBuiltinModule(${JSON.stringify(source)})`;
  if (bindings.length === 0) return `${module};`;
  // A built-in module's default export is the module itself; its namespace holds it as `default` too.
  const isDefault = (binding: { type: string; imported?: string }) =>
    binding.type === "default" || binding.imported === "default";
  const named = bindings.filter((binding) => binding.type === "named" && !isDefault(binding));
  const parts = bindings.filter(isDefault).map((binding) => `var ${binding.local}=${module};`);
  for (const binding of bindings.filter((binding) => binding.type === "namespace")) {
    parts.push(`var ${binding.local}=((m)=>({...m,default:m}))(${module});`);
  }
  if (named.length) {
    const pattern = named.map((binding) => `${JSON.stringify(binding.imported)}:${binding.local}`).join(",");
    parts.push(`var{${pattern}}=${module};`);
  }
  return parts.join("");
}
