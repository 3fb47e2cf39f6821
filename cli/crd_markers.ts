/**
 * JSDoc tags as CRD schema markers: `@minimum 0`, `@pattern ^[a-z]+$`, `@validation RULE "message"`,
 * `@printerColumn NAME JSONPATH [TYPE]`... -- read from a declaration's or a property's JSDoc and
 * applied to its OpenAPI schema, each checked against the type it applies to. Pure.
 *
 * @module
 */

import type { JsDoc } from "./doc_nodes.ts";

/** An OpenAPI v3 schema as a CRD version's `openAPIV3Schema` holds it (what the generator writes). */
export interface CrdSchema {
  description?: string;
  type?: "object" | "array" | "string" | "integer" | "number" | "boolean";
  format?: string;
  enum?: string[];
  nullable?: boolean;
  default?: unknown;
  minimum?: number;
  maximum?: number;
  exclusiveMinimum?: boolean;
  exclusiveMaximum?: boolean;
  minLength?: number;
  maxLength?: number;
  pattern?: string;
  minItems?: number;
  maxItems?: number;
  items?: CrdSchema;
  properties?: Record<string, CrdSchema>;
  required?: string[];
  additionalProperties?: CrdSchema;
  "x-kubernetes-preserve-unknown-fields"?: boolean;
  "x-kubernetes-validations"?: CelValidation[];
}

/** A CEL rule of `x-kubernetes-validations`. */
export interface CelValidation {
  /** The CEL expression; `self` is the value. */
  rule: string;
  /** What the API server says when the rule is false. */
  message?: string;
}

/** An `additionalPrinterColumns` entry of a CRD version. */
export interface PrinterColumn {
  /** The column's heading. */
  name: string;
  /** `string`, `integer`, `number`, `boolean` or `date`. */
  type: string;
  /** The JSONPath in the object, e.g. `.spec.size`. */
  jsonPath: string;
}

/** The markers of one JSDoc comment. */
export interface Markers {
  /** The JSDoc text: the schema's description. */
  description?: string;
  /** `@minimum`, `@maximum`, `@exclusiveMinimum`, `@exclusiveMaximum`. */
  minimum?: number;
  maximum?: number;
  exclusiveMinimum?: number;
  exclusiveMaximum?: number;
  /** `@minLength`, `@maxLength`, `@minItems`, `@maxItems`: non-negative integers. */
  minLength?: number;
  maxLength?: number;
  minItems?: number;
  maxItems?: number;
  /** `@pattern REGEX`. */
  pattern?: string;
  /** `@format NAME`. */
  format?: string;
  /** `@default VALUE`: JSON, or the bare text for a string. */
  default?: string;
  /** `@nullable`. */
  nullable: boolean;
  /** `@preserveUnknownFields`. */
  preserveUnknownFields: boolean;
  /** `@validation RULE ["message"]`, in order. */
  validations: CelValidation[];
  /** `@printerColumn NAME JSONPATH [TYPE]` (a printer column, unlike the others), unresolved `TYPE`. */
  printerColumns: { name: string; jsonPath: string; type?: string }[];
}

/** A marker that is unknown, malformed or put where it does not apply; names where and what to write. */
export class MarkerError extends Error {
  /** Names the problem; `name` is `MarkerError`. */
  constructor(message: string) {
    super(message);
    this.name = "MarkerError";
  }
}

const NUMBERS = ["minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"] as const;
const COUNTS = ["minLength", "maxLength", "minItems", "maxItems"] as const;
const TEXTS = ["pattern", "format", "default"] as const;
const FLAGS = ["nullable", "preserveUnknownFields"] as const;
const LISTS = ["validation", "printerColumn"] as const;

/** Every marker's tag name, as written after `@`. */
export const MARKER_NAMES: readonly string[] = [...NUMBERS, ...COUNTS, ...TEXTS, ...FLAGS, ...LISTS];

/** Tags that deno doc parses itself and that document rather than constrain: ignored. */
const DOCUMENTATION_TAGS = new Set(["deprecated", "example", "see", "since", "category", "tags", "experimental"]);

/** The column types `additionalPrinterColumns` accepts. */
export const PRINTER_COLUMN_TYPES: readonly string[] = ["string", "integer", "number", "boolean", "date"];

/**
 * Reads the markers of a JSDoc comment.
 *
 * @param where What the comment documents, for messages (`FooSpec.size`).
 * @throws MarkerError for an unknown tag or a malformed value.
 */
export function readMarkers(jsDoc: JsDoc | undefined, where: string): Markers {
  const markers: Markers = { nullable: false, preserveUnknownFields: false, validations: [], printerColumns: [] };
  const description = jsDoc?.doc?.trim();
  // JSDoc tags start a line; one inside the text would be a marker silently lost.
  const inline = description?.match(new RegExp(`(?:^|\\s)@(${[...MARKER_NAMES, "integer"].join("|")})\\b`));
  if (inline) {
    throw new MarkerError(
      `${where}: @${inline[1]} is inside the description text, where it is no tag; start a line with it.`,
    );
  }
  if (description) markers.description = description;
  for (const tag of jsDoc?.tags ?? []) {
    if (tag.kind === "default") {
      // deno doc reads `@default {...}` as a type in braces and drops them: they are the JSON object's.
      setOnce(markers, "default", `{${tag.value ?? ""}}`, where);
      continue;
    }
    if (tag.kind !== "unsupported") {
      if (DOCUMENTATION_TAGS.has(tag.kind)) continue;
      throw new MarkerError(`${where}: @${tag.kind} is not a marker; the markers are @${MARKER_NAMES.join(" @")}.`);
    }
    for (const [name, value] of splitTags(tag.value ?? "")) readMarker(markers, name, value, where);
  }
  return markers;
}

/**
 * Splits one tag's text into markers: `@minimum 0 @maximum 10` on one line is two markers (a
 * marker's value cannot contain ` @minimum` and the like).
 */
function splitTags(text: string): [string, string][] {
  const names = MARKER_NAMES.join("|");
  const parts = text.trim().split(new RegExp(`\\s+(?=@(?:${names})(?:\\s|$))`));
  return parts.map((part) => {
    const match = part.match(/^@(\S*)\s*([\s\S]*)$/);
    return match ? [match[1], match[2].trim()] : ["", part];
  });
}

function readMarker(markers: Markers, name: string, value: string, where: string): void {
  if ((NUMBERS as readonly string[]).includes(name)) {
    setOnce(markers, name as typeof NUMBERS[number], number(name, value, where), where);
  } else if ((COUNTS as readonly string[]).includes(name)) {
    const count = number(name, value, where);
    if (!Number.isInteger(count) || count < 0) {
      throw new MarkerError(`${where}: @${name} needs a whole number of 0 or more, not ${JSON.stringify(value)}.`);
    }
    setOnce(markers, name as typeof COUNTS[number], count, where);
  } else if ((TEXTS as readonly string[]).includes(name)) {
    if (!value) throw new MarkerError(`${where}: @${name} needs a value, e.g. ${example(name)}.`);
    setOnce(markers, name as typeof TEXTS[number], value, where);
  } else if ((FLAGS as readonly string[]).includes(name)) {
    if (value) {
      throw new MarkerError(`${where}: @${name} takes no value (found ${JSON.stringify(value)}); write it alone.`);
    }
    markers[name as typeof FLAGS[number]] = true;
  } else if (name === "validation") {
    markers.validations.push(celValidation(value, where));
  } else if (name === "printerColumn") {
    markers.printerColumns.push(printerColumn(value, where));
  } else if (name === "integer") {
    throw new MarkerError(`${where}: @integer is not a marker; write the type as Integer (type Integer = number).`);
  } else {
    throw new MarkerError(`${where}: @${name} is not a marker; the markers are @${MARKER_NAMES.join(" @")}.`);
  }
}

function setOnce<K extends keyof Markers>(markers: Markers, key: K, value: Markers[K], where: string): void {
  if (markers[key] !== undefined) throw new MarkerError(`${where}: @${key} is given twice; keep one.`);
  markers[key] = value;
}

function number(name: string, value: string, where: string): number {
  const parsed = value === "" ? NaN : Number(value);
  if (!Number.isFinite(parsed)) {
    throw new MarkerError(`${where}: @${name} needs a number, not ${JSON.stringify(value)}; e.g. ${example(name)}.`);
  }
  return parsed;
}

function example(name: string): string {
  switch (name) {
    case "pattern":
      return "@pattern ^[a-z0-9-]+$";
    case "format":
      return "@format date-time";
    case "default":
      return '@default "Gi"';
    default:
      return `@${name} 1`;
  }
}

/**
 * `RULE` or `RULE "message"`: the message is a JSON string at the very end. A rule whose last
 * string literal would be taken for the message writes its literals in single quotes (CEL accepts
 * both).
 */
function celValidation(text: string, where: string): CelValidation {
  const match = text.match(/^([\s\S]*?)\s*("(?:[^"\\]|\\.)*")$/);
  const rule = (match ? match[1] : text).trim();
  if (!rule) throw new MarkerError(`${where}: @validation needs a CEL rule, e.g. @validation self.min <= self.max.`);
  if (!match) return { rule };
  if (/(?:[=<>!+\-*/%&|?:,([{]|\bin)$/.test(rule)) {
    throw new MarkerError(
      `${where}: @validation ${text} ends with a double-quoted string that reads as the message, leaving the rule ` +
        `${JSON.stringify(rule)}; write string literals in the rule with single quotes ('\u2026').`,
    );
  }
  return { rule, message: JSON.parse(match[2]) };
}

/** `NAME JSONPATH [TYPE]`; NAME may be a JSON string (`"Last seen"`). */
function printerColumn(text: string, where: string): Markers["printerColumns"][number] {
  const match = text.match(/^("(?:[^"\\]|\\.)*"|\S+)\s+(\.\S+)(?:\s+(\S+))?$/);
  if (!match) {
    throw new MarkerError(
      `${where}: @printerColumn ${text} is not NAME JSONPATH [TYPE]; e.g. @printerColumn Size .spec.size integer.`,
    );
  }
  const name = match[1].startsWith('"') ? JSON.parse(match[1]) as string : match[1];
  const type = match[3];
  if (type !== undefined && !PRINTER_COLUMN_TYPES.includes(type)) {
    throw new MarkerError(
      `${where}: @printerColumn ${name}: the type ${type} is not one of ${PRINTER_COLUMN_TYPES.join(", ")}.`,
    );
  }
  return type === undefined ? { name, jsonPath: match[2] } : { name, jsonPath: match[2], type };
}

/**
 * Applies the markers (all but printer columns) to a schema, in place: each one checked against the
 * schema's type. The description replaces the schema's own; validations add to its own.
 *
 * @throws MarkerError if a marker does not apply to the type, or a default does not fit it.
 */
export function applyMarkers(schema: CrdSchema, markers: Markers, where: string): CrdSchema {
  const numeric = schema.type === "integer" || schema.type === "number";
  const only = (name: string, applies: boolean, what: string, instead: string) => {
    if (!applies) {
      throw new MarkerError(`${where}: @${name} applies to ${what}, and this is ${typeName(schema)}; ${instead}.`);
    }
  };
  const forItems = "for its items, declare an alias with the marker (type Name = string) and use Name[]";
  for (const name of NUMBERS) {
    if (markers[name] === undefined) continue;
    only(name, numeric, "numbers", "remove it");
  }
  if (markers.minimum !== undefined && markers.exclusiveMinimum !== undefined) {
    throw new MarkerError(`${where}: @minimum and @exclusiveMinimum together: keep one.`);
  }
  if (markers.maximum !== undefined && markers.exclusiveMaximum !== undefined) {
    throw new MarkerError(`${where}: @maximum and @exclusiveMaximum together: keep one.`);
  }
  // OpenAPI v3.0, which CRDs use: the bound is `minimum`, and `exclusiveMinimum` a flag on it.
  if (markers.minimum !== undefined) setBound(schema, "minimum", markers.minimum, false);
  if (markers.exclusiveMinimum !== undefined) setBound(schema, "minimum", markers.exclusiveMinimum, true);
  if (markers.maximum !== undefined) setBound(schema, "maximum", markers.maximum, false);
  if (markers.exclusiveMaximum !== undefined) setBound(schema, "maximum", markers.exclusiveMaximum, true);
  for (const name of ["minLength", "maxLength", "pattern"] as const) {
    if (markers[name] === undefined) continue;
    only(name, schema.type === "string", "strings", schema.type === "array" ? forItems : "remove it");
    schema[name] = markers[name] as never;
  }
  for (const name of ["minItems", "maxItems"] as const) {
    if (markers[name] === undefined) continue;
    only(name, schema.type === "array", "arrays", "remove it");
    schema[name] = markers[name];
  }
  if (markers.format !== undefined) {
    only("format", schema.type === "string" || numeric, "strings and numbers", "remove it");
    schema.format = markers.format;
  }
  if (markers.nullable) {
    if (schema.enum) {
      throw new MarkerError(
        `${where}: @nullable on a union of string literals: the API server rejects null for an enum, nullable ` +
          `or not; make the property optional instead.`,
      );
    }
    schema.nullable = true;
  }
  if (markers.preserveUnknownFields) {
    only(
      "preserveUnknownFields",
      schema.type === "object" || schema.type === undefined,
      "objects",
      schema.type === "array" ? forItems : "remove it",
    );
    if (schema.additionalProperties) {
      throw new MarkerError(
        `${where}: @preserveUnknownFields on a map (Record<string, T>): a map keeps every key already; remove it.`,
      );
    }
    schema["x-kubernetes-preserve-unknown-fields"] = true;
  }
  if (markers.validations.length) {
    schema["x-kubernetes-validations"] = [...schema["x-kubernetes-validations"] ?? [], ...markers.validations];
  }
  if (markers.default !== undefined) schema.default = defaultValue(schema, markers.default, where);
  if (markers.description) schema.description = markers.description;
  return schema;
}

function setBound(schema: CrdSchema, bound: "minimum" | "maximum", value: number, exclusive: boolean): void {
  schema[bound] = value;
  const flag = bound === "minimum" ? "exclusiveMinimum" : "exclusiveMaximum";
  if (exclusive) schema[flag] = true;
  else delete schema[flag];
}

/** The value of `@default`: JSON that fits the schema's type, or the bare text for a string. */
function defaultValue(schema: CrdSchema, text: string, where: string): unknown {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    if (schema.type !== "string") {
      throw new MarkerError(
        `${where}: @default ${text} is not JSON; write the value as JSON, e.g. ${example("default")}.`,
      );
    }
    value = text;
  }
  const fits = value === null ? schema.nullable === true : fitsType(schema, value);
  if (!fits) {
    throw new MarkerError(`${where}: @default ${text} is not ${typeName(schema)}; write a default of that type.`);
  }
  if (schema.enum && !schema.enum.includes(value as string)) {
    throw new MarkerError(`${where}: @default ${text} is not one of ${schema.enum.map((v) => `"${v}"`).join(", ")}.`);
  }
  return value;
}

function fitsType(schema: CrdSchema, value: unknown): boolean {
  switch (schema.type) {
    case "string":
      return typeof value === "string";
    case "integer":
      return Number.isInteger(value);
    case "number":
      return typeof value === "number";
    case "boolean":
      return typeof value === "boolean";
    case "array":
      return Array.isArray(value);
    case "object":
      return typeof value === "object" && value !== null && !Array.isArray(value);
    default:
      return true;
  }
}

function typeName(schema: CrdSchema): string {
  switch (schema.type) {
    case undefined:
      return "any value";
    case "array":
    case "integer":
    case "object":
      return `an ${schema.type}`;
    default:
      return `a ${schema.type}`;
  }
}
