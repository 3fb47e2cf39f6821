/**
 * A bundle of `kopf build` made the body of an async function, for bench/bundle_forms.ts: code
 * that V8 compiles from a string is not a module of Deno's graph, which Deno parses in full at
 * each start.
 *
 * A function's body cannot hold the module syntax that `deno bundle` leaves: its `import`
 * declarations of Node's built-in modules become `process.getBuiltinModule` calls (hoisted, as
 * imports are), and `import.meta` the entry module's, passed in. Their places come from Deno's own
 * parser (a lint plugin run by `deno lint`), so the same text inside a string, a template or a
 * regular expression stays as it is; the body is compiled once, which fails on any module syntax
 * left.
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
        `The bundle imports ${piece.source}, which it should hold: only Node's built-in modules are left outside.`,
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
 * One file that runs the body: a module holding it as a string literal, compiled as an async
 * function and called with the module's `import.meta`.
 *
 * @param body The function's body, from {@linkcode functionBody}.
 * @param meta Its parameter for `import.meta`.
 */
export function inlineEntry(body: string, meta: string): string {
  return runEntry(JSON.stringify(body), meta);
}

/**
 * One file that runs the body from a comment of its own: a function's text (`toString`) is a slice
 * of the module's source, so the body is not parsed as a string literal nor held a second time as
 * one; its `*` + `/` pairs are written with a marker the body does not hold, and restored.
 *
 * @param body The function's body, from {@linkcode functionBody}.
 * @param meta Its parameter for `import.meta`.
 */
export function commentEntry(body: string, meta: string): string {
  let marker = "@kopf-end@";
  while (body.includes(marker)) marker += "@";
  const close = "*" + "/";
  const held = body.replaceAll(close, `*${marker}`);
  const source = `holder.toString().slice(holder.toString().indexOf("/*") + 2, -3).replaceAll(${
    JSON.stringify(`*${marker}`)
  }, ${JSON.stringify(close)})`;
  return `function holder() {/*${held}*/}\n${runEntry(source, meta)}`;
}

/**
 * A module that compiles a body, given as the JavaScript expression `source` (a string literal, or
 * an `await` of one read from elsewhere), as an async function and calls it with its `import.meta`.
 *
 * @param source The expression that gives the body.
 * @param meta Its parameter for `import.meta`.
 */
export function runEntry(source: string, meta: string): string {
  return `await new (async () => {}).constructor(${JSON.stringify(meta)}, ${source})(` +
    `{ url: import.meta.url, main: false, resolve: (specifier) => import.meta.resolve(specifier) });\n`;
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
