/**
 * A module of `deno bundle` as the body of an async function, which a small entry module compiles
 * and runs: V8 compiles it, lazily, and Deno does not parse it.
 *
 * Deno parses every module it loads in full to find its imports, and a container of the image starts
 * with an empty Deno cache: the bundle (~0.6 MB minified) was parsed as a module at every start,
 * which made the start's peak memory (~20 MiB above the idle operator's) and which glibc's allocator
 * kept (docs/performance/memory.md, "The bundle outside Deno's module graph").
 *
 * A function's body cannot hold module syntax, so the body gets what the syntax gave as its
 * parameters: `import.meta` is the entry module's; the namespaces of Node's built-in modules come
 * in by their specifiers (the body declares its bindings from them at its start, hoisted, as imports
 * are); and a function that loads another chunk of the bundle by its index (cli/bundle_chunks.ts)
 * stands for the imports of chunks, static ones awaited at the start, dynamic ones where they were.
 * Exports become the getters of the object the body returns. The places of the syntax come from
 * Deno's own parser (cli/bundle_syntax.ts); each body is compiled once at build time, which fails
 * on any module syntax left.
 *
 * @module
 */

import { BundleBodyError, type ImportBinding, type ModuleSyntax } from "./bundle_syntax.ts";

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
 * The name of the body's third parameter, the function that loads a chunk of the bundle by its index
 * (cli/bundle_chunks.ts): not in the bundle's text, as `meta` is not.
 *
 * @param meta The parameter for `import.meta` (see {@linkcode metaName}).
 */
export function loadName(meta: string): string {
  return `${meta}_load`;
}

/**
 * A module's text as an async function's body, its parameters `meta` (for `import.meta`), the
 * namespaces of the built-in modules by their specifiers ({@linkcode builtinsName}), and the loader
 * of chunks ({@linkcode loadName}), which returns a promise of a chunk's exports; strict as a module
 * is. Its exports are the getters of the object it returns, so that a reader sees a binding's value
 * when it reads it, as with a module's namespace. Compiled (not run) before it is returned.
 *
 * @param text The module.
 * @param syntax Its module syntax, as `moduleSyntax` of cli/bundle_syntax.ts found it.
 * @param meta The parameter that stands for `import.meta` (see {@linkcode metaName}).
 * @param chunkOf The index of the chunk that an import's source (such as `./chunk-ABC.js`) names, if it names one.
 * @throws {BundleBodyError} For an import of anything but a built-in module or a chunk, an export
 *   of a declaration or from another module, or a body that does not compile.
 */
export function chunkBody(
  text: string,
  syntax: readonly ModuleSyntax[],
  meta: string,
  chunkOf: (source: string) => number | undefined = () => undefined,
): BundleBody {
  const names: BodyNames = { meta, builtins: builtinsName(meta), load: loadName(meta), defaultName: `${meta}_default` };
  const { edits, declarations, exported, modules } = rewriteSyntax(syntax, names, chunkOf);
  const { defaultName } = names;
  // A chunk whose one export is a CommonJS module's exports (`export default require_x()`) is read
  // by its importers for the module's names too, as esbuild's interop of an unsplit bundle gives them.
  const interop =
    exported.length === 1 && syntax.some((piece) => piece.kind === "export" && piece.defaultStart !== undefined)
      ? `...(Object(${defaultName})===${defaultName}?${defaultName}:{}),`
      : "";
  const returned = exported.length ? `\n;return{__proto__:null,${interop}${exported.join(",")}};` : "";
  const body = `"use strict";${declarations.join("")}\n${applyEdits(text, edits)}${returned}`;
  try {
    new AsyncFunction(meta, names.builtins, names.load, body);
  } catch (error) {
    throw new BundleBodyError(`The bundle does not compile as a function's body: ${(error as Error).message}`);
  }
  return { body, builtins: [...modules] };
}

/** A replacement of the text between two offsets of a module. */
interface Edit {
  start: number;
  end: number;
  text: string;
}

/** The body's parameters (see {@linkcode chunkBody}) and the variable of its default export. */
interface BodyNames {
  meta: string;
  builtins: string;
  load: string;
  defaultName: string;
}

/** What a module's syntax becomes in the body. */
interface Rewrite {
  /** The replacements of the syntax in the text. */
  edits: Edit[];
  /** The bindings of the imports, declared at the body's start (hoisted, as imports are). */
  declarations: string[];
  /** The getters of the returned object, one per export. */
  exported: string[];
  /** The built-in modules imported, in the order of their first import. */
  modules: Set<string>;
}

/** The edits, declarations and getters that stand for each piece of module syntax. */
function rewriteSyntax(
  syntax: readonly ModuleSyntax[],
  names: BodyNames,
  chunkOf: (source: string) => number | undefined,
): Rewrite {
  const rewrite: Rewrite = { edits: [], declarations: [], exported: [], modules: new Set() };
  const { edits } = rewrite;
  for (const piece of syntax) {
    switch (piece.kind) {
      case "meta":
        edits.push({ start: piece.start, end: piece.end, text: names.meta });
        break;
      case "dynamic": {
        const index = chunkOf(piece.source);
        if (index !== undefined) edits.push({ start: piece.start, end: piece.end, text: `${names.load}(${index})` });
        break;
      }
      case "import":
        // The declaration's place keeps a statement's end, in case the code before it needs one.
        edits.push({ start: piece.start, end: piece.end, text: ";" });
        if (piece.source.startsWith("node:")) rewrite.modules.add(piece.source);
        rewrite.declarations.push(importDeclarations(piece, names, chunkOf));
        break;
      case "export":
        if (piece.specifiers) {
          edits.push({ start: piece.start, end: piece.end, text: ";" });
          for (const { local, exported: name } of piece.specifiers) {
            rewrite.exported.push(`get ${JSON.stringify(name)}(){return ${local}}`);
          }
        } else if (piece.defaultStart !== undefined) {
          edits.push({ start: piece.start, end: piece.defaultStart, text: `var ${names.defaultName}=` });
          edits.push({ start: piece.end, end: piece.end, text: ";" });
          rewrite.exported.push(`get default(){return ${names.defaultName}}`);
        } else {
          throw new BundleBodyError(
            "The bundle exports a declaration, a named default or names of another module; deno bundle writes lists.",
          );
        }
        break;
    }
  }
  return rewrite;
}

/** The declarations of an import's bindings: from a built-in module's namespace, or from a loaded chunk. */
function importDeclarations(
  piece: Extract<ModuleSyntax, { kind: "import" }>,
  names: BodyNames,
  chunkOf: (source: string) => number | undefined,
): string {
  if (piece.source.startsWith("node:")) {
    return bindingDeclarations(`${names.builtins}[${JSON.stringify(piece.source)}]`, piece.bindings);
  }
  const index = chunkOf(piece.source);
  if (index === undefined) {
    throw new BundleBodyError(
      `The bundle imports ${piece.source}, which it should hold: only Node's built-in modules are left outside.` +
        " Import it from the handlers by a path, a URL or an npm: name that deno bundle can read.",
    );
  }
  const loaded = `(await ${names.load}(${index}))`;
  return piece.bindings.length ? bindingDeclarations(loaded, piece.bindings) : `${loaded};`;
}

/** The text with the edits made (they do not overlap). */
function applyEdits(text: string, edits: Edit[]): string {
  edits.sort((a, b) => a.start - b.start || a.end - b.end);
  const pieces: string[] = [];
  let at = 0;
  for (const edit of edits) {
    pieces.push(text.slice(at, edit.start), edit.text);
    at = edit.end;
  }
  pieces.push(text.slice(at));
  return pieces.join("");
}

/**
 * A whole bundle's text as an async function's body ({@linkcode chunkBody} of a bundle without chunks
 * or exports): what bench/bundle_forms.ts holds in each of its forms.
 *
 * @param text The bundle, a module.
 * @param syntax Its module syntax, as `moduleSyntax` of cli/bundle_syntax.ts found it.
 * @param meta The parameter that stands for `import.meta` (see {@linkcode metaName}).
 * @throws {BundleBodyError} For an export, or what {@linkcode chunkBody} refuses.
 */
export function functionBody(text: string, syntax: readonly ModuleSyntax[], meta: string): BundleBody {
  if (syntax.some((piece) => piece.kind === "export")) {
    throw new BundleBodyError("The bundle exports names; an operator's bundle is run, not imported.");
  }
  return chunkBody(text, syntax, meta);
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
  return `${META_ARGUMENT}, ${builtinNamespaces(builtins)}`;
}

/**
 * The object that stands for a body's `import.meta`: the entry's, its `main` false (the body is not
 * the program's main module, the entry is).
 */
export const META_ARGUMENT =
  `{\n  url: import.meta.url,\n  filename: import.meta.filename,\n  dirname: import.meta.dirname,\n` +
  `  main: false,\n  resolve: (specifier) => import.meta.resolve(specifier),\n}`;

/**
 * The object of the namespaces that {@linkcode builtinImports} imported, by their specifiers.
 *
 * @param builtins The built-in modules the entry imported, in the order it imported them.
 */
export function builtinNamespaces(builtins: readonly string[]): string {
  return `{ ${builtins.map((specifier, index) => `${JSON.stringify(specifier)}: kopf$builtin${index}`).join(", ")} }`;
}

const AsyncFunction = (async () => {}).constructor as FunctionConstructor;

function bindingDeclarations(namespace: string, bindings: readonly ImportBinding[]): string {
  const spaces = bindings.filter((binding) => binding.type === "namespace").map((binding) => binding.local);
  const named = bindings.filter((binding) => binding.type !== "namespace").map((binding) =>
    `${JSON.stringify(binding.type === "default" ? "default" : binding.imported)}:${binding.local}`
  );
  // A namespace and names from one import: the names read the namespace's binding, not the source twice.
  const source = spaces.length && named.length ? spaces[0] : namespace;
  const parts = spaces.map((local) => `var ${local}=${namespace};`);
  if (named.length) parts.push(`var{${named.join(",")}}=${source};`);
  return parts.join("");
}
