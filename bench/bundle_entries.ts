/**
 * Entry modules for bench/bundle_forms.ts that `kopf build` does not write: other ways of holding a
 * bundle's code as a function's body in one file (cli/bundle_body.ts writes the one it uses).
 *
 * @module
 */

import { runEntry } from "../cli/bundle_body.ts";

/**
 * One file that runs the body from a comment of its own: a function's text (`toString`) is a slice
 * of the module's source, so the body is not parsed as a string literal nor held a second time as
 * one; its `*` + `/` pairs are written with a marker the body does not hold, and restored.
 *
 * @param body The function's body, from `functionBody` of cli/bundle_body.ts.
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
