/**
 * TypeScript declarations, as `deno doc --json` describes them, mapped to the OpenAPI v3 schema of a
 * CRD: strings, numbers, `Integer`, booleans, arrays, interfaces and type literals, references to
 * other declarations of the files, `Record<string, T>`, unions of string literals, optional
 * properties, JSDoc text and markers (`crd_markers.ts`). Whatever has no faithful schema is refused
 * with an error that names the declaration and the property and says what to write instead: the
 * mapper never widens a type into an open schema on its own. Pure: deno doc's JSON in, a schema out.
 *
 * @module
 */

import { applyMarkers, type CrdSchema, readMarkers } from "./crd_markers.ts";
import {
  CrdSchemaError,
  integerAlias,
  isStringEnum,
  keyword,
  notAType,
  nullableEnum,
  typed,
} from "./crd_schema_leaves.ts";
import {
  type Declarations,
  type DocDefinition,
  type DocProperty,
  type FoundDeclaration,
  isUndefined,
  isUnknown,
  type TsType,
  typeText,
  unionMembers,
} from "./doc_nodes.ts";

export { CrdSchemaError };

/** Where a type is being mapped: the declaration and property path (for messages) and the file (for references). */
interface Scope {
  where: string;
  file: string;
}

/** Options of {@linkcode SchemaMapper}. */
export interface SchemaMapperOptions {
  /** Declarations (`file#name`) whose JSDoc may hold `@printerColumn`: the kind's Spec and Status. */
  printerColumnsOn?: Iterable<string>;
}

/** Maps declarations to schemas; each declaration once (its schema is cached and copied). */
export class SchemaMapper {
  readonly #declarations: Declarations;
  readonly #done = new Map<string, CrdSchema>();
  readonly #active: string[] = [];
  readonly #printerColumnsOn: Set<string>;

  /** A mapper over the declarations of some files. */
  constructor(declarations: Declarations, options: SchemaMapperOptions = {}) {
    this.#declarations = declarations;
    this.#printerColumnsOn = new Set(options.printerColumnsOn ?? []);
  }

  /**
   * The schema of a declaration (an interface or a type alias), with its JSDoc as description and
   * markers.
   *
   * @throws CrdSchemaError, MarkerError or DocNodesError for what cannot be mapped.
   */
  declaration(found: FoundDeclaration): CrdSchema {
    const key = declarationKey(found);
    const done = this.#done.get(key);
    if (done) return structuredClone(done);
    if (this.#active.includes(key)) {
      const chain = [...this.#active.slice(this.#active.indexOf(key)), key].map((one) => one.split("#")[1]);
      throw new CrdSchemaError(
        `${chain.join(" \u2192 ")}: a type that contains itself has no CRD schema (schemas cannot refer to ` +
          `themselves); end the recursion with a property of type unknown marked @preserveUnknownFields.`,
      );
    }
    this.#active.push(key);
    try {
      const schema = this.#map(found);
      this.#done.set(key, schema);
      return structuredClone(schema);
    } finally {
      this.#active.pop();
    }
  }

  #map({ name, file, declaration }: FoundDeclaration): CrdSchema {
    const markers = readMarkers(declaration.jsDoc, name);
    // Integer is a marker, not a type of the domain: its own comment describes no field.
    if (name === "Integer") delete markers.description;
    if (markers.printerColumns.length && !this.#printerColumnsOn.has(`${file}#${name}`)) {
      throw new CrdSchemaError(
        `${name}: @printerColumn belongs on the JSDoc of the kind's Spec or Status declaration.`,
      );
    }
    const def = declaration.def ?? {};
    const scope = { where: name, file };
    if (def.typeParams?.length) {
      throw new CrdSchemaError(`${name}: a generic declaration has no CRD schema; declare it without type parameters.`);
    }
    let schema: CrdSchema;
    switch (declaration.kind) {
      case "interface":
        schema = this.#interface(def, scope, markers.preserveUnknownFields);
        break;
      case "typeAlias":
        schema = name === "Integer"
          ? integerAlias(def.tsType, name)
          : this.#type(typed(def.tsType, name), scope, markers.preserveUnknownFields);
        break;
      default:
        throw notAType({ name, file, declaration }, name);
    }
    return applyMarkers(schema, markers, name);
  }

  /** An interface: its own properties over those of the interfaces it extends (only their properties). */
  #interface(def: DocDefinition, scope: Scope, open: boolean): CrdSchema {
    const schema = this.#object(def, scope, open, def.extends?.length ?? 0);
    if (!def.extends?.length) return schema;
    const properties: Record<string, CrdSchema> = {};
    const required = new Set<string>();
    for (const base of def.extends) {
      const inherited = this.#type(base, scope);
      if (inherited.type !== "object" || !inherited.properties) {
        throw new CrdSchemaError(`${scope.where}: extends ${typeText(base)}, which is not an object with properties.`);
      }
      Object.assign(properties, inherited.properties);
      for (const key of inherited.required ?? []) required.add(key);
    }
    for (const key of Object.keys(schema.properties ?? {})) required.delete(key);
    for (const key of schema.required ?? []) required.add(key);
    schema.properties = { ...properties, ...schema.properties };
    if (required.size) schema.required = [...required];
    return schema;
  }

  /** An interface's or a type literal's members; `inherits` counts the interfaces it extends. */
  #object(def: DocDefinition, scope: Scope, open: boolean, inherits = 0): CrdSchema {
    if (def.methods?.length || def.callSignatures?.length || def.constructors?.length) {
      throw new CrdSchemaError(
        `${scope.where}: methods and call signatures have no CRD schema; declare data properties only.`,
      );
    }
    const properties: Record<string, CrdSchema> = {};
    const required: string[] = [];
    for (const property of def.properties ?? []) {
      const where = `${scope.where}.${property.name}`;
      if (property.computed) throw new CrdSchemaError(`${where}: a computed property name; write the name itself.`);
      const mapped = this.#property(property, { where, file: scope.file });
      properties[property.name] = mapped.schema;
      if (mapped.required) required.push(property.name);
    }
    const signatures = def.indexSignatures ?? [];
    const count = Object.keys(properties).length;
    if (signatures.length > 1) throw new CrdSchemaError(`${scope.where}: several index signatures; keep one.`);
    if (signatures.length === 1) {
      const [{ params, tsType }] = signatures;
      const key = params[0]?.tsType;
      if (key?.kind !== "keyword" || key.value !== "string") {
        throw new CrdSchemaError(`${scope.where}: an index signature's key must be a string: [key: string]: T.`);
      }
      const value = typed(tsType, `${scope.where}[key]`);
      if (isUnknown(value)) {
        if (!open) {
          throw new CrdSchemaError(
            `${scope.where}: [key: string]: unknown keeps any fields, which a CRD schema does only when told: ` +
              `mark ${scope.where} @preserveUnknownFields, or remove the index signature.`,
          );
        }
      } else if (count || inherits) {
        throw new CrdSchemaError(
          `${scope.where}: properties and [key: string]: ${typeText(value)} together have no CRD schema (an object ` +
            `has either properties or a map of values); move the map to a property of its own.`,
        );
      } else {
        return { type: "object", additionalProperties: this.#type(value, { ...scope, where: `${scope.where}[key]` }) };
      }
    } else if (!count && !inherits && !open) {
      throw new CrdSchemaError(
        `${scope.where}: an object with no properties; declare them, or mark ${scope.where} @preserveUnknownFields ` +
          `to keep any fields.`,
      );
    }
    const schema: CrdSchema = { type: "object" };
    if (count) schema.properties = properties;
    if (required.length) schema.required = required;
    return schema;
  }

  #property(property: DocProperty, scope: Scope): { schema: CrdSchema; required: boolean } {
    const markers = readMarkers(property.jsDoc, scope.where);
    if (markers.printerColumns.length) {
      throw new CrdSchemaError(
        `${scope.where}: @printerColumn belongs on the JSDoc of the kind's Spec or Status declaration.`,
      );
    }
    let type = typed(property.tsType, scope.where);
    let optional = property.optional === true;
    // `name?: T | undefined` and `name: T | undefined` are both an optional property.
    const members = unionMembers(type);
    if (members.some(isUndefined)) {
      const defined = members.filter((member) => !isUndefined(member));
      if (!defined.length) throw new CrdSchemaError(`${scope.where}: undefined alone has no CRD schema; give a type.`);
      type = defined.length === 1 ? defined[0] : { kind: "union", value: defined };
      optional = true;
    }
    const schema = this.#type(type, scope, markers.preserveUnknownFields);
    return { schema: applyMarkers(schema, markers, scope.where), required: !optional };
  }

  /** A type; `open` says whether the property or alias is marked @preserveUnknownFields (`unknown` allowed). */
  #type(type: TsType, scope: Scope, open = false): CrdSchema {
    const { where } = scope;
    switch (type.kind) {
      case "parenthesized":
        return this.#type(type.value, scope, open);
      case "keyword":
        return keyword(type.value, where, open);
      case "literal":
        if (type.value.kind === "string") return { type: "string", enum: [type.value.string ?? ""] };
        throw new CrdSchemaError(
          `${where}: the literal ${typeText(type)} has no CRD schema; only unions of string literals become enums: ` +
            `write "A" | "B", or ${type.value.kind === "number" ? "number with @minimum/@maximum" : "the type"}.`,
        );
      case "union":
        return this.#union(type.value, scope, open);
      case "array":
        return { type: "array", items: this.#type(type.value, { ...scope, where: `${where}[]` }) };
      case "typeOperator":
        if (type.value.operator === "readonly") return this.#type(type.value.tsType, scope, open);
        break;
      case "typeLiteral":
        return this.#object(type.value, scope, open);
      case "typeRef":
        return this.#reference(type, scope, open);
      case "intersection":
        throw new CrdSchemaError(
          `${where}: an intersection (${typeText(type)}) has no CRD schema; declare one interface ` +
            `(it may extend others).`,
        );
      case "tuple":
        throw new CrdSchemaError(`${where}: a tuple has no CRD schema; write an array (T[]) or an interface.`);
      case "fnOrConstructor":
        throw new CrdSchemaError(`${where}: a function has no CRD schema; declare data only.`);
    }
    throw new CrdSchemaError(
      `${where}: ${typeText(type)} has no CRD schema; write a string, number, Integer, boolean, array, ` +
        `interface, Record<string, T> or union of string literals.`,
    );
  }

  #union(types: TsType[], scope: Scope, open: boolean): CrdSchema {
    const members = types.flatMap(unionMembers);
    const nullable = members.some((member) => member.kind === "keyword" && member.value === "null");
    const rest = members.filter((member) => !(member.kind === "keyword" && member.value === "null"));
    if (rest.some(isUndefined)) {
      throw new CrdSchemaError(`${scope.where}: undefined only makes a property optional: write name?: T.`);
    }
    let schema: CrdSchema;
    if (rest.length === 1) schema = this.#type(rest[0], scope, open);
    else {
      const schemas = rest.map((member) => this.#type(member, scope));
      if (!schemas.every(isStringEnum)) {
        throw new CrdSchemaError(
          `${scope.where}: the union ${typeText({ kind: "union", value: rest })} has no CRD schema; write a union ` +
            `of string literals ("A" | "B"), or one type.`,
        );
      }
      schema = { type: "string", enum: [...new Set(schemas.flatMap((one) => one.enum ?? []))] };
    }
    if (nullable) {
      if (schema.enum) throw nullableEnum(scope.where);
      schema.nullable = true;
    }
    return schema;
  }

  #reference(type: TsType & { kind: "typeRef" }, scope: Scope, open: boolean): CrdSchema {
    const { typeName, typeParams = [], resolution } = type.value;
    const { where } = scope;
    let found: FoundDeclaration | undefined;
    try {
      found = this.#declarations.resolve(typeName, resolution, scope.file);
    } catch (error) {
      throw new CrdSchemaError(`${where}: ${error instanceof Error ? error.message : error}`);
    }
    if (found) {
      if (typeParams.length) {
        throw new CrdSchemaError(`${where}: ${typeText(type)}: generic declarations have no CRD schema.`);
      }
      const { kind } = found.declaration;
      if (kind !== "interface" && kind !== "typeAlias") throw notAType(found, where);
      return this.declaration(found);
    }
    switch (typeName) {
      case "Integer":
        return { type: "integer" };
      case "Array":
      case "ReadonlyArray":
        if (typeParams.length === 1) {
          return { type: "array", items: this.#type(typeParams[0], { ...scope, where: `${where}[]` }) };
        }
        break;
      case "Record":
        return this.#record(typeParams, scope, open);
      case "Date":
        throw new CrdSchemaError(
          `${where}: Date has no CRD schema (objects hold dates as strings); write string with @format date-time.`,
        );
      case "Map":
      case "ReadonlyMap":
        throw new CrdSchemaError(`${where}: ${typeName} has no CRD schema; write Record<string, T>.`);
      case "Set":
      case "ReadonlySet":
        throw new CrdSchemaError(`${where}: ${typeName} has no CRD schema; write an array (T[]).`);
    }
    if (typeParams.length) {
      throw new CrdSchemaError(
        `${where}: ${typeText(type)} has no CRD schema (of generic types, only Array and Record<string, T> map); ` +
          `declare the resulting interface.`,
      );
    }
    throw new CrdSchemaError(
      `${where}: ${typeName} is not declared in the files; declare it in one of them, or give the file that does.`,
    );
  }

  #record(params: TsType[], scope: Scope, open: boolean): CrdSchema {
    const [key, value] = params;
    if (key?.kind !== "keyword" || key.value !== "string" || !value) {
      throw new CrdSchemaError(
        `${scope.where}: Record<${params.map(typeText).join(", ")}> has no CRD schema; write Record<string, T>, ` +
          `or an interface for fixed keys.`,
      );
    }
    if (isUnknown(value)) {
      if (open) return { type: "object" };
      throw new CrdSchemaError(
        `${scope.where}: Record<string, unknown> keeps any fields, which a CRD schema does only when told: mark ` +
          `${scope.where} @preserveUnknownFields, or give the values' type.`,
      );
    }
    return { type: "object", additionalProperties: this.#type(value, { ...scope, where: `${scope.where}[key]` }) };
  }
}

function declarationKey(found: FoundDeclaration): string {
  return `${found.file}#${found.name}`;
}
