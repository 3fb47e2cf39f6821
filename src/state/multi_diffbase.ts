/**
 * Several diff-base storages used as one: for moving from one storage to another without making
 * every object look new (write to both for a while, then keep the new one).
 *
 * @module
 */

import type { JsonObject, KubernetesObject } from "../model/body.ts";
import type { Patch } from "../model/patch.ts";
import { AnnotationsDiffBaseStorage } from "./annotations_diffbase.ts";
import { type DiffBaseStorage, type EssenceReducer, reduceEssence } from "./diffbase_storage.ts";
import { buildEssence } from "./essence.ts";
import type { FieldSpec } from "./fields.ts";
import { StatusDiffBaseStorage } from "./status_diffbase.ts";

/**
 * Reads from the first storage that has an essence and writes into all of them; the essence is
 * cleared of every storage's own fields.
 *
 * @example
 * ```ts
 * import { MultiDiffBaseStorage } from "./multi_diffbase.ts";
 * import { AnnotationsDiffBaseStorage } from "./annotations_diffbase.ts";
 * import { StatusDiffBaseStorage } from "./status_diffbase.ts";
 * const storage = new MultiDiffBaseStorage([
 *   new StatusDiffBaseStorage({ field: "status.diff-base" }), // the new one
 *   new AnnotationsDiffBaseStorage(), // the old one, still read
 * ]);
 * ```
 */
export class MultiDiffBaseStorage implements DiffBaseStorage {
  /** The storages, in the order they are read. */
  readonly storages: readonly DiffBaseStorage[];

  /** The storages as {@linkcode EssenceReducer}s where their `build()` is the built-in one. */
  readonly #reducers: readonly (EssenceReducer | undefined)[];

  /** Combines the storages; the first one that has an essence wins when reading. */
  constructor(storages: Iterable<DiffBaseStorage>) {
    this.storages = [...storages];
    // Found once: a storage's `build()` is its class's, set before it is given here.
    this.#reducers = this.storages.map(reducerOf);
  }

  /** The essence, passed through every storage's `build()` in turn so that each removes its own fields. */
  build(body: KubernetesObject, extraFields?: Iterable<FieldSpec>): JsonObject {
    const fields = extraFields === undefined ? undefined : [...extraFields];
    let essence = buildEssence(body, { extraFields: fields });
    for (let index = 0; index < this.storages.length; index++) {
      // What is left of the body is the body for the next storage (its metadata keeps labels and annotations only).
      const rest = { metadata: {}, ...essence } as KubernetesObject;
      // The built-in storages take their fields out of this essence: building it again is a deep copy each time.
      essence = this.#reducers[index]?.[reduceEssence](essence, rest) ?? this.storages[index].build(rest, fields);
    }
    return essence;
  }

  /** The essence of the first storage that has one. */
  fetch(body: KubernetesObject): JsonObject | null {
    for (const storage of this.storages) {
      const essence = storage.fetch(body);
      if (essence !== null) return essence;
    }
    return null;
  }

  /** Writes the essence into every storage. */
  store(body: KubernetesObject, patch: Patch, essence: JsonObject): void {
    for (const storage of this.storages) storage.store(body, patch, essence);
  }
}

/** {@linkcode leavesStatusOut} by storage, found at its first question (asked at every echo). */
const statusLeftOut = new WeakMap<DiffBaseStorage, boolean>();

/**
 * Whether the storage's essences leave out `status` but for the extra fields asked for: true of the
 * built-in storages (and of several of them as one), whose `build()` a subclass has not replaced.
 * Then an object of nothing but `status` has an empty essence without building it.
 */
export function leavesStatusOut(storage: DiffBaseStorage): boolean {
  let known = statusLeftOut.get(storage);
  if (known === undefined) {
    known = storage instanceof MultiDiffBaseStorage
      ? storage.build === MultiDiffBaseStorage.prototype.build && storage.storages.every(leavesStatusOut)
      : reducerOf(storage) !== undefined;
    statusLeftOut.set(storage, known);
  }
  return known;
}

/** The storage as an {@linkcode EssenceReducer} when its `build()` is the built-in one (a subclass may build its own way). */
function reducerOf(storage: DiffBaseStorage): EssenceReducer | undefined {
  const builtIn = storage instanceof StatusDiffBaseStorage
    ? StatusDiffBaseStorage.prototype.build
    : storage instanceof AnnotationsDiffBaseStorage
    ? AnnotationsDiffBaseStorage.prototype.build
    : undefined;
  return builtIn !== undefined && storage.build === builtIn ? storage as DiffBaseStorage & EssenceReducer : undefined;
}
