/**
 * What `kopf build` changes in the text that `deno bundle` writes, without changing what it does:
 * the characters outside ASCII escaped, and the CommonJS `require` of Node's built-in modules served
 * without `node:module`.
 *
 * @module
 */

/**
 * The bundle with every character outside ASCII written as a `\u` escape. V8 keeps a script's
 * source as two bytes per character once it holds one character outside Latin-1: a handful of
 * dashes in comments made the whole bundle (1.2 MB) take 2.4 MB of an idle operator's heap. Where
 * such characters stand -- comments, strings, templates, regular expressions -- an escape means the
 * same, except in the raw text of a tagged template (which a tag reads through a `raw` property): a
 * bundle that reads a property of that name anywhere is left as it is. The line separators U+2028
 * and U+2029 stay too: in a `//` comment they end the line, which an escape would not.
 */
export function asciiSource(text: string): string {
  if (/[\w$)\]]\.raw\b/.test(text)) return text;
  return text.replace(
    /[\u0080-\u2027\u202a-\uffff]/g,
    (char) => `\\u${char.charCodeAt(0).toString(16).padStart(4, "0")}`,
  );
}

/** The built-in module of a name, or `undefined`, had synchronously and only when asked for. */
const BUILTIN = "globalThis.process.getBuiltinModule";

/**
 * The bundle with the `require` calls of its CommonJS packages (`yaml`'s of `node:process` and
 * `node:buffer`) answered by `process.getBuiltinModule`, at the first call. `deno bundle` leaves
 * them to one of two helpers, both wrong for an operator:
 *
 * - unminified, `createRequire` imported from `node:module` at the bundle's start: Node's module
 *   loader (1.5 MiB of an idle operator's memory; 5 MiB in a script of its own), for a package most
 *   operators never load (a YAML kubeconfig, the CLI's generators);
 * - minified, esbuild's fallback with no `require` to call, which throws "Dynamic require of
 *   "node:process" is not supported" as the package loads: a minified bundle could not read a
 *   YAML kubeconfig.
 *
 * Names other than built-in modules still fail as esbuild's fallback fails (a bundle holds its
 * packages; nothing is left to load from disk).
 */
export function builtinRequires(text: string): string {
  const imported = text.replace(
    /import\s*\{\s*createRequire as ([\w$]+)\s*\}\s*from\s*"node:module";?\s*var ([\w$]+)\s*=\s*\1\(import\.meta\.url\);?/,
    // Double quotes in the message: the fallbacks rewritten below are matched by their single quotes.
    (_, _create: string, require: string) =>
      `var ${require} = (id) => { const found = ${BUILTIN}(id); if (found !== undefined) return found; ` +
      `throw Error("Dynamic require of \\"" + id + "\\" is not supported"); };`,
  );
  return imported.replace(
    /throw (?:new )?Error\(\s*'Dynamic require of "'\s*\+\s*([\w$]+)\s*\+\s*'" is not supported'\s*\)/g,
    (thrown: string, id: string) =>
      `{ const found = ${BUILTIN}(${id}); if (found !== undefined) return found; ${thrown} }`,
  );
}
