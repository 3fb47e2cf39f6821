/**
 * What `deno doc --json --private FILES` prints (format version 2), as far as `kopf generate crd`
 * reads it, and the declarations it holds, indexed by file and name so that a type reference finds
 * its declaration in its own file or, through its import, in another of the files.
 *
 * @module
 */

/** The whole output of `deno doc --json`. */
export interface DocJson {
  /** The format's version; 2 since Deno 2. */
  version: number;
  /** The symbols of each file, by the file's URL. */
  nodes: Record<string, { symbols: DocSymbol[] }>;
}

/** A name declared in a file, with its declarations (several when merged). */
export interface DocSymbol {
  /** The declared name. */
  name: string;
  /** Its declarations. */
  declarations: DocDeclaration[];
}

/** Where something is declared. */
export interface DocLocation {
  /** The file's URL. */
  filename: string;
  /** The 1-based line. */
  line: number;
}

/** A JSDoc comment: its text and its tags. */
export interface JsDoc {
  /** The text before the first tag. */
  doc?: string;
  /** The tags; deno doc parses some of them (`kind` other than `unsupported`). */
  tags?: JsDocTag[];
}

/** A JSDoc tag: `unsupported` ones keep their text (`@minimum 1`) in `value`. */
export interface JsDocTag {
  /** `unsupported`, `default`, `deprecated`, `example`, `see`... */
  kind: string;
  /** The tag's text: the whole of it for `unsupported`, without the braces for `default`. */
  value?: string;
}

/** One declaration of a symbol. */
export interface DocDeclaration {
  /** `interface`, `typeAlias`, `enum`, `class`, `variable`, `function`... */
  kind: string;
  /** Where it is. */
  location: DocLocation;
  /** Its JSDoc. */
  jsDoc?: JsDoc;
  /** What it declares. */
  def?: DocDefinition;
}

/** The members of an interface or a type literal, and the type of an alias. */
export interface DocDefinition {
  /** A type alias's type. */
  tsType?: TsType;
  /** Properties. */
  properties?: DocProperty[];
  /** `[key: string]: T`. */
  indexSignatures?: DocIndexSignature[];
  /** Methods. */
  methods?: unknown[];
  /** Call signatures. */
  callSignatures?: unknown[];
  /** Construct signatures. */
  constructors?: unknown[];
  /** What an interface extends. */
  extends?: TsType[];
  /** Type parameters of a generic declaration. */
  typeParams?: unknown[];
}

/** A property of an interface or a type literal. */
export interface DocProperty {
  /** Its name, unquoted. */
  name: string;
  /** Its JSDoc. */
  jsDoc?: JsDoc;
  /** `name?: T`. */
  optional?: boolean;
  /** `[expression]: T`. */
  computed?: boolean;
  /** Its type, if annotated. */
  tsType?: TsType;
}

/** An index signature `[key: K]: T`. */
export interface DocIndexSignature {
  /** The key parameter. */
  params: { tsType?: TsType }[];
  /** The value type. */
  tsType?: TsType;
}

/** How a type reference is resolved: in its file, through an import, or not at all (a global). */
export type DocResolution = { kind: "local" } | { kind: "import"; specifier: string; name?: string };

/** A TypeScript type as deno doc describes it. */
export type TsType =
  | { kind: "keyword"; value: string; repr?: string }
  | { kind: "literal"; value: { kind: string; string?: string; number?: number; boolean?: boolean }; repr?: string }
  | {
    kind: "typeRef";
    value: { typeName: string; typeParams?: TsType[]; resolution?: DocResolution };
    repr?: string;
  }
  | { kind: "union" | "intersection" | "tuple"; value: TsType[]; repr?: string }
  | { kind: "array" | "parenthesized"; value: TsType; repr?: string }
  | { kind: "typeOperator"; value: { operator: string; tsType: TsType }; repr?: string }
  | { kind: "typeLiteral"; value: DocDefinition; repr?: string }
  | {
    kind:
      | "fnOrConstructor"
      | "conditional"
      | "mapped"
      | "indexedAccess"
      | "typeQuery"
      | "typePredicate"
      | "importType"
      | "infer"
      | "this"
      | "optional"
      | "rest";
    value?: unknown;
    repr?: string;
  };

/** A declaration found by name, with the file and name it is known by. */
export interface FoundDeclaration {
  /** The declared name. */
  name: string;
  /** The file's URL. */
  file: string;
  /** The declaration. */
  declaration: DocDeclaration;
}

/** Output of deno doc that cannot be read, or a name declared in a way that is ambiguous. */
export class DocNodesError extends Error {
  /** Names the problem; `name` is `DocNodesError`. */
  constructor(message: string) {
    super(message);
    this.name = "DocNodesError";
  }
}

/** The declarations of the files, by file and name. */
export class Declarations {
  readonly #byFile = new Map<string, Map<string, DocDeclaration[]>>();

  /**
   * Indexes deno doc's output.
   *
   * @throws DocNodesError if it is not format version 2.
   */
  constructor(doc: DocJson) {
    if (doc?.version !== 2 || typeof doc.nodes !== "object") {
      throw new DocNodesError(
        `deno doc printed JSON of format version ${doc?.version ?? "(none)"}; version 2 is needed (Deno 2 or later).`,
      );
    }
    for (const [file, node] of Object.entries(doc.nodes)) {
      const names = new Map<string, DocDeclaration[]>();
      for (const symbol of node.symbols ?? []) names.set(symbol.name, symbol.declarations ?? []);
      this.#byFile.set(file, names);
    }
  }

  /**
   * The one declaration of a name among all the files, or `undefined` if none declares it.
   *
   * @throws DocNodesError if several files declare it, or it is declared more than once.
   */
  find(name: string): FoundDeclaration | undefined {
    const found: FoundDeclaration[] = [];
    for (const file of this.#byFile.keys()) {
      const one = this.#in(file, name);
      if (one) found.push(one);
    }
    if (found.length > 1) {
      throw new DocNodesError(
        `${name} is declared in ${found.map((one) => shortFile(one.file)).join(" and ")}: give only one of them.`,
      );
    }
    return found[0];
  }

  /**
   * The declaration a type reference in `file` points to: in the same file, or in the file it is
   * imported from; `undefined` for a global type (no resolution).
   *
   * @throws DocNodesError if it is imported from a file that is not among the files.
   */
  resolve(typeName: string, resolution: DocResolution | undefined, file: string): FoundDeclaration | undefined {
    if (!resolution) return undefined;
    if (resolution.kind === "local") return this.#in(file, typeName);
    let target: string;
    try {
      target = new URL(resolution.specifier, file).href;
    } catch {
      target = resolution.specifier;
    }
    const found = this.#byFile.has(target) ? this.#in(target, resolution.name ?? typeName) : undefined;
    if (!found) {
      throw new DocNodesError(
        `${typeName} is imported from ${resolution.specifier}, which is not among the files: ` +
          `give that file too, or declare ${typeName} in one of them.`,
      );
    }
    return found;
  }

  #in(file: string, name: string): FoundDeclaration | undefined {
    // A re-export (`export { X } from ...`) is a `reference`: the declaration is in the other file.
    const declarations = (this.#byFile.get(file)?.get(name) ?? []).filter((one) => one.kind !== "reference");
    if (declarations.length === 0) return undefined;
    if (declarations.length > 1) {
      throw new DocNodesError(
        `${name} is declared ${declarations.length} times in ${shortFile(file)}: declare it once.`,
      );
    }
    return { name, file, declaration: declarations[0] };
  }
}

/** The file name of a URL, for messages. */
export function shortFile(url: string): string {
  return url.split("/").at(-1) ?? url;
}

/** The members of a union (nested unions and parentheses flattened); the type itself if it is none. */
export function unionMembers(type: TsType): TsType[] {
  if (type.kind === "parenthesized") return unionMembers(type.value);
  return type.kind === "union" ? type.value.flatMap(unionMembers) : [type];
}

/** `undefined`. */
export function isUndefined(type: TsType): boolean {
  return type.kind === "keyword" && type.value === "undefined";
}

/** `unknown`, parenthesized or not. */
export function isUnknown(type: TsType): boolean {
  if (type.kind === "parenthesized") return isUnknown(type.value);
  return type.kind === "keyword" && type.value === "unknown";
}

/** A type as written, for messages. */
export function typeText(type: TsType): string {
  switch (type.kind) {
    case "keyword":
      return type.value;
    case "literal":
      return type.value.kind === "string" ? JSON.stringify(type.value.string) : type.repr ?? type.value.kind;
    case "typeRef": {
      const params = type.value.typeParams?.map(typeText).join(", ");
      return params ? `${type.value.typeName}<${params}>` : type.value.typeName;
    }
    case "union":
      return type.value.map(typeText).join(" | ");
    case "intersection":
      return type.value.map(typeText).join(" & ");
    case "array":
      return `${typeText(type.value)}[]`;
    case "parenthesized":
      return `(${typeText(type.value)})`;
    case "typeLiteral":
      return "{ \u2026 }";
    default:
      return type.repr ?? `a ${type.kind} type`;
  }
}
