/**
 * `kopf generate types CRD.yaml... [-o FILE] [--types-module SPEC]`: TypeScript interfaces of custom
 * resources from their CRDs (see `crd_types.ts`), printed or written to a file.
 *
 * @module
 */

import { parseArgs } from "node:util";
import { parseAllDocuments } from "yaml";
import { CrdTypesError, generateTypes } from "./crd_types.ts";
import { cleanParseError } from "./options.ts";
import { UsageError } from "./usage.ts";

/** The usage line of `kopf generate types`. */
export const GENERATE_TYPES_USAGE = "Usage: kopf generate types [OPTIONS] CRD_FILES...";

/** The help of `kopf generate types`. */
export const GENERATE_TYPES_HELP = `${GENERATE_TYPES_USAGE}

  Write TypeScript interfaces of custom resources from their CRDs: one per kind and served
  version, named after the kind, with the schema's descriptions as JSDoc. Use them as handler
  types: kopf.on.create<KopfExample>("kopfexamples", ({ spec }) => \u2026).

Options:
  -o, --output FILE         Write to FILE instead of printing.
      --types-module SPEC   Import V1ObjectMeta from SPEC (default: @kopf/kopf/types).
  -h, --help                Show this message and exit.
`;

/**
 * Runs `kopf generate types` with the arguments after `types`; returns the exit code.
 *
 * @throws UsageError for bad arguments; other errors name the file and the problem.
 */
export async function generateTypesCommand(args: string[]): Promise<0> {
  let parsed;
  try {
    parsed = parseArgs({
      args,
      allowPositionals: true,
      options: {
        output: { type: "string", short: "o" },
        "types-module": { type: "string" },
        help: { type: "boolean", short: "h" },
      },
    });
  } catch (error) {
    throw new UsageError(cleanParseError(error), GENERATE_TYPES_USAGE);
  }
  if (parsed.values.help) {
    console.log(GENERATE_TYPES_HELP);
    return 0;
  }
  if (parsed.positionals.length === 0) throw new UsageError("Give at least one CRD file.", GENERATE_TYPES_USAGE);
  const documents: unknown[] = [];
  for (const file of parsed.positionals) {
    const text = await Deno.readTextFile(file).catch((error) => {
      throw new Error(`Cannot read ${file}: ${error instanceof Error ? error.message : error}`);
    });
    for (const document of parseAllDocuments(text)) {
      if (document.errors.length) throw new Error(`${file} is not valid YAML: ${document.errors[0].message}`);
      documents.push(document.toJS());
    }
  }
  let text: string;
  try {
    text = generateTypes(documents, {
      typesModule: parsed.values["types-module"],
      source: parsed.positionals.map((file) => file.split("/").at(-1)).join(", "),
    });
  } catch (error) {
    if (error instanceof CrdTypesError) throw new Error(`${parsed.positionals.join(", ")}: ${error.message}`);
    throw error;
  }
  if (parsed.values.output) await Deno.writeTextFile(parsed.values.output, text);
  else console.log(text);
  return 0;
}
