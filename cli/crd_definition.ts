/**
 * A CustomResourceDefinition from TypeScript declarations: per version, the schemas of the
 * declarations `<Kind><Version>Spec` (else `<Kind>Spec`) and `<Kind><Version>Status` (else
 * `<Kind>Status`), the status subresource where there is a Status, and the printer columns of their
 * `@printerColumn` markers. Pure: deno doc's JSON in, the CRD out.
 *
 * @module
 */

import { type CrdSchema, type PrinterColumn, readMarkers } from "./crd_markers.ts";
import { CrdSchemaError, SchemaMapper } from "./crd_schema.ts";
import { Declarations, type DocJson, type FoundDeclaration } from "./doc_nodes.ts";

/** What the CRD is for: the kind and group; the rest has defaults. */
export interface CrdOptions {
  /** The kind, e.g. `KopfExample`. */
  kind: string;
  /** The API group, e.g. `kopf.dev`. */
  group: string;
  /** The versions, the last one stored; `["v1"]` by default. */
  versions?: readonly string[];
  /** The plural name; by default the kind in lower case with an English plural ending. */
  plural?: string;
  /** `Namespaced` (the default) or `Cluster`. */
  scope?: "Namespaced" | "Cluster";
  /** Short names for kubectl. */
  shortNames?: readonly string[];
}

/** One version of a generated CRD. */
export interface CrdVersion {
  name: string;
  served: boolean;
  storage: boolean;
  schema: { openAPIV3Schema: CrdSchema };
  subresources?: { status: Record<string, never> };
  additionalPrinterColumns?: PrinterColumn[];
}

/** A generated CustomResourceDefinition. */
export interface CustomResourceDefinition {
  apiVersion: "apiextensions.k8s.io/v1";
  kind: "CustomResourceDefinition";
  metadata: { name: string };
  spec: {
    group: string;
    names: { kind: string; listKind: string; plural: string; singular: string; shortNames?: string[] };
    scope: "Namespaced" | "Cluster";
    versions: CrdVersion[];
  };
}

/**
 * The CRD of a kind from the declarations deno doc found in the files.
 *
 * @example
 * ```ts ignore
 * const crd = crdFromDeclarations(docJson, { kind: "Widget", group: "example.com", versions: ["v1", "v2"] });
 * ```
 *
 * @throws CrdSchemaError, MarkerError or DocNodesError: a message naming the declaration, the
 *   property and what to write instead.
 */
export function crdFromDeclarations(doc: DocJson, options: CrdOptions): CustomResourceDefinition {
  const declarations = new Declarations(doc);
  const { kind, group } = options;
  const versions = options.versions?.length ? options.versions : ["v1"];
  const plural = options.plural ?? defaultPlural(kind);
  const found = versions.map((version) => {
    const spec = versionDeclaration(declarations, kind, version, "Spec");
    if (!spec) {
      throw new CrdSchemaError(
        `No declaration ${kind}Spec (or ${versionedName(kind, version, "Spec")} for version ${version}) in the ` +
          `files: declare the spec of ${kind} as an interface or a type alias of that name.`,
      );
    }
    return { version, spec, status: versionDeclaration(declarations, kind, version, "Status") };
  });
  const kindLevel = found.flatMap(({ spec, status }) => status ? [spec, status] : [spec]);
  const mapper = new SchemaMapper(declarations, {
    printerColumnsOn: kindLevel.map((one) => `${one.file}#${one.name}`),
  });
  const crdVersions = found.map(({ version, spec, status }, index): CrdVersion => {
    const specSchema = mapper.declaration(spec);
    const root: CrdSchema = { type: "object", properties: { spec: specSchema } };
    if (status) root.properties!.status = mapper.declaration(status);
    // A spec with required fields is required itself: else an object without spec would pass.
    if (specSchema.required?.length) root.required = ["spec"];
    const columns = [spec, ...status ? [status] : []].flatMap((one) => printerColumns(one, root));
    return {
      name: version,
      served: true,
      storage: index === versions.length - 1,
      schema: { openAPIV3Schema: ordered(root) },
      ...status ? { subresources: { status: {} } } : {},
      ...columns.length ? { additionalPrinterColumns: columns } : {},
    };
  });
  return {
    apiVersion: "apiextensions.k8s.io/v1",
    kind: "CustomResourceDefinition",
    metadata: { name: `${plural}.${group}` },
    spec: {
      group,
      names: {
        kind,
        listKind: `${kind}List`,
        plural,
        singular: kind.toLowerCase(),
        ...options.shortNames?.length ? { shortNames: [...options.shortNames] } : {},
      },
      scope: options.scope ?? "Namespaced",
      versions: crdVersions,
    },
  };
}

/** `<Kind><Version><Part>` if declared, else `<Kind><Part>`. */
function versionDeclaration(
  declarations: Declarations,
  kind: string,
  version: string,
  part: "Spec" | "Status",
): FoundDeclaration | undefined {
  return declarations.find(versionedName(kind, version, part)) ?? declarations.find(`${kind}${part}`);
}

function versionedName(kind: string, version: string, part: "Spec" | "Status"): string {
  return `${kind}${version.charAt(0).toUpperCase()}${version.slice(1)}${part}`;
}

/** The printer columns of a declaration; a column without a type takes it from the schema at its path. */
function printerColumns(found: FoundDeclaration, root: CrdSchema): PrinterColumn[] {
  return readMarkers(found.declaration.jsDoc, found.name).printerColumns.map(({ name, jsonPath, type }) => ({
    name,
    type: type ?? columnType(root, jsonPath),
    jsonPath,
  }));
}

function columnType(root: CrdSchema, jsonPath: string): string {
  if (jsonPath === ".metadata.creationTimestamp") return "date";
  let schema: CrdSchema | undefined = root;
  for (const key of jsonPath.slice(1).split(".")) schema = schema?.properties?.[key];
  if (schema?.type === "integer" || schema?.type === "number" || schema?.type === "boolean") return schema.type;
  return schema?.type === "string" && schema.format === "date-time" ? "date" : "string";
}

/** The kind in lower case with the English plural ending: `Policy` -> `policies`, `Box` -> `boxes`. */
export function defaultPlural(kind: string): string {
  const lower = kind.toLowerCase();
  if (/[^aeiou]y$/.test(lower)) return `${lower.slice(0, -1)}ies`;
  if (/(s|x|z|ch|sh)$/.test(lower)) return `${lower}es`;
  return `${lower}s`;
}

const KEY_ORDER: readonly string[] = [
  "description",
  "type",
  "format",
  "enum",
  "nullable",
  "default",
  "minimum",
  "exclusiveMinimum",
  "maximum",
  "exclusiveMaximum",
  "minLength",
  "maxLength",
  "pattern",
  "minItems",
  "maxItems",
  "items",
  "properties",
  "required",
  "additionalProperties",
  "x-kubernetes-preserve-unknown-fields",
  "x-kubernetes-validations",
];

/** The schema with its keywords in one order at every level, for a readable manifest. */
function ordered(schema: CrdSchema): CrdSchema {
  const result: Record<string, unknown> = {};
  const keys = [...KEY_ORDER, ...Object.keys(schema).filter((key) => !KEY_ORDER.includes(key))];
  for (const key of keys) {
    const value = schema[key as keyof CrdSchema];
    if (value === undefined) continue;
    if (key === "items" || key === "additionalProperties") result[key] = ordered(value as CrdSchema);
    else if (key === "properties") {
      result[key] = Object.fromEntries(
        Object.entries(value as Record<string, CrdSchema>).map(([name, inner]) => [name, ordered(inner)]),
      );
    } else result[key] = value;
  }
  return result as CrdSchema;
}
