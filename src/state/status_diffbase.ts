/**
 * The diff-base in a status field: `status.kopf.last-handled-configuration` holds the essence as a
 * compact JSON string (not as an object, so that merges never mix old and new essences).
 *
 * @module
 */

import type { JsonObject, KubernetesObject } from "../model/body.ts";
import type { Patch } from "../model/patch.ts";
import { decodeEssence, type DiffBaseStorage, reduceEssence } from "./diffbase_storage.ts";
import { buildEssence } from "./essence.ts";
import { ensureInPatch, type FieldSpec, formatField, parseField, removeField, resolveField } from "./fields.ts";
import { dumpPythonJson } from "./python_json.ts";

/** Options of {@linkcode StatusDiffBaseStorage}. */
export interface StatusDiffBaseStorageOptions {
  /** Replaces `{name}` in the field; `kopf` by default. */
  name?: string;
  /** Where the essence lives; `status.{name}.last-handled-configuration` by default. */
  field?: FieldSpec;
  /** Fields left out of the essence, e.g. `spec.replicas` when an autoscaler changes it. */
  ignoredFields?: Iterable<FieldSpec>;
}

/**
 * Keeps the essence as a JSON string in a field of the object (the status stanza by default).
 *
 * @example
 * ```ts
 * import { StatusDiffBaseStorage } from "./status_diffbase.ts";
 * const storage = new StatusDiffBaseStorage({ field: "status.diff-base" });
 * ```
 */
export class StatusDiffBaseStorage implements DiffBaseStorage {
  /** The value of `{name}` in the field. */
  readonly name: string;
  /** The path of the stored essence. */
  readonly field: readonly string[];
  /** Fields left out of the essence. */
  readonly ignoredFields: readonly FieldSpec[];

  /** Creates the storage. */
  constructor(options: StatusDiffBaseStorageOptions = {}) {
    this.name = options.name ?? "kopf";
    this.field = formatField(options.field ?? "status.{name}.last-handled-configuration", this.name);
    this.ignoredFields = [...(options.ignoredFields ?? [])];
  }

  /** The essence without the storage's own field. */
  build(body: KubernetesObject, extraFields?: Iterable<FieldSpec>): JsonObject {
    return this[reduceEssence](buildEssence(body, { extraFields }));
  }

  /** The ignored fields and the storage's own field taken out of an essence (see `reduceEssence`). */
  [reduceEssence](essence: JsonObject): JsonObject {
    for (const field of this.ignoredFields) removeField(essence, parseField(field));
    removeField(essence, this.field);
    return essence;
  }

  /** The stored essence, or `null`. Throws a `SyntaxError` if the field holds anything but the JSON of an object. */
  fetch(body: KubernetesObject): JsonObject | null {
    const encoded = resolveField(body, this.field);
    if (encoded === undefined || encoded === null) return null;
    const source = `The field ${this.field.join(".")}`;
    if (typeof encoded !== "string") throw new SyntaxError(`${source} holds no JSON string.`);
    return decodeEssence(encoded, source);
  }

  /** Writes the essence as a compact JSON string (no newline). */
  store(_body: KubernetesObject, patch: Patch, essence: JsonObject): void {
    ensureInPatch(patch, this.field, dumpPythonJson(essence));
  }
}
