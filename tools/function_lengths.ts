/**
 * The length in lines of every function in the given files or folders, longest first — the measure behind
 * "no function over ~80 lines". It reads the syntax tree through `deno lint` with this file as a lint plugin,
 * so functions are found as the compiler sees them: declarations, methods, function expressions and arrow
 * functions (callbacks too), each counted from its first line to its last, nested functions included.
 *
 * ```sh
 * deno run -A tools/function_lengths.ts src/reactor            # every function, longest first
 * deno run -A tools/function_lengths.ts --over 80 src/reactor  # only the longer ones; exits 1 if any
 * ```
 *
 * @module
 */

import { relative } from "node:path";
import { fileURLToPath as fromFileUrl } from "node:url";

/** One function: where it is, what it is called, and how many lines it spans. */
export interface FunctionLength {
  /** The file, relative to the working directory. */
  file: string;
  /** The 1-based line where the function starts. */
  line: number;
  /** Its name, or what it is assigned to or passed to; `(anonymous)` when there is nothing to say. */
  name: string;
  /** Lines from the first to the last, both included. */
  lines: number;
}

const RULE = "function-lengths/length";

/** The nodes that are functions, for the plugin's visitors. */
type FunctionNode = Deno.lint.FunctionDeclaration | Deno.lint.FunctionExpression | Deno.lint.ArrowFunctionExpression;

/** The name a function goes by: its own, or that of the variable, property, method or call it sits in. */
function nameOf(node: FunctionNode): string {
  if ((node.type === "FunctionDeclaration" || node.type === "FunctionExpression") && node.id) return node.id.name;
  const parent = node.parent;
  if (parent?.type === "VariableDeclarator" && parent.id.type === "Identifier") return parent.id.name;
  if ((parent?.type === "Property" || parent?.type === "MethodDefinition") && parent.key.type === "Identifier") {
    return parent.key.name;
  }
  if (parent?.type === "MethodDefinition" && parent.key.type === "PrivateIdentifier") return `#${parent.key.name}`;
  if (parent?.type === "CallExpression" || parent?.type === "NewExpression") {
    const callee = parent.callee;
    if (callee.type === "Identifier") return `(callback of ${callee.name})`;
    if (callee.type === "MemberExpression" && callee.property.type === "Identifier") {
      return `(callback of .${callee.property.name})`;
    }
  }
  return "(anonymous)";
}

/** The lint plugin that reports every function with its name; `deno lint` finds it as this module's default. */
const plugin: Deno.lint.Plugin = {
  name: "function-lengths",
  rules: {
    length: {
      create(context) {
        const report = (node: FunctionNode) => context.report({ node, message: nameOf(node) });
        return { FunctionDeclaration: report, FunctionExpression: report, ArrowFunctionExpression: report };
      },
    },
  },
};
export default plugin;

/** Measures every function in the given files and folders (as `deno lint` takes them), longest first. */
export async function measureFunctions(paths: string[]): Promise<FunctionLength[]> {
  const config = await Deno.makeTempFile({ suffix: ".json" });
  try {
    // Only this plugin's rule: the built-in rules are all off without tags.
    const plugins = [fromFileUrl(import.meta.url)];
    await Deno.writeTextFile(config, JSON.stringify({ lint: { plugins, rules: { tags: [] } } }));
    const output = await new Deno.Command(Deno.execPath(), {
      args: ["lint", "--json", "--config", config, ...paths],
      stdout: "piped",
      stderr: "inherit",
    }).output();
    const report = JSON.parse(new TextDecoder().decode(output.stdout)) as {
      diagnostics: {
        filename: string;
        code: string;
        message: string;
        range: { start: { line: number }; end: { line: number } };
      }[];
    };
    return report.diagnostics
      .filter((diagnostic) => diagnostic.code === RULE)
      .map(({ filename, message, range }) => ({
        file: relative(Deno.cwd(), fromFileUrl(filename)),
        line: range.start.line,
        name: message,
        lines: range.end.line - range.start.line + 1,
      }))
      .sort((a, b) => b.lines - a.lines || a.file.localeCompare(b.file) || a.line - b.line);
  } finally {
    await Deno.remove(config);
  }
}

if (import.meta.main) {
  const args = [...Deno.args];
  const at = args.indexOf("--over");
  const over = at === -1 ? 0 : Number(args.splice(at, 2)[1]);
  if (!Number.isInteger(over) || over < 0) {
    console.error("--over takes a whole number of lines, e.g. --over 80.");
    Deno.exit(2);
  }
  const found = (await measureFunctions(args.length ? args : ["src"])).filter((f) => f.lines > over);
  for (const { file, line, name, lines } of found) {
    console.log(`${String(lines).padStart(4)}  ${file}:${line}  ${name}`);
  }
  if (at !== -1 && found.length) Deno.exit(1);
}
