/**
 * What an indexer's result puts into its index, and under whose name: the entries of a result by
 * Kopf's content rules, and the owner of an object's values.
 *
 * @module
 */

import type { KubernetesObject } from "./body.ts";
import { encodeIndexKey, type IndexEntry } from "./index_store.ts";

function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (typeof value !== "object" || value === null) return false;
  const proto = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}

/**
 * What an indexer's result puts into its index (Kopf's content rules):
 * - a plain object (prototype `Object` or `null`): each entry under its key (values may be `null`);
 * - a `Map`: each entry under its key, which may be a tuple (array) or a plain object;
 * - `null` or `undefined`: `null` -- nothing changes, the object keeps the values it had;
 * - anything else (an array, a string, a class instance...): the value itself under the key `null`.
 *
 * Equal keys in one result: the last one wins.
 *
 * @throws {TypeError} if a `Map` key cannot be an index key (see `encodeIndexKey`).
 *
 * @example
 * ```ts
 * indexEntries({ default: "web" });        // [{ encoded: '"default"', key: "default", value: "web" }]
 * indexEntries(["default", "web"]);         // [{ encoded: "null", key: null, value: ["default", "web"] }]
 * indexEntries(undefined);                  // null
 * ```
 */
export function indexEntries(result: unknown): IndexEntry[] | null {
  if (result === null || result === undefined) return null;
  if (result instanceof Map) {
    return [...result].map(([key, value]) => ({ encoded: encodeIndexKey(key), key, value }));
  }
  if (isPlainObject(result)) {
    return Object.entries(result).map(([key, value]) => ({ encoded: encodeIndexKey(key), key, value }));
  }
  return [{ encoded: "null", key: null, value: result }];
}

/**
 * Who owns values in the indexes: the object's uid, or (for bodies without one) its kind, api
 * version, namespace and name -- never just the name, since one index may span several resources.
 */
export function indexOwnerOf(body: KubernetesObject): string {
  const { uid, namespace, name } = body.metadata;
  return uid ?? JSON.stringify([body.apiVersion ?? null, body.kind ?? null, namespace ?? null, name ?? null]);
}
