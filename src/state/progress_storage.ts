/**
 * The contract of progress storages: where the per-handler progress records of a cause live on
 * an object between handling cycles (annotations by default, as in Kopf), and how they are read,
 * written into the cycle's patch, purged when the cause is done, and kept out of the essence.
 *
 * @module
 */

import type { JsonObject, KubernetesObject } from "../model/body.ts";
import type { Patch } from "../model/patch.ts";
import type { ProgressRecord } from "./progress.ts";

/**
 * Keeps the progress of handlers on the objects they handle. Records are stored per handler id,
 * never combined, so that several operators (with different ids or prefixes) can share an object.
 *
 * Implement it for a custom storage; `flush()` is called after each batch of stores and purges of a
 * cycle (for storages that buffer).
 *
 * @example
 * ```ts
 * import type { JsonObject, KubernetesObject } from "../model/body.ts";
 * import type { Patch } from "../model/patch.ts";
 * import type { ProgressRecord } from "./progress.ts";
 * import type { ProgressStorage } from "./progress_storage.ts";
 *
 * // Keeps records in memory, by object uid and handler id (lost on restarts: an illustration only).
 * class MemoryProgressStorage implements ProgressStorage {
 *   #records = new Map<string, ProgressRecord>();
 *   fetch(key: string, body: KubernetesObject): ProgressRecord | null {
 *     return this.#records.get(`${body.metadata.uid}/${key}`) ?? null;
 *   }
 *   store(key: string, record: ProgressRecord, body: KubernetesObject): void {
 *     this.#records.set(`${body.metadata.uid}/${key}`, record);
 *   }
 *   purge(key: string, body: KubernetesObject): void {
 *     this.#records.delete(`${body.metadata.uid}/${key}`);
 *   }
 *   touch(_body: KubernetesObject, patch: Patch, value: string | null): void {
 *     patch.metadata.annotations["example.com/touch"] = value;
 *   }
 *   clear(essence: JsonObject): JsonObject {
 *     return structuredClone(essence);
 *   }
 * }
 * ```
 */
export interface ProgressStorage {
  /** The handler's record on the object, or `null` if it has none. */
  fetch(key: string, body: KubernetesObject): ProgressRecord | null;

  /** Writes the handler's record into the patch, unless the object already holds the same record. */
  store(key: string, record: ProgressRecord, body: KubernetesObject, patch: Patch): void;

  /**
   * Removes the handler's record: deleted on the server (`null` in the patch) if the object has it,
   * dropped from the patch if only the patch has it.
   */
  purge(key: string, body: KubernetesObject, patch: Patch): void;

  /**
   * Sets the touch dummy to `value` (a timestamp, which makes the object change so that a new event
   * comes), or clears it with `null`; writes nothing if the object already holds that value.
   */
  touch(body: KubernetesObject, patch: Patch, value: string | null): void;

  /**
   * The essence without what this storage keeps on the object (its own annotations or fields): a
   * copy when anything is removed -- the argument is never changed -- or the essence itself.
   */
  clear(essence: JsonObject): JsonObject;

  /** Writes out anything buffered by `store()` and `purge()`; the built-in storages buffer nothing. */
  flush?(): void;
}
