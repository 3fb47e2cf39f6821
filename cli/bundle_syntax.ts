/**
 * The module syntax of the files that `deno bundle` writes, found by Deno's own parser: a lint plugin
 * of ours run by `deno lint` with none of its own rules, which reports each piece with its place in
 * the text, so the same text inside a string, a template or a regular expression is left alone.
 *
 * Besides the pieces that a function's body cannot hold (imports, exports, `import.meta`), it reports
 * the dynamic imports of the bundle's chunks and the top-level bindings that a function assigns: a
 * chunk run as a function hands its exports over once (cli/bundle_chunks.ts), so a binding that can
 * change after its module ran cannot be handed over that way.
 *
 * @module
 */

import { join } from "node:path";

/** A binding of an `import` declaration: `default`, `namespace`, or a `named` export (`imported`) under a local name. */
export interface ImportBinding {
  type: "default" | "namespace" | "named";
  local: string;
  imported?: string;
}

/** A piece of module syntax in a module, with its place in the text (indices of the string). */
export type ModuleSyntax =
  | {
    kind: "import";
    start: number;
    end: number;
    /** The module imported, e.g. `node:util` or `./chunk-ABC.js`. */
    source: string;
    bindings: ImportBinding[];
  }
  | { kind: "meta"; start: number; end: number }
  | {
    kind: "export";
    start: number;
    end: number;
    /** `export { local as exported }`: the names, when the declaration is a list without `from`. */
    specifiers?: { local: string; exported: string }[];
    /** `export default EXPRESSION`: where the expression starts. */
    defaultStart?: number;
  }
  /** `import("SOURCE")` with a string for its source. */
  | { kind: "dynamic"; start: number; end: number; source: string }
  /** An assignment in a function to the top-level binding `name`: it may change after the module ran. */
  | { kind: "reassigned"; start: number; end: number; name: string };

/** The module syntax of a bundle could not be found or used: what and why. */
export class BundleBodyError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "BundleBodyError";
  }
}

/**
 * The lint plugin that reports the module syntax of a file, each piece as a JSON message. Scopes are
 * kept by node (type and range): every declaration binds its names in the scope it belongs to, and
 * at the end each assignment inside a function is resolved outwards through the scopes around it.
 */
const PLUGIN = `
const report = (context, node, details) =>
  context.report({ node, message: JSON.stringify({ ...details, start: node.range[0], end: node.range[1] }) });
const name = (node) => node.type === "Identifier" ? node.name : node.value;
const FUNCTIONS = new Set(["FunctionDeclaration", "FunctionExpression", "ArrowFunctionExpression"]);
// Code that runs after the module's top level may have: functions, class fields, static blocks.
const LATER = new Set([...FUNCTIONS, "PropertyDefinition", "AccessorProperty", "StaticBlock"]);
const BLOCKS = new Set(["Program", "BlockStatement", "StaticBlock", "SwitchStatement", "ForStatement", "ForInStatement", "ForOfStatement"]);
const key = (node) => node.type + ":" + node.range[0] + ":" + node.range[1];
const names = (pattern, found = []) => {
  switch (pattern?.type) {
    case "Identifier": found.push(pattern.name); break;
    case "ObjectPattern":
      for (const property of pattern.properties) names(property.type === "RestElement" ? property.argument : property.value, found);
      break;
    case "ArrayPattern": for (const element of pattern.elements) names(element, found); break;
    case "AssignmentPattern": names(pattern.left, found); break;
    case "RestElement": names(pattern.argument, found); break;
  }
  return found;
};
export default {
  name: "kopf-bundle",
  rules: {
    "module-syntax": {
      create(context) {
        const declared = new Map();
        const assignments = [];
        let program;
        const ancestors = (node) => context.sourceCode.getAncestors(node);
        const nearest = (node, types) => ancestors(node).reverse().find((ancestor) => types.has(ancestor.type));
        const bind = (scope, bound) => {
          const k = key(scope);
          if (!declared.has(k)) declared.set(k, new Set());
          for (const n of bound) declared.get(k).add(n);
        };
        const assigned = (node, targets) => {
          const around = ancestors(node);
          if (!around.some((ancestor) => LATER.has(ancestor.type))) return;
          assignments.push({ node, targets, scopes: around.filter((ancestor) => ancestor.type !== "Program").map(key) });
        };
        const parameters = (node) => node.params.flatMap((parameter) => names(parameter.type === "TSParameterProperty" ? parameter.parameter : parameter));
        return {
          Program(node) { program = node; },
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
          ImportExpression(node) {
            if (node.source.type === "Literal" && typeof node.source.value === "string") {
              report(context, node, { kind: "dynamic", source: node.source.value });
            }
          },
          MetaProperty(node) {
            if (node.meta.name === "import") report(context, node, { kind: "meta" });
          },
          ExportNamedDeclaration(node) {
            const list = !node.declaration && !node.source;
            report(context, node, {
              kind: "export",
              ...(list ? { specifiers: node.specifiers.map((s) => ({ local: name(s.local), exported: name(s.exported) })) } : {}),
            });
          },
          ExportDefaultDeclaration(node) {
            const named = node.declaration.id != null;
            report(context, node, { kind: "export", ...(named ? {} : { defaultStart: node.declaration.range[0] }) });
          },
          ExportAllDeclaration(node) { report(context, node, { kind: "export" }); },
          VariableDeclaration(node) {
            const scope = node.kind === "var" ? nearest(node, new Set(["Program", ...FUNCTIONS])) : nearest(node, BLOCKS);
            bind(scope, node.declarations.flatMap((declarator) => names(declarator.id)));
          },
          FunctionDeclaration(node) {
            if (node.id) bind(nearest(node, BLOCKS), [node.id.name]);
            bind(node, parameters(node));
          },
          FunctionExpression(node) { bind(node, [...parameters(node), ...(node.id ? [node.id.name] : [])]); },
          ArrowFunctionExpression(node) { bind(node, parameters(node)); },
          ClassDeclaration(node) { if (node.id) bind(nearest(node, BLOCKS), [node.id.name]); },
          ClassExpression(node) { if (node.id) bind(node, [node.id.name]); },
          CatchClause(node) { if (node.param) bind(node, names(node.param)); },
          AssignmentExpression(node) { assigned(node, names(node.left)); },
          UpdateExpression(node) { assigned(node, names(node.argument)); },
          ForInStatement(node) { if (node.left.type !== "VariableDeclaration") assigned(node, names(node.left)); },
          ForOfStatement(node) { if (node.left.type !== "VariableDeclaration") assigned(node, names(node.left)); },
          "Program:exit"() {
            const top = declared.get(key(program)) ?? new Set();
            for (const { node, targets, scopes } of assignments) {
              for (const target of targets) {
                if (!top.has(target) || scopes.some((scope) => declared.get(scope)?.has(target))) continue;
                report(context, node, { kind: "reassigned", name: target });
              }
            }
          },
        };
      },
    },
  },
};
`;

/**
 * The module syntax of modules' texts, found by Deno's parser: one `deno lint` run with the plugin,
 * in `folder` (which must be empty and is left with the files it used), or in a temporary folder
 * removed after.
 *
 * @param texts The modules' texts by their file names (plain names, such as `chunk-ABC.js`).
 * @param folder An empty folder for the plugin, its configuration and the texts.
 * @returns Each module's pieces by its name, in the order of their places.
 */
export async function moduleSyntaxes(
  texts: ReadonlyMap<string, string>,
  folder?: string,
): Promise<Map<string, ModuleSyntax[]>> {
  if (folder === undefined) {
    const temporary = await Deno.makeTempDir({ prefix: "kopf-bundle-syntax-" });
    try {
      return await moduleSyntaxes(texts, temporary);
    } finally {
      await Deno.remove(temporary, { recursive: true });
    }
  }
  await Deno.writeTextFile(join(folder, "plugin.js"), PLUGIN);
  await Deno.writeTextFile(
    join(folder, "deno.json"),
    JSON.stringify({ lint: { plugins: ["./plugin.js"], rules: { tags: [], include: [] } } }),
  );
  const sources = join(folder, "sources");
  await Deno.mkdir(sources);
  const files = new Map<string, string>();
  for (const [name, text] of texts) {
    const file = join(sources, name);
    await Deno.writeTextFile(file, text);
    files.set(new URL(`file://${file}`).href, name);
  }
  const output = await new Deno.Command(Deno.execPath(), {
    args: ["lint", "--json", `--config=${join(folder, "deno.json")}`, sources],
    env: { NO_COLOR: "1" },
    stdin: "null",
  }).output();
  const decoder = new TextDecoder();
  let report: {
    diagnostics?: { filename: string; code: string; message: string }[];
    errors?: { file_path?: string; message: string }[];
  };
  try {
    report = JSON.parse(decoder.decode(output.stdout));
  } catch {
    throw new BundleBodyError(`'deno lint' could not read the bundle: ${decoder.decode(output.stderr).trim()}`);
  }
  if (report.errors?.length) {
    throw new BundleBodyError(`'deno lint' could not parse the bundle: ${report.errors[0].message}`);
  }
  const found = new Map([...texts.keys()].map((name): [string, ModuleSyntax[]] => [name, []]));
  for (const diagnostic of report.diagnostics ?? []) {
    if (diagnostic.code !== "kopf-bundle/module-syntax") continue;
    const name = files.get(diagnostic.filename);
    if (name === undefined) {
      throw new BundleBodyError(`'deno lint' reported a file it was not given: ${diagnostic.filename}`);
    }
    found.get(name)!.push(JSON.parse(diagnostic.message) as ModuleSyntax);
  }
  for (const pieces of found.values()) pieces.sort((a, b) => a.start - b.start);
  return found;
}

/**
 * The module syntax of one module's text (see {@linkcode moduleSyntaxes}).
 *
 * @param text The module's text.
 * @param folder An empty folder for the plugin, its configuration and the text; a temporary one if absent.
 */
export async function moduleSyntax(text: string, folder?: string): Promise<ModuleSyntax[]> {
  return (await moduleSyntaxes(new Map([["bundle.js", text]]), folder)).get("bundle.js")!;
}
