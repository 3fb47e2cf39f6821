/**
 * The parts of the CRD schema mapping (cli/crd_schema.ts) that need no declarations: its error, the
 * keyword types and the `Integer` alias as leaves, and the refusals that several of its cases share.
 *
 * @module
 */

import type { CrdSchema } from "./crd_markers.ts";
import { type FoundDeclaration, shortFile, type TsType } from "./doc_nodes.ts";

/** A declaration that has no faithful CRD schema; the message names it and says what to write instead. */
export class CrdSchemaError extends Error {
  /** Names the problem; `name` is `CrdSchemaError`. */
  constructor(message: string) {
    super(message);
    this.name = "CrdSchemaError";
  }
}

/** A keyword type: `string`, `number` and `boolean` map; `unknown` only where kept open; the rest is refused. */
export function keyword(name: string, where: string, open: boolean): CrdSchema {
  switch (name) {
    case "string":
    case "number":
    case "boolean":
      return { type: name };
    case "unknown":
      if (open) return {};
      throw new CrdSchemaError(
        `${where}: unknown has no CRD schema unless it is kept as it is: mark ${where} @preserveUnknownFields, ` +
          `or declare its type.`,
      );
    case "any":
      throw new CrdSchemaError(
        `${where}: any has no CRD schema; declare the type, or write unknown and mark ${where} @preserveUnknownFields.`,
      );
    case "object":
      throw new CrdSchemaError(`${where}: object has no CRD schema; declare an interface, or Record<string, T>.`);
  }
  throw new CrdSchemaError(
    `${where}: ${name} has no CRD schema; write a string, number, Integer, boolean, array, interface, ` +
      `Record<string, T> or union of string literals.`,
  );
}

/** The refusal of a declaration that is no interface or type alias (an enum, a class, a function...). */
export function notAType({ name, file, declaration }: FoundDeclaration, where: string): CrdSchemaError {
  const prefix = where === name ? name : `${where}: ${name}`;
  if (declaration.kind === "enum") {
    return new CrdSchemaError(`${prefix} is an enum, which has no CRD schema; write a union of string literals.`);
  }
  return new CrdSchemaError(
    `${prefix} (in ${shortFile(file)}) is a ${declaration.kind}, not a type; declare an interface or a type alias.`,
  );
}

/** The API server rejects null for an enum even when it is nullable. */
export function nullableEnum(where: string): CrdSchemaError {
  return new CrdSchemaError(
    `${where}: a union of string literals with null has no faithful CRD schema (the API server rejects null for ` +
      `an enum, nullable or not); make the property optional instead: name?: "A" | "B".`,
  );
}

/** `type Integer = number`: the marker of integers. */
export function integerAlias(type: TsType | undefined, name: string): CrdSchema {
  if (type?.kind === "keyword" && type.value === "number") return { type: "integer" };
  throw new CrdSchemaError(`${name}: Integer marks integers; declare it as type Integer = number.`);
}

/** The type of a property or alias; refused when it has no annotation. */
export function typed(type: TsType | undefined, where: string): TsType {
  if (!type) throw new CrdSchemaError(`${where}: no type annotation; declare its type.`);
  return type;
}

/** Whether a schema is only a string enum (with a description at most): unions join such members. */
export function isStringEnum(schema: CrdSchema): boolean {
  return schema.type === "string" && schema.enum !== undefined &&
    Object.keys(schema).every((key) => key === "type" || key === "enum" || key === "description");
}
