/**
 * The contract of diff-base storages: where the essence of the last handled state of an object
 * (Kopf's "last handled configuration") is kept, so that the next change is diffed against it.
 *
 * @module
 */

import type { JsonObject, KubernetesObject } from "../model/body.ts";
import type { Patch } from "../model/patch.ts";
import type { FieldSpec } from "./fields.ts";

/**
 * Builds, reads and writes the essence of objects. `build()` gives the essence of the current
 * object (without what the storage itself keeps on it), `fetch()` the stored one (or `null` if the
 * object has never been handled), `store()` writes an essence into the cycle's patch.
 *
 * @example
 * ```ts
 * import { AnnotationsDiffBaseStorage } from "./annotations_diffbase.ts";
 * import { Patch } from "../model/patch.ts";
 * const storage = new AnnotationsDiffBaseStorage();
 * const body = { metadata: { name: "x", labels: { a: "b" } }, spec: { field: "value" } };
 * const patch = new Patch();
 * storage.store(body, patch, storage.build(body));
 * // patch.metadata.annotations["kopf.zalando.org/last-handled-configuration"]
 * //   === '{"spec":{"field":"value"},"metadata":{"labels":{"a":"b"}}}\n'
 * ```
 */
export interface DiffBaseStorage {
  /** The essence of the object, with the extra fields that handlers watch (e.g. `status.phase`). */
  build(body: KubernetesObject, extraFields?: Iterable<FieldSpec>): JsonObject;

  /** The stored essence, or `null` if there is none. */
  fetch(body: KubernetesObject): JsonObject | null;

  /** Writes the essence into the patch. */
  store(body: KubernetesObject, patch: Patch, essence: JsonObject): void;
}

/**
 * The built-in storages' way to take their ignored fields and their own fields out of an essence that
 * is already built (without ignored fields), in place: their `build()` is `buildEssence()` and then
 * this, and {@linkcode MultiDiffBaseStorage} builds the essence once for all of its storages instead
 * of once per storage. Not part of the contract: a storage without it, or whose `build()` is its own,
 * is asked to `build()`.
 */
export const reduceEssence: unique symbol = Symbol("reduceEssence");

/** A storage whose essence is {@linkcode reduceEssence} of the essence `buildEssence()` makes. */
export interface EssenceReducer {
  /** Removes the storage's ignored fields and its own fields from the essence of `body` (in place); returns it. */
  [reduceEssence](essence: JsonObject, body: KubernetesObject): JsonObject;
}

/** Reads a stored essence from its JSON text; throws a `SyntaxError` naming `source` for anything but an object. */
export function decodeEssence(text: string, source: string): JsonObject | null {
  let decoded: unknown;
  try {
    decoded = JSON.parse(text);
  } catch (error) {
    throw new SyntaxError(`${source} holds no valid JSON: ${(error as Error).message}`, { cause: error });
  }
  if (decoded === null) return null;
  if (typeof decoded !== "object" || Array.isArray(decoded)) {
    throw new SyntaxError(`${source} holds ${text.trim()}, not an essence (a JSON object).`);
  }
  return decoded as JsonObject;
}
