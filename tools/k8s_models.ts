/**
 * Writes `src/model/k8s_models.ts`: client-node's models as `@kopf/kopf/types` exports them. The
 * models type timestamps as `Date` (client-node converts its own responses), but the objects that
 * handlers and the client get are parsed JSON, where timestamps are strings. So every model that
 * holds a `Date` somewhere (itself or in a model it refers to, e.g. `V1Pod` through `V1ObjectMeta`)
 * is re-declared as an interface of the same name: client-node's model without those properties,
 * plus the properties again with `string` for `Date` and the re-declared models for the models.
 * The others are re-exported as they are. Interfaces (not mapped types) keep the models' names in
 * TypeScript's messages: "'dtaa' does not exist in type 'V1ConfigMap'".
 *
 * Run: `deno run -A tools/k8s_models.ts` after upgrading `@kubernetes/client-node`;
 * tools/k8s_models_test.ts fails while the written file is not what this would write.
 *
 * @module
 */

import { fileURLToPath } from "node:url";

const ROOT = fileURLToPath(new URL("../", import.meta.url));

/** Where client-node's generated models are (the `node_modules` folder that `deno install` sets up). */
export const MODELS_DIR = `${ROOT}node_modules/@kubernetes/client-node/dist/gen/models`;

/** The generated file. */
export const OUTPUT = `${ROOT}src/model/k8s_models.ts`;

/** Types of client-node that are a `Date` (`V1MicroTime extends Date`): strings in JSON. */
const DATE_TYPES = new Set(["Date", "V1MicroTime"]);

/** Words that may appear in the models' property types besides model names and `Date` types. */
const PLAIN_WORDS = new Set(["string", "number", "boolean", "any", "Array", "key", "IntOrString"]);

/** One model's declaration file, as far as this tool reads it. */
export interface ModelSource {
  /** The model's name, e.g. `V1Pod`. */
  name: string;
  /** The declaration text. */
  text: string;
}

/** One property of a model: its name, whether it is optional, and its type as written. */
export interface ModelProperty {
  /** The property name, e.g. `creationTimestamp`. */
  name: string;
  /** Whether it is optional (`?:`). */
  optional: boolean;
  /** The type, whitespace collapsed: `Date`, `Array<V1Condition>`, `{ [key: string]: string; }`. */
  type: string;
}

/** The instance properties of a model's class declaration. */
export function modelProperties(source: ModelSource): ModelProperty[] {
  const code = source.text.replace(/\/\*[\s\S]*?\*\//g, "").replace(/^[ \t]*\n/gm, "");
  const body = code.match(/export declare class \w+ \{\n([\s\S]*?)\n {4}static readonly discriminator/)?.[1];
  if (body === undefined) {
    throw new Error(
      `${source.name}.d.ts: no class declaration as this tool knows it; has client-node's layout changed?`,
    );
  }
  const properties: ModelProperty[] = [];
  for (const match of `${body}\n`.matchAll(/^ {4}'([^']+)'(\??): ([\s\S]*?);\n(?= {4}'|$)/gm)) {
    properties.push({ name: match[1], optional: match[2] === "?", type: match[3].replace(/\s+/g, " ") });
  }
  return properties;
}

/** The names of the models that hold a `Date`, directly or through the models they refer to. */
export function modelsWithDates(models: readonly ModelSource[]): Set<string> {
  const refs = new Map(models.map((model) => [model.name, modelProperties(model).map((p) => words(p.type))]));
  const dated = new Set<string>();
  let grown = true;
  while (grown) {
    grown = false;
    for (const [name, types] of refs) {
      if (!dated.has(name) && types.some((ws) => ws.some((w) => DATE_TYPES.has(w) || dated.has(w)))) {
        dated.add(name);
        grown = true;
      }
    }
  }
  return dated;
}

function words(type: string): string[] {
  return type.match(/\w+/g) ?? [];
}

/**
 * A property's type in the generated module: `Date` types become `string`, the re-declared models
 * keep their (now local) names, other models are client-node's (`k8s.V1Container`).
 */
function rewriteType(type: string, model: string, dated: Set<string>, known: Set<string>): string {
  const rewritten = type.replace(/\w+/g, (word) => {
    if (DATE_TYPES.has(word)) return "string";
    if (dated.has(word)) return word;
    if (known.has(word)) return `k8s.${word}`;
    if (PLAIN_WORDS.has(word)) return word;
    throw new Error(`${model}: the type ${type} has ${word}, which this tool does not know.`);
  });
  return rewritten.replace(/;\s*\}/g, " }");
}

function propertyKey(name: string): string {
  return /^[A-Za-z_$][\w$]*$/.test(name) ? name : JSON.stringify(name);
}

/** The declaration of one re-declared model. */
function renderModel(model: ModelSource, dated: Set<string>, known: Set<string>): string[] {
  const changed = modelProperties(model).filter((p) => words(p.type).some((w) => DATE_TYPES.has(w) || dated.has(w)));
  const omitted = changed.map((p) => JSON.stringify(p.name)).join(" | ");
  const lines = [
    "",
    `/** client-node's \`${model.name}\`, with timestamps as strings. */`,
    `export interface ${model.name} extends Omit<k8s.${model.name}, ${omitted}> {`,
  ];
  for (const p of changed) {
    lines.push(`  /** \`${p.name}\` of client-node's \`${model.name}\`, with timestamps as strings. */`);
    lines.push(`  ${propertyKey(p.name)}${p.optional ? "?" : ""}: ${rewriteType(p.type, model.name, dated, known)};`);
  }
  lines.push("}");
  return lines;
}

/** The text of `src/model/k8s_models.ts` for these models, before formatting. */
export function renderModels(models: readonly ModelSource[], version: string): string {
  const dated = modelsWithDates(models);
  const known = new Set(models.map((model) => model.name));
  const lines = [
    "/**",
    " * Kubernetes' object types as the objects are: client-node's models (type-only: none of its",
    " * JavaScript is loaded), where those that hold timestamps have them as RFC 3339 strings -- the",
    " * objects that handlers and the client get are parsed JSON -- instead of client-node's `Date`.",
    " *",
    ` * Generated by tools/k8s_models.ts from @kubernetes/client-node ${version}: do not edit.`,
    " *",
    " * @module",
    " */",
    "",
    'import type * as k8s from "@kubernetes/client-node/dist/gen/models/all.js";',
    "",
    'export type * from "@kubernetes/client-node/dist/gen/models/all.js";',
  ];
  for (const model of [...models].sort((a, b) => a.name.localeCompare(b.name))) {
    if (dated.has(model.name)) lines.push(...renderModel(model, dated, known));
  }
  return lines.join("\n") + "\n";
}

/** Formats TypeScript as `deno fmt` does with the project's settings. */
export async function format(text: string): Promise<string> {
  const child = new Deno.Command(Deno.execPath(), {
    args: ["fmt", "--ext=ts", "-"],
    cwd: ROOT,
    stdin: "piped",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const writer = child.stdin.getWriter();
  await writer.write(new TextEncoder().encode(text));
  await writer.close();
  const { success, stdout, stderr } = await child.output();
  if (!success) throw new Error(`deno fmt failed on the generated models: ${new TextDecoder().decode(stderr)}`);
  return new TextDecoder().decode(stdout);
}

/** Reads the models that client-node's `all.d.ts` exports. */
export async function readModels(dir: string = MODELS_DIR): Promise<ModelSource[]> {
  const index = await Deno.readTextFile(`${dir}/all.d.ts`);
  const names = [...index.matchAll(/^export \* from '\.\.\/models\/(\w+)\.js';$/gm)].map((m) => m[1]);
  if (names.length === 0) throw new Error(`${dir}/all.d.ts exports no models: has client-node's layout changed?`);
  return await Promise.all(names.map(async (name) => ({ name, text: await Deno.readTextFile(`${dir}/${name}.d.ts`) })));
}

/** The installed client-node's version. */
export async function clientNodeVersion(dir: string = MODELS_DIR): Promise<string> {
  const json = JSON.parse(await Deno.readTextFile(`${dir}/../../../package.json`));
  return String(json.version);
}

/**
 * The text of `src/model/k8s_models.ts` for the installed client-node, formatted. Formatted until
 * it stays the same: `deno fmt` wraps a long `extends Omit<…>` differently on its second pass.
 */
export async function generate(): Promise<string> {
  let text = renderModels(await readModels(), await clientNodeVersion());
  for (let pass = 0; pass < 3; pass++) {
    const formatted = await format(text);
    if (formatted === text) return text;
    text = formatted;
  }
  throw new Error("deno fmt keeps changing the generated models: see tools/k8s_models.ts.");
}

if (import.meta.main) {
  await Deno.writeTextFile(OUTPUT, await generate());
  console.error(`Wrote ${OUTPUT}.`);
}
