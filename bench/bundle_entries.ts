/**
 * Entry modules for bench/bundle_forms.ts that `kopf build` does not write: other ways of holding a
 * bundle's code as a function's body in one file (cli/bundle_body.ts writes the one it uses).
 *
 * @module
 */

import { bodyArguments, builtinImports, builtinsName, type BundleBody, runEntry } from "../cli/bundle_body.ts";

/**
 * One file with the body in a string literal, compiled by the async function constructor, which
 * builds a source of its own around it: the module's source, the literal and that source hold the
 * code three times (what `kopf build` wrote on 2026-12-04 before the comment).
 *
 * @param body The function's body, from `functionBody` of cli/bundle_body.ts.
 * @param meta Its parameter for `import.meta`.
 */
export function literalEntry({ body, builtins }: BundleBody, meta: string): string {
  return runEntry(asciiLiteral(body), meta, builtins);
}

/**
 * One file with a script in a string literal that declares the body's function, run by an indirect
 * `eval` (whose script's source is the literal's own string: two copies of the code, not three). The
 * function is declared, not written in parentheses, which V8 takes for a sign to compile it at once.
 *
 * @param body The function's body, from `functionBody` of cli/bundle_body.ts.
 * @param meta Its parameter for `import.meta`.
 */
export function evalEntry({ body, builtins }: BundleBody, meta: string): string {
  const name = `${meta}_body`;
  const script = `async function ${name}(${meta}, ${builtinsName(meta)}) {\n${body}\n}\n${name}`;
  return `${builtinImports(builtins)}await (0, eval)(${asciiLiteral(script)})(${bodyArguments(builtins)});\n`;
}

/** A string literal of `text` in ASCII, as `kopf build` escapes its bundle (cli/bundle_text.ts). */
function asciiLiteral(text: string): string {
  return JSON.stringify(text).replace(
    /[\u0080-\uffff]/g,
    (char) => `\\u${char.charCodeAt(0).toString(16).padStart(4, "0")}`,
  );
}
