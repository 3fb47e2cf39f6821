/**
 * Where handlers' results go: `status.<handler id>` of the object, through the cycle's patch.
 *
 * @module
 */

import type { Patch, PatchValue } from "../model/patch.ts";

/** Puts a handler's result at `status[id]`: mappings are merged into what is there, other values replace it. */
export function storeResult(patch: Patch, id: string, result: unknown): void {
  const value = JSON.parse(JSON.stringify(result)) as PatchValue;
  const existing = patch.status[id];
  // Mostly nothing is there yet: the merge is asked about only then, without a helper's call per result.
  if (
    existing !== undefined && existing !== null && typeof existing === "object" && !Array.isArray(existing) &&
    value !== null && typeof value === "object" && !Array.isArray(value)
  ) {
    patch.status[id] = { ...existing, ...value };
  } else {
    patch.status[id] = value;
  }
}
