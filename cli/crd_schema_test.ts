import assert from "node:assert/strict";
import type { CrdSchema } from "./crd_markers.ts";
import { SchemaMapper } from "./crd_schema.ts";
import { Declarations, type DocJson } from "./doc_nodes.ts";
import { denoDocOf } from "./fixtures/deno_doc.ts";

function schemaOf(doc: DocJson, name: string, printerColumnsOn: string[] = []): CrdSchema {
  const declarations = new Declarations(doc);
  const found = declarations.find(name);
  assert.ok(found, `${name} is declared`);
  const kindLevel = printerColumnsOn.map((one) => `${declarations.find(one)!.file}#${one}`);
  return new SchemaMapper(declarations, { printerColumnsOn: kindLevel }).declaration(found);
}

/** The one-line message of mapping a declaration that must be refused. */
function refusal(doc: DocJson, name: string): string {
  let message: string | undefined;
  try {
    schemaOf(doc, name);
  } catch (error) {
    message = error instanceof Error ? error.message : String(error);
  }
  assert.ok(message !== undefined, `${name} must be refused`);
  assert.doesNotMatch(message, /\n/, "one line");
  return message;
}

Deno.test("types: scalars, Integer, arrays, objects, references, maps, enums, optional, nullable, descriptions", async () => {
  const doc = await denoDocOf(`
type Integer = number;
/** A size unit. */
type Unit = "Mi" | "Gi";
/** A part. */
interface Part {
  /**
   * Its name.
   *
   * Second paragraph.
   */
  name: string;
  count?: Integer;
}
/** The spec. */
export interface ThingSpec {
  text: string;
  ratio: number;
  count: Integer;
  flag?: boolean;
  unit: Unit;
  mode?: "a" | ("b" | Unit);
  parts: Part[];
  moreParts?: Array<Part>;
  frozen?: readonly string[];
  inline: { deep: { deeper?: string } };
  labels?: Record<string, string>;
  counts?: { [key: string]: Integer };
  maybe?: string | null;
  either: string | undefined;
  "dashed-key"?: (boolean);
}`);
  const part: CrdSchema = {
    type: "object",
    properties: { name: { type: "string", description: "Its name.\n\nSecond paragraph." }, count: { type: "integer" } },
    required: ["name"],
    description: "A part.",
  };
  assert.deepEqual(schemaOf(doc, "ThingSpec"), {
    type: "object",
    description: "The spec.",
    properties: {
      text: { type: "string" },
      ratio: { type: "number" },
      count: { type: "integer" },
      flag: { type: "boolean" },
      unit: { type: "string", enum: ["Mi", "Gi"], description: "A size unit." },
      mode: { type: "string", enum: ["a", "b", "Mi", "Gi"] },
      parts: { type: "array", items: part },
      moreParts: { type: "array", items: part },
      frozen: { type: "array", items: { type: "string" } },
      inline: {
        type: "object",
        properties: { deep: { type: "object", properties: { deeper: { type: "string" } } } },
        required: ["deep"],
      },
      labels: { type: "object", additionalProperties: { type: "string" } },
      counts: { type: "object", additionalProperties: { type: "integer" } },
      maybe: { type: "string", nullable: true },
      either: { type: "string" },
      "dashed-key": { type: "boolean" },
    },
    required: ["text", "ratio", "count", "unit", "parts", "inline"],
  });
});

Deno.test("extends copies the base's properties; references reach declarations imported from other files", async () => {
  const doc = await denoDocOf({
    "kind.ts": `import type { Shared } from "./shared.ts";
interface Base {
  id: string;
  note?: string;
}
export interface ThingSpec extends Base {
  /** Overrides the base's: now required. */
  note: string;
  shared?: Shared;
}`,
    "shared.ts": `/** Shared. */
export interface Shared {
  v: number;
}`,
  });
  assert.deepEqual(schemaOf(doc, "ThingSpec"), {
    type: "object",
    properties: {
      id: { type: "string" },
      note: { type: "string", description: "Overrides the base's: now required." },
      shared: { type: "object", description: "Shared.", properties: { v: { type: "number" } }, required: ["v"] },
    },
    required: ["id", "note"],
  });
});

/** One property per marker (and markers on aliases), for the test below. */
const MARKED = `
type Integer = number;
/**
 * @minimum 1
 * @maximum 65535
 */
type Port = Integer;
type Unit = "Mi" | "Gi";
interface Item {
  a: string;
}
export interface M {
  /** @minimum 1 */
  minimum: number;
  /** @maximum 9 */
  maximum: Integer;
  /** @exclusiveMinimum 0 */
  exclusiveMinimum: number;
  /** @exclusiveMaximum 1.5 */
  exclusiveMaximum: number;
  /**
   * Both on one line.
   * @minimum 0 @maximum 10
   */
  bounds: Integer;
  /** @minLength 1 */
  minLength: string;
  /** @maxLength 63 */
  maxLength: string;
  /** @pattern ^[a-z]+( [a-z]+)*$ */
  pattern: string;
  /** @format date-time */
  format: string;
  /** @format int64 */
  formatInteger: Integer;
  /** @default 3 */
  defaultNumber: Integer;
  /** @default Gi */
  defaultBare: Unit;
  /** @default "a b" */
  defaultString: string;
  /** @default {"a": "x"} */
  defaultObject: Item;
  /** @default [1, 2] */
  defaultArray: number[];
  /** @minItems 1 */
  minItems: string[];
  /** @maxItems 3 */
  maxItems: Item[];
  /** @nullable */
  nullable: Item;
  /** @preserveUnknownFields */
  anything: unknown;
  /** @preserveUnknownFields */
  openObject: Item;
  /** @preserveUnknownFields */
  openMap: Record<string, unknown>;
  /**
   * @preserveUnknownFields
   */
  openLiteral: { known?: string; [key: string]: unknown };
  /**
   * @validation self.a != 'b' "a must not be b"
   * @validation size(self.a) < 10
   */
  validation: Item;
  port: Port;
  /** @minimum 1024 */
  highPort: Port;
}`;

Deno.test("markers: each one sets its keyword; on an alias it applies where the alias is used", async () => {
  const doc = await denoDocOf(MARKED);
  const { properties } = schemaOf(doc, "M");
  const item = { type: "object", properties: { a: { type: "string" } }, required: ["a"] };
  assert.deepEqual(properties, {
    minimum: { type: "number", minimum: 1 },
    maximum: { type: "integer", maximum: 9 },
    exclusiveMinimum: { type: "number", minimum: 0, exclusiveMinimum: true },
    exclusiveMaximum: { type: "number", maximum: 1.5, exclusiveMaximum: true },
    bounds: { type: "integer", minimum: 0, maximum: 10, description: "Both on one line." },
    minLength: { type: "string", minLength: 1 },
    maxLength: { type: "string", maxLength: 63 },
    pattern: { type: "string", pattern: "^[a-z]+( [a-z]+)*$" },
    format: { type: "string", format: "date-time" },
    formatInteger: { type: "integer", format: "int64" },
    defaultNumber: { type: "integer", default: 3 },
    defaultBare: { type: "string", enum: ["Mi", "Gi"], default: "Gi" },
    defaultString: { type: "string", default: "a b" },
    defaultObject: { ...item, default: { a: "x" } },
    defaultArray: { type: "array", items: { type: "number" }, default: [1, 2] },
    minItems: { type: "array", items: { type: "string" }, minItems: 1 },
    maxItems: { type: "array", items: item, maxItems: 3 },
    nullable: { ...item, nullable: true },
    anything: { "x-kubernetes-preserve-unknown-fields": true },
    openObject: { ...item, "x-kubernetes-preserve-unknown-fields": true },
    openMap: { type: "object", "x-kubernetes-preserve-unknown-fields": true },
    openLiteral: {
      type: "object",
      properties: { known: { type: "string" } },
      "x-kubernetes-preserve-unknown-fields": true,
    },
    validation: {
      ...item,
      "x-kubernetes-validations": [{ rule: "self.a != 'b'", message: "a must not be b" }, {
        rule: "size(self.a) < 10",
      }],
    },
    port: { type: "integer", minimum: 1, maximum: 65535 },
    highPort: { type: "integer", minimum: 1024, maximum: 65535 },
  });
});

Deno.test("markers: refused where they do not apply, malformed, unknown, repeated, or hidden in the text", async () => {
  const cases: [string, string, RegExp][] = [
    ["minimum: string;", "@minimum 1", /M\.p: @minimum applies to numbers, and this is a string/],
    ["p: string[];", "@pattern ^a$", /M\.p: @pattern applies to strings.*declare an alias with the marker/],
    ["p: string;", "@minItems 1", /M\.p: @minItems applies to arrays/],
    ["p: string;", "@minLength -1", /M\.p: @minLength needs a whole number of 0 or more/],
    ["p: string;", "@maxLength 1.5", /M\.p: @maxLength needs a whole number/],
    ["p: number;", "@maximum ten", /M\.p: @maximum needs a number, not "ten"/],
    ["p: number;", "@minimum 1\n * @exclusiveMinimum 0", /M\.p: @minimum and @exclusiveMinimum together: keep one/],
    ["p: number;", "@minimum 1\n * @minimum 2", /M\.p: @minimum is given twice/],
    ["p?: string;", "@nullable yes", /M\.p: @nullable takes no value/],
    ["p: string;", "@pattern", /M\.p: @pattern needs a value/],
    ["p: number;", '@default "x"', /M\.p: @default "x" is not a number/],
    ["p: number;", "@default many", /M\.p: @default many is not JSON/],
    ['p: "a" | "b";', '@default "c"', /M\.p: @default "c" is not one of "a", "b"/],
    ["p: string;", "@frobnicate 1", /M\.p: @frobnicate is not a marker; the markers are @minimum/],
    ["p: number;", "@integer", /M\.p: @integer is not a marker; write the type as Integer/],
    ["p: string;", "A name. @pattern ^a$", /M\.p: @pattern is inside the description text/],
    ["p: { a: string };", '@validation self.a == "x"', /M\.p: @validation .* write string literals in the rule/],
    ["p: string;", '@validation "only a message"', /M\.p: @validation needs a CEL rule/],
    ["p: string;", "@printerColumn P .spec.p", /M\.p: @printerColumn belongs on the JSDoc of the kind's Spec/],
    ["p: string;", "@preserveUnknownFields", /M\.p: @preserveUnknownFields applies to objects/],
    ["p: Record<string, string>;", "@preserveUnknownFields", /M\.p: @preserveUnknownFields on a map/],
    ['p?: "a" | "b";', "@nullable", /M\.p: @nullable on a union of string literals: the API server rejects null/],
    ["p: string;", "@param p a parameter", /M\.p: @param is not a marker/],
  ];
  const doc = await denoDocOf(
    cases.map(([property, tags], index) =>
      `interface M${index} {\n  /**\n   * ${tags}\n   */\n  ${property.replace(/^\w+/, "p")}\n}`
    ).join("\n"),
  );
  for (const [index, [, tags, message]] of cases.entries()) {
    const text = refusal(doc, `M${index}`).replace(`M${index}.`, "M.");
    assert.match(text, message, tags);
  }
});

Deno.test("markers: @printerColumn belongs on the kind's declarations; malformed ones are refused", async () => {
  const doc = await denoDocOf(`
/** @printerColumn Size .spec.size */
interface Other {
  size: number;
}
/** @printerColumn Size */
interface Malformed {
  size: number;
}
/** @printerColumn Size .spec.size float */
interface BadType {
  size: number;
}`);
  assert.match(refusal(doc, "Other"), /^Other: @printerColumn belongs on the JSDoc of the kind's Spec or Status/);
  assert.doesNotThrow(() => schemaOf(doc, "Other", ["Other"]));
  assert.match(refusal(doc, "Malformed"), /Malformed: @printerColumn Size is not NAME JSONPATH \[TYPE\]; e\.g\./);
  assert.match(refusal(doc, "BadType"), /BadType: @printerColumn Size: the type float is not one of string, integer/);
});

/** Declarations whose types have no faithful CRD schema: `R<n>` is refused with `REFUSALS[n]`. */
const UNMAPPABLE = `import type { Elsewhere } from "./elsewhere.ts";
interface Part {
  a: string;
}
interface Box<T> {
  value: T;
}
enum Color {
  Red = "red",
}
class Klass {
  a = 1;
}
interface Tree {
  children: Tree[];
}
type NotInteger = string;
interface R0 { p: any }
interface R1 { p: unknown }
interface R2 { p: object }
interface R3 { p: string | number }
interface R4 { p: 1 | 2 }
interface R5 { p?: "a" | "b" | null }
interface R6 { p: () => void }
interface R7 { m(): void }
interface R8 { p: [string, number] }
interface R9 { p: Date }
interface R10 { p: Map<string, string> }
interface R11 { p: Set<string> }
interface R12 { p: Partial<Part> }
interface R13 { p: Box<string> }
interface R14 { p: Part & { b: string } }
interface R15 { p: Color }
interface R16 { p: Klass }
interface R17 { tree: Tree }
interface R18 { p: Undeclared }
interface R19 { p: Elsewhere }
interface R20 { p: Record<number, string> }
interface R21 { p: { a: string; [key: string]: string } }
interface R22 { p: {} }
interface R23 { p: Record<string, unknown> }
interface R24 { p: { a: string; [key: string]: unknown } }
interface R25 { p?: undefined }
interface R26 { p: \`a\${string}\` }
interface R27 { p: true }
interface R28 { p: unknown[] }
interface R29 { p: Integer }
type Integer = NotInteger;
type R30 = Box<string>;
`;

/** What each `R<n>` of `UNMAPPABLE` is refused with, in order. */
const REFUSALS: RegExp[] = [
  /^R0\.p: any has no CRD schema; declare the type, or write unknown and mark R0\.p @preserveUnknownFields\.$/,
  /^R1\.p: unknown has no CRD schema unless it is kept as it is: mark R1\.p @preserveUnknownFields/,
  /^R2\.p: object has no CRD schema; declare an interface, or Record<string, T>\.$/,
  /^R3\.p: the union string \| number has no CRD schema; write a union of string literals \("A" \| "B"\), or one/,
  /^R4\.p: the literal 1 has no CRD schema; .* or number with @minimum\/@maximum\.$/,
  /^R5\.p: a union of string literals with null .* make the property optional instead/,
  /^R6\.p: a function has no CRD schema; declare data only\.$/,
  /^R7: methods and call signatures have no CRD schema; declare data properties only\.$/,
  /^R8\.p: a tuple has no CRD schema; write an array \(T\[\]\) or an interface\.$/,
  /^R9\.p: Date has no CRD schema .* write string with @format date-time\.$/,
  /^R10\.p: Map has no CRD schema; write Record<string, T>\.$/,
  /^R11\.p: Set has no CRD schema; write an array \(T\[\]\)\.$/,
  /^R12\.p: Partial<Part> has no CRD schema \(of generic types, only Array and Record<string, T> map\)/,
  /^R13\.p: Box<string>: generic declarations have no CRD schema\.$/,
  /^R14\.p: an intersection \(Part & \{ … \}\) has no CRD schema; declare one interface/,
  /^R15\.p: Color is an enum, which has no CRD schema; write a union of string literals\.$/,
  /^R16\.p: Klass \(in types\.ts\) is a class, not a type; declare an interface or a type alias\.$/,
  /^Tree → Tree: a type that contains itself has no CRD schema/,
  /^R18\.p: Undeclared is not declared in the files; declare it in one of them, or give the file that does\.$/,
  /^R19\.p: Elsewhere is imported from \.\/elsewhere\.ts, which is not among the files: give that file too/,
  /^R20\.p: Record<number, string> has no CRD schema; write Record<string, T>, or an interface for fixed keys\.$/,
  /^R21\.p: properties and \[key: string\]: string together have no CRD schema/,
  /^R22\.p: an object with no properties; declare them, or mark R22\.p @preserveUnknownFields/,
  /^R23\.p: Record<string, unknown> keeps any fields, .* mark R23\.p @preserveUnknownFields/,
  /^R24\.p: \[key: string\]: unknown keeps any fields, .* mark R24\.p @preserveUnknownFields/,
  /^R25\.p: undefined alone has no CRD schema; give a type\.$/,
  /^R26\.p: the literal .* has no CRD schema; only unions of string literals become enums/,
  /^R27\.p: the literal true has no CRD schema/,
  /^R28\.p\[\]: unknown has no CRD schema unless it is kept as it is/,
  /^Integer: Integer marks integers; declare it as type Integer = number\.$/,
  /^R30: Box<string>: generic declarations have no CRD schema\.$/,
];

Deno.test("types without a faithful schema are refused: the declaration, the property, and what to write", async () => {
  const doc = await denoDocOf({
    "types.ts": UNMAPPABLE,
    "elsewhere.ts": "export interface Elsewhere { a: string }",
  });
  // Only the kind's file is given: elsewhere.ts is left out on purpose (R19).
  const declarations = new Declarations({
    ...doc,
    nodes: Object.fromEntries(Object.entries(doc.nodes).filter(([file]) => file.endsWith("/types.ts"))),
  });
  for (const [index, pattern] of REFUSALS.entries()) {
    const name = `R${index}`;
    let message = "";
    try {
      new SchemaMapper(declarations).declaration(declarations.find(name)!);
    } catch (error) {
      message = error instanceof Error ? error.message : String(error);
    }
    assert.match(message, pattern, name);
    assert.doesNotMatch(message, /\n/);
  }
  assert.throws(
    () => new SchemaMapper(declarations).declaration(declarations.find("Box")!),
    /^CrdSchemaError: Box: a generic declaration has no CRD schema; declare it without type parameters\.$/,
  );
});

Deno.test("declarations: an alias or a kind declared in two files is refused; deno doc's format is checked", async () => {
  const doc = await denoDocOf({
    "a.ts": "export interface Twice { a: string }",
    "b.ts": "export type Twice = string;",
  });
  assert.throws(() => new Declarations(doc).find("Twice"), /^DocNodesError: Twice is declared in a\.ts and b\.ts/);
  assert.throws(() => new Declarations({ version: 1, nodes: {} }), /format version 1; version 2 is needed/);
});
