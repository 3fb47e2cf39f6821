/**
 * Several progress storages used as one: for moving from one storage to another without losing
 * the progress of objects handled before (write to both for a while, then keep the new one).
 *
 * @module
 */

import type { JsonObject, KubernetesObject } from "../model/body.ts";
import type { Patch } from "../model/patch.ts";
import { type ProgressRecord, sameProgressRecord } from "./progress.ts";
import type { ProgressStorage } from "./progress_storage.ts";

/**
 * Reads from the first storage that has a record and writes, purges and touches in all of them.
 *
 * @example
 * ```ts
 * import { MultiProgressStorage } from "./multi_progress.ts";
 * import { AnnotationsProgressStorage } from "./annotations_progress.ts";
 * import { StatusProgressStorage } from "./status_progress.ts";
 * // Move from the status stanza to annotations: read both, write both, for a while.
 * const storage = new MultiProgressStorage([new AnnotationsProgressStorage(), new StatusProgressStorage()]);
 * ```
 */
export class MultiProgressStorage implements ProgressStorage {
  /** The storages, in the order they are read. */
  readonly storages: readonly ProgressStorage[];

  /** Combines the storages; the first one that has a record wins when reading. */
  constructor(storages: Iterable<ProgressStorage>) {
    this.storages = [...storages];
  }

  /** The record of the first storage that has one. */
  fetch(key: string, body: KubernetesObject): ProgressRecord | null {
    for (const storage of this.storages) {
      const record = storage.fetch(key, body);
      if (record !== null) return record;
    }
    return null;
  }

  /**
   * Writes the record into every storage, unless the record read from the object (the first one
   * found) is the same; each storage also skips what it holds already.
   */
  store(key: string, record: ProgressRecord, body: KubernetesObject, patch: Patch): void {
    if (sameProgressRecord(record, this.fetch(key, body))) return;
    for (const storage of this.storages) storage.store(key, record, body, patch);
  }

  /** Purges the record from every storage. */
  purge(key: string, body: KubernetesObject, patch: Patch): void {
    for (const storage of this.storages) storage.purge(key, body, patch);
  }

  /** Touches in every storage. */
  touch(body: KubernetesObject, patch: Patch, value: string | null): void {
    for (const storage of this.storages) storage.touch(body, patch, value);
  }

  /** The essence cleared by every storage in turn (the essence itself if none removes anything). */
  clear(essence: JsonObject): JsonObject {
    let result = essence;
    for (const storage of this.storages) result = storage.clear(result);
    return result;
  }

  /** Flushes every storage that buffers. */
  flush(): void {
    for (const storage of this.storages) storage.flush?.();
  }
}
