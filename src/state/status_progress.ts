/**
 * Progress records in the status stanza, as old Kopf versions kept them:
 * `status.kopf.progress.<id>` holds the record of handler `<id>` as an object, `status.kopf.dummy`
 * the touch timestamp. Kopf 1.44 only reads and purges them there (to take over objects handled by
 * older versions); {@linkcode ReadOnlyStatusProgressStorage} is that behaviour.
 *
 * @module
 */

import type { JsonObject, KubernetesObject } from "../model/body.ts";
import type { Patch } from "../model/patch.ts";
import { hasEmptyStanzas, removeEmptyStanzas } from "./essence.ts";
import {
  cloneJson,
  ensureInPatch,
  type FieldSpec,
  formatField,
  removeField,
  removeFromPatch,
  resolveField,
  resolveInPatch,
} from "./fields.ts";
import { completeProgressRecord, type ProgressRecord, sameProgressRecord } from "./progress.ts";
import type { ProgressStorage } from "./progress_storage.ts";

/** Options of {@linkcode StatusProgressStorage}. */
export interface StatusProgressStorageOptions {
  /** Replaces `{name}` in the fields; `kopf` by default. */
  name?: string;
  /** Where the records live, one key per handler id; `status.{name}.progress` by default. */
  field?: FieldSpec;
  /** Where the touch dummy lives; `status.{name}.dummy` by default. */
  touchField?: FieldSpec;
}

/**
 * Keeps progress records as objects under a field of the object (`status.kopf.progress` by default).
 * Needs a status that keeps unknown fields (e.g. `x-kubernetes-preserve-unknown-fields`).
 *
 * @example
 * ```ts
 * import { StatusProgressStorage } from "./status_progress.ts";
 * const storage = new StatusProgressStorage({ name: "my-op" }); // status.my-op.progress.<id>
 * ```
 */
export class StatusProgressStorage implements ProgressStorage {
  /** The value of `{name}` in the fields. */
  readonly name: string;
  /** The path of the records' container. */
  readonly field: readonly string[];
  /** The path of the touch dummy. */
  readonly touchField: readonly string[];

  /** Creates the storage. */
  constructor(options: StatusProgressStorageOptions = {}) {
    this.name = options.name ?? "kopf";
    this.field = formatField(options.field ?? "status.{name}.progress", this.name);
    this.touchField = formatField(options.touchField ?? "status.{name}.dummy", this.name);
  }

  /** The record under the handler's id in the container, or `null`. */
  fetch(key: string, body: KubernetesObject): ProgressRecord | null {
    // Mappings tested inline, not by `isMapping()`: asked for every handler of every object.
    const container = resolveField(body, this.field);
    if (container === null || typeof container !== "object" || Array.isArray(container)) return null;
    const record = (container as Record<string, unknown>)[key];
    return record !== null && typeof record === "object" && !Array.isArray(record) ? record as ProgressRecord : null;
  }

  /**
   * Writes the record (all nine fields, `null` for absent ones, as Kopf does) unless the object
   * holds the same one.
   */
  store(key: string, record: ProgressRecord, body: KubernetesObject, patch: Patch): void {
    if (sameProgressRecord(record, this.fetch(key, body))) return;
    ensureInPatch(patch, [...this.field, key], completeProgressRecord(record));
  }

  /** Deletes the record if the object has it; drops it from the patch if only the patch has it. */
  purge(key: string, body: KubernetesObject, patch: Patch): void {
    const path = [...this.field, key];
    if (resolveField(body, path) !== undefined) {
      ensureInPatch(patch, path, null);
    } else if (resolveInPatch(patch, path) !== undefined) {
      removeFromPatch(patch, path);
    }
  }

  /** Sets or clears the touch dummy where the object's value differs. */
  touch(body: KubernetesObject, patch: Patch, value: string | null): void {
    if ((resolveField(body, this.touchField) ?? null) !== value) ensureInPatch(patch, this.touchField, value);
  }

  /**
   * The essence without the records' container (and the parents this empties): a copy if it is
   * there (or an empty stanza to remove), else the essence itself.
   */
  clear(essence: JsonObject): JsonObject {
    if (resolveField(essence, this.field) === undefined && !hasEmptyStanzas(essence)) return essence;
    const copy = cloneJson(essence);
    removeField(copy, this.field);
    removeEmptyStanzas(copy);
    return copy;
  }
}

/**
 * A status storage that reads and purges records but writes none: Kopf 1.44's treatment of
 * `status.kopf.progress`, which older versions wrote and 1.44 stopped writing (a status PATCH less
 * per cycle). Records found there are still taken over, and purged when their cause is done.
 */
export class ReadOnlyStatusProgressStorage extends StatusProgressStorage {
  /** Writes nothing. */
  override store(_key: string, _record: ProgressRecord, _body: KubernetesObject, _patch: Patch): void {}

  /** Writes nothing. */
  override touch(_body: KubernetesObject, _patch: Patch, _value: string | null): void {}
}
