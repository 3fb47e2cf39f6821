/**
 * What a patch asked for but the patched object does not show: the typical sign of a schema that
 * prunes unknown fields (a CRD's status without `x-kubernetes-preserve-unknown-fields`).
 *
 * @module
 */

import type { JsonObject, JsonValue, KubernetesObject } from "./body.ts";
import { deepEqual, type Diff, type DiffItem } from "./diff.ts";

/** Stanzas that the API server drops when they become empty: not an inconsistency. */
const DROPPED_WHEN_EMPTY = new Set(["metadata.labels", "metadata.annotations", "metadata.finalizers"]);

/**
 * The differences between a merge-patch and the object returned for it: `["change", path,
 * actual, wanted]` for values that differ, `["remove", ...]` for keys set to `null` that are still
 * there, `["add", ...]` for keys that are missing.
 */
export function patchInconsistencies(patch: JsonObject, body: KubernetesObject): Diff {
  const found: DiffItem[] = [];
  // The body is walked along with the patch (`actual`: the body's value at `path`, `undefined` when
  // absent), rather than resolved from its root for every field of the patch. `path` is one array,
  // grown and shrunk on the way: it is copied only into what is found, which is rarely anything.
  const path: string[] = [];
  const walk = (value: JsonValue, actual: unknown) => {
    if (value !== null && typeof value === "object" && !Array.isArray(value)) {
      const mapping = isMapping(actual) ? actual : undefined;
      let empty = true;
      for (const key in value) {
        if (!Object.hasOwn(value, key)) continue;
        empty = false;
        path.push(key);
        walk(value[key], mapping && Object.hasOwn(mapping, key) ? mapping[key] : undefined);
        path.pop();
      }
      // `{}` in a merge-patch creates an object where there is none.
      if (empty && (actual === null || typeof actual !== "object")) {
        found.push(["add", [...path], (actual ?? null) as JsonValue, {}]);
      }
      return;
    }
    if (value === null) {
      if (actual !== undefined && actual !== null) found.push(["remove", [...path], actual as JsonValue, null]);
      return;
    }
    if (actual === undefined) {
      const parent = path.slice(0, -1).join(".");
      if (!(DROPPED_WHEN_EMPTY.has(parent) && Array.isArray(value) && value.length === 0)) {
        found.push(["add", [...path], null, value]);
      }
      return;
    }
    if (!deepEqual(actual as JsonValue, value)) found.push(["change", [...path], actual as JsonValue, value]);
  };
  walk(patch, body);
  return found;
}

function isMapping(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}
