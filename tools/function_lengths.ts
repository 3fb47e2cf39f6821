/**
 * The length of every function in a folder's TypeScript files, longest first: declarations,
 * methods and arrow functions with a block body, from their first line to their closing brace
 * (nested functions count in their parents too). A house rule keeps the rooms where the work
 * happens small: no function over {@linkcode MAX_FUNCTION_LINES} lines in `src/reactor` and
 * `src/handling` (tests/house_rules_test.ts).
 *
 * Usage: deno run --allow-read tools/function_lengths.ts [FOLDER…] [--top N]
 *
 * @module
 */

import { join, relative } from "node:path";
import { parseArgs } from "node:util";

/** The longest a function may be in the folders the house rule covers. */
export const MAX_FUNCTION_LINES = 80;

/** One function: where it starts and how many lines it spans. */
export interface FunctionLength {
  readonly file: string;
  readonly name: string;
  /** The 1-based line of its first line. */
  readonly line: number;
  readonly lines: number;
}

const STARTS: readonly RegExp[] = [
  /^\s*(?:export\s+)?(?:default\s+)?(?:async\s+)?function\s*\*?\s*([\w$]+)\s*[<(]/,
  /^\s*(?:export\s+)?(?:const|let)\s+([\w$]+)\s*(?::[^=]+)?=\s*(?:async\s+)?(?:\([^)]*\)|[\w$]+)?.*=>\s*\{\s*$/,
  /^\s*(?:export\s+)?(?:const|let)\s+([\w$]+)\s*(?::[^=]+)?=\s*(?:async\s+)?\(\s*$/,
  /^\s+(?:(?:static|async|get|set|private|public|protected|override|readonly)\s+)*(#?[\w$]+|\[[^\]]+\])\s*(?:<[^>]*>)?\([^;]*$/,
];

const KEYWORDS = new Set(["if", "for", "while", "switch", "catch", "return", "function", "new", "await", "typeof"]);

/** The functions of one file's text. */
export function functionLengths(file: string, text: string): FunctionLength[] {
  const code = blankOutLiterals(text);
  const lines = code.split("\n");
  const found: FunctionLength[] = [];
  for (let index = 0; index < lines.length; index++) {
    const name = startOf(lines[index]);
    if (name === undefined) continue;
    const end = closingLine(lines, index);
    if (end !== undefined) found.push({ file, name, line: index + 1, lines: end - index + 1 });
  }
  return found;
}

function startOf(line: string): string | undefined {
  for (const pattern of STARTS) {
    const match = line.match(pattern);
    if (match && !KEYWORDS.has(match[1])) return match[1];
  }
  return undefined;
}

/** The line of the brace that closes the first body opened at or after `start`. */
function closingLine(lines: readonly string[], start: number): number | undefined {
  let depth = 0;
  let opened = false;
  let parens = 0;
  for (let index = start; index < lines.length; index++) {
    for (const char of lines[index]) {
      if (char === "(") parens++;
      else if (char === ")") parens--;
      else if (char === "{") {
        // The body's brace comes after the parameters (not a destructuring pattern inside them).
        if (!opened && parens > 0) continue;
        depth++;
        opened = true;
      } else if (char === "}" && opened) {
        if (--depth === 0) return index;
      } else if (char === ";" && !opened && parens === 0) {
        return undefined;
      }
    }
  }
  return undefined;
}

/**
 * The text with comments, strings, template literals' text and regular expressions replaced by
 * spaces (line breaks kept), so that only the code's own braces are counted.
 */
function blankOutLiterals(text: string): string {
  let out = "";
  let index = 0;
  const templates: number[] = [];
  const blank = (from: number, to: number) => text.slice(from, to).replace(/[^\n]/g, " ");
  let previous = "";
  while (index < text.length) {
    const char = text[index];
    const next = text[index + 1];
    if (char === "/" && next === "/") {
      const end = text.indexOf("\n", index);
      const stop = end < 0 ? text.length : end;
      out += blank(index, stop);
      index = stop;
    } else if (char === "/" && next === "*") {
      const end = text.indexOf("*/", index + 2);
      const stop = end < 0 ? text.length : end + 2;
      out += blank(index, stop);
      index = stop;
    } else if (char === '"' || char === "'") {
      const stop = stringEnd(text, index, char);
      out += char + blank(index + 1, stop - 1) + char;
      index = stop;
      previous = "a";
    } else if (char === "`" || (char === "}" && templates.at(-1) === 0)) {
      if (char === "}") templates.pop();
      const [stop, opensExpression] = templateEnd(text, index + 1);
      // The template's own delimiters (`${` and the `}` that ends an expression) are no braces of the code.
      out += blank(index, stop);
      if (opensExpression) templates.push(0);
      index = stop;
      previous = "a";
    } else if (char === "/" && /[(,=:[!&|?{};]|^$|return$/.test(previous)) {
      const stop = regexEnd(text, index);
      out += blank(index, stop);
      index = stop;
      previous = "a";
    } else {
      if (templates.length && char === "{") templates[templates.length - 1]++;
      else if (templates.length && char === "}") templates[templates.length - 1]--;
      out += char;
      index++;
      if (!/\s/.test(char)) previous = /[\w$]/.test(char) ? (/return$/.test(previous + char) ? "return" : "a") : char;
    }
  }
  return out;
}

function stringEnd(text: string, start: number, quote: string): number {
  let index = start + 1;
  while (index < text.length && text[index] !== quote && text[index] !== "\n") index += text[index] === "\\" ? 2 : 1;
  return index + 1;
}

/** Where a template literal's text ends: after its closing backtick, or after the `${` that opens an expression. */
function templateEnd(text: string, start: number): [number, boolean] {
  let index = start;
  while (index < text.length) {
    if (text[index] === "\\") index += 2;
    else if (text[index] === "`") return [index + 1, false];
    else if (text[index] === "$" && text[index + 1] === "{") return [index + 2, true];
    else index++;
  }
  return [index, false];
}

function regexEnd(text: string, start: number): number {
  let index = start + 1;
  let inClass = false;
  while (index < text.length && text[index] !== "\n") {
    const char = text[index];
    if (char === "\\") index++;
    else if (char === "[") inClass = true;
    else if (char === "]") inClass = false;
    else if (char === "/" && !inClass) break;
    index++;
  }
  return index + 1;
}

/** The functions of every non-test TypeScript file under a folder, longest first. */
export async function folderFunctionLengths(folder: string, root = Deno.cwd()): Promise<FunctionLength[]> {
  const found: FunctionLength[] = [];
  for await (const entry of Deno.readDir(join(root, folder))) {
    const path = join(folder, entry.name);
    if (entry.isDirectory) found.push(...await folderFunctionLengths(path, root));
    else if (entry.name.endsWith(".ts") && !entry.name.endsWith("_test.ts")) {
      found.push(...functionLengths(relative(".", path), await Deno.readTextFile(join(root, path))));
    }
  }
  return found.sort((a, b) => b.lines - a.lines);
}

if (import.meta.main) {
  const { values, positionals } = parseArgs({
    args: Deno.args,
    options: { top: { type: "string" } },
    allowPositionals: true,
  });
  const top = Number(values.top ?? 10);
  for (const folder of positionals.length ? positionals : ["src/reactor", "src/handling"]) {
    const found = await folderFunctionLengths(folder);
    const over = found.filter((entry) => entry.lines > MAX_FUNCTION_LINES).length;
    console.log(`${folder}: ${found.length} functions, ${over} over ${MAX_FUNCTION_LINES} lines; the longest:`);
    for (const entry of found.slice(0, top)) console.log(`  ${entry.lines}\t${entry.file}:${entry.line} ${entry.name}`);
  }
}
