/**
 * Typed reading of one mapping of a kubeconfig file (a cluster, a user, a context, a user's
 * `exec` section). Each read checks the field's type and fails with a one-line
 * {@linkcode CredentialsError} naming the file, the entry and the field, as kubectl refuses a
 * kubeconfig whose fields have the wrong type. Entries are only read when the chosen context uses
 * them, so a broken entry elsewhere never fails a load.
 *
 * @module
 */

import { dirname, isAbsolute, join, resolve } from "node:path";
import { CredentialsError } from "./credentials.ts";

/**
 * Whether a parsed YAML value is a mapping.
 *
 * @example
 * ```ts
 * import { isRecord } from "./kubeconfig_fields.ts";
 * console.assert(isRecord({ a: 1 }) && !isRecord([1]) && !isRecord(null));
 * ```
 */
export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/**
 * A short description of a parsed YAML value's type, for messages.
 *
 * @example
 * ```ts
 * import { describeValue } from "./kubeconfig_fields.ts";
 * console.assert(describeValue(42) === "the number 42" && describeValue([]) === "a list");
 * ```
 */
export function describeValue(value: unknown): string {
  if (Array.isArray(value)) return "a list";
  if (isRecord(value)) return "a mapping";
  if (typeof value === "string") return "a string";
  return `the ${typeof value} ${JSON.stringify(value)}`;
}

/** Unquoted booleans as kubectl's YAML 1.1 parser reads them (YAML 1.2, which `yaml` speaks, knows only true/false). */
const BOOLEANS: ReadonlyMap<string, boolean> = new Map([
  ...["true", "True", "TRUE", "yes", "Yes", "YES", "on", "On", "ON", "y", "Y"].map((word) => [word, true] as const),
  ...["false", "False", "FALSE", "no", "No", "NO", "off", "Off", "OFF", "n", "N"].map((word) => [word, false] as const),
]);

/**
 * The fields of one kubeconfig mapping, read with their types checked. Empty strings, empty
 * lists and nulls count as unset, as in kubectl.
 *
 * @example
 * ```ts
 * import { Fields } from "./kubeconfig_fields.ts";
 * const user = new Fields({ token: "t", username: "" }, "/home/u/.kube/config", 'user "u"');
 * console.assert(user.string("token") === "t" && user.string("username") === undefined);
 * ```
 */
export class Fields {
  /** The mapping as parsed. */
  readonly body: Readonly<Record<string, unknown>>;
  /** The kubeconfig file that defines it. */
  readonly file: string;
  /** What it is, for messages: e.g. `user "u"`. */
  readonly owner: string;
  /** The path of this mapping inside its entry, for messages: e.g. `exec.` (empty for the entry itself). */
  readonly prefix: string;

  /**
   * Wraps a parsed mapping.
   *
   * @param body The mapping.
   * @param file The kubeconfig file that defines it (relative paths in it resolve against its folder).
   * @param owner What it is, for messages: e.g. `cluster "c"`.
   * @param prefix The path of a nested mapping inside its entry, e.g. `exec.`.
   */
  constructor(body: Readonly<Record<string, unknown>>, file: string, owner: string, prefix = "") {
    this.body = body;
    this.file = file;
    this.owner = owner;
    this.prefix = prefix;
  }

  /** Where problems are reported: `kubeconfig <file>`. */
  get where(): string {
    return `kubeconfig ${this.file}`;
  }

  /**
   * Throws a {@linkcode CredentialsError} at this mapping's file.
   *
   * @param problem What is wrong and what to do about it.
   * @param cause The underlying error, if any.
   */
  fail(problem: string, cause?: unknown): never {
    throw new CredentialsError(this.where, problem, cause === undefined ? undefined : { cause });
  }

  /** Whether the field is set: present and neither null nor empty. */
  has(key: string): boolean {
    const value = this.body[key];
    if (value === undefined || value === null || value === "") return false;
    if (Array.isArray(value)) return value.length > 0;
    return !isRecord(value) || Object.keys(value).length > 0;
  }

  /** A string field, or `undefined` when unset. */
  string(key: string): string | undefined {
    if (!this.has(key)) return undefined;
    const value = this.body[key];
    if (typeof value !== "string") this.#wrongType(key, value, "a string (quote it in the YAML)");
    return value;
  }

  /** A boolean field (YAML 1.1 spellings such as `yes` accepted, as kubectl does); unset is false. */
  boolean(key: string): boolean {
    const value = this.body[key];
    if (value === undefined || value === null) return false;
    if (typeof value === "boolean") return value;
    const word = typeof value === "string" ? BOOLEANS.get(value) : undefined;
    if (word === undefined) this.#wrongType(key, value, "true or false");
    return word;
  }

  /** A path field resolved against the folder of the kubeconfig that names it, or `undefined` when unset. */
  path(key: string): string | undefined {
    const path = this.string(key);
    return path === undefined || isAbsolute(path) ? path : join(dirname(resolve(this.file)), path);
  }

  /** A list field (empty when unset). */
  list(key: string): readonly unknown[] {
    const value = this.body[key];
    if (value === undefined || value === null) return [];
    if (!Array.isArray(value)) this.#wrongType(key, value, "a list");
    return value;
  }

  /** A list of strings (empty when unset). */
  strings(key: string): string[] {
    const list = this.list(key);
    if (!list.every((item) => typeof item === "string")) this.#wrongType(key, list, "a list of strings");
    return list as string[];
  }

  /** A nested mapping, or `undefined` when unset. */
  fields(key: string): Fields | undefined {
    if (!this.has(key)) return undefined;
    const value = this.body[key];
    if (!isRecord(value)) this.#wrongType(key, value, "a mapping");
    return new Fields(value, this.file, this.owner, `${this.prefix}${key}.`);
  }

  /** A list of mappings, each as fields named `<key>[<index>]`. */
  records(key: string): Fields[] {
    return this.list(key).map((item, index) => {
      if (!isRecord(item)) this.#wrongType(`${key}[${index}]`, item, "a mapping");
      return new Fields(item, this.file, this.owner, `${this.prefix}${key}[${index}].`);
    });
  }

  #wrongType(key: string, value: unknown, expected: string): never {
    this.fail(`${this.prefix}${key} of ${this.owner} must be ${expected}, not ${describeValue(value)}`);
  }
}
