/**
 * What a patch asked for but the patched object does not show: the typical sign of a schema that
 * prunes unknown fields (a CRD's status without `x-kubernetes-preserve-unknown-fields`). The same
 * walk, stopped at the first difference, tells whether an object already holds a patch (sending it
 * would change nothing).
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
  walk(patch, body, [], found);
  return found;
}

/**
 * Whether the object already shows everything the merge-patch asks for: no
 * {@linkcode patchInconsistencies}, found without listing them (the first one ends the walk).
 */
export function patchHeld(patch: JsonObject, body: KubernetesObject): boolean {
  return walk(patch, body, [], undefined);
}

/**
 * Walks the patch along with the body (`actual`: the body's value at `path`, `undefined` when
 * absent), rather than resolving each field of the patch from the body's root. `path` is one array,
 * grown and shrunk on the way: it is copied only into what is found. Without `found`, returns
 * `false` at the first difference; with it, collects them all. Returns whether there was none.
 */
function walk(value: JsonValue, actual: unknown, path: string[], found: DiffItem[] | undefined): boolean {
  // Tested inline, not by a call: this runs for every field of every patch sent and checked.
  if (value !== null && typeof value === "object" && !Array.isArray(value)) {
    const mapping = actual !== null && typeof actual === "object" && !Array.isArray(actual)
      ? actual as Record<string, JsonValue>
      : undefined;
    let empty = true;
    let held = true;
    for (const key in value) {
      if (!Object.hasOwn(value, key)) continue;
      empty = false;
      path.push(key);
      const inner = mapping !== undefined && Object.hasOwn(mapping, key) ? mapping[key] : undefined;
      const same = walk(value[key] as JsonValue, inner, path, found);
      path.pop();
      if (!same) {
        if (found === undefined) return false;
        held = false;
      }
    }
    // `{}` in a merge-patch creates an object where there is none.
    if (empty && (actual === null || typeof actual !== "object")) {
      return found !== undefined && differs(found, ["add", [...path], (actual ?? null) as JsonValue, {}]);
    }
    return held;
  }
  if (value === null) {
    return actual === undefined || actual === null ||
      (found !== undefined && differs(found, ["remove", [...path], actual as JsonValue, null]));
  }
  if (actual === undefined) {
    const parent = path.slice(0, -1).join(".");
    if (DROPPED_WHEN_EMPTY.has(parent) && Array.isArray(value) && value.length === 0) return true;
    return found !== undefined && differs(found, ["add", [...path], null, value]);
  }
  // Scalars compared here: the deep comparison's call is for lists.
  return actual === value || (typeof value === "object" && deepEqual(actual as JsonValue, value)) ||
    (found !== undefined && differs(found, ["change", [...path], actual as JsonValue, value]));
}

/**
 * Notes a difference; always `false` (not held). Called only where differences are collected: a
 * walk that stops at the first one (every patch checked before it is sent) neither builds nor calls.
 */
function differs(found: DiffItem[], item: DiffItem): false {
  found.push(item);
  return false;
}
