/**
 * Names for the call frames of V8's profiles, shared by bench/cpu_profile.ts and
 * bench/allocation_profile.ts: a function with its file and line, or the group its code comes from.
 *
 * @module
 */

/** The part of a V8 profile node that names where it ran. */
export interface CallFrame {
  functionName: string;
  url: string;
  lineNumber: number;
}

/** Where the code comes from: our `src/<folder>`, a package of node_modules, a Deno extension, V8's own. */
export function group({ functionName, url }: CallFrame): string {
  if (!url) {
    return functionName.startsWith("(") || functionName.startsWith("op_")
      ? functionName.replace(/^op_.*/, "ops")
      : "(V8 builtins)";
  }
  const ext = url.match(/^ext:([a-z_]+)\//);
  if (ext) return `ext:${ext[1]}`;
  const module = url.match(/.*node_modules\/(@[^/]+\/[^/]+|[^/]+)/);
  if (module) return module[1];
  const file = url.match(/\/(src\/[a-z_]+)\//);
  return file ? file[1] : url.replace(/^.*\//, "");
}

/** `function file:line`, the file from `src/`, `ext/`, `bench/` or `node_modules/` on. */
export function label({ functionName, url, lineNumber }: CallFrame): string {
  if (!url) return functionName || "(anonymous)";
  const file = url.replace(/^.*\/(src|ext|bench|node_modules|jsr)\//, "$1/").replace(/^file:\/\/.*\//, "");
  return `${functionName || "(anonymous)"} ${file}:${lineNumber + 1}`;
}
