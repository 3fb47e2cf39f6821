/**
 * The patch a handling cycle accumulates: handlers write into it, the framework sends it as one
 * JSON merge-patch (the `status` part to the status subresource when the resource has one).
 *
 * @module
 */

import type { JsonObject } from "./body.ts";

/** Values a patch holds; `null` deletes the key on the server. */
export type PatchValue = string | number | boolean | null | PatchValue[] | { [key: string]: PatchValue | undefined };

/** A mapping inside a patch. */
export type PatchObject = { [key: string]: PatchValue | undefined };

/** The metadata part of a patch: labels and annotations are ready to be written into. */
export interface PatchMetadata {
  labels: Record<string, string | null>;
  annotations: Record<string, string | null>;
  [key: string]: PatchValue | undefined;
}

/**
 * A JSON merge-patch under construction: `spec`, `status`, `metadata.labels` and
 * `metadata.annotations` exist from the start, so handlers can write `patch.status.phase = "Ready"`.
 *
 * @example
 * ```ts
 * import { Patch } from "@kopf/kopf";
 * const patch = new Patch();
 * patch.spec.replicas = 3;
 * patch.metadata.labels.app = null; // removes the label
 * console.log(JSON.stringify(patch.toMergePatch())); // {"metadata":{"labels":{"app":null}},"spec":{"replicas":3}}
 * ```
 */
export class Patch {
  /** Changes of `metadata`. */
  metadata: PatchMetadata = { labels: {}, annotations: {} };
  /** Changes of `spec`. */
  spec: PatchObject = {};
  /** Changes of `status`. */
  status: PatchObject = {};
  /** Changes of other top-level fields (e.g. `data` of a ConfigMap). */
  readonly other: PatchObject = {};

  /** True when sending it would change nothing. */
  get empty(): boolean {
    return Object.keys(this.toMergePatch()).length === 0;
  }

  /** The whole merge-patch, without empty stanzas. */
  toMergePatch(): JsonObject {
    return prune({ ...this.other, metadata: this.metadata, spec: this.spec, status: this.status }) ?? {};
  }

  /** The merge-patch without `status` (for the main resource when status is a subresource). */
  withoutStatus(): JsonObject {
    const { status: _status, ...rest } = this.toMergePatch();
    return rest;
  }

  /** Only the `status` part, as a merge-patch for the status subresource (empty if nothing changes there). */
  onlyStatus(): JsonObject {
    const status = this.toMergePatch().status;
    return status === undefined ? {} : { status };
  }

  /** Forgets everything written so far. */
  clear(): void {
    this.metadata = { labels: {}, annotations: {} };
    this.spec = {};
    this.status = {};
    for (const key of Object.keys(this.other)) delete this.other[key];
  }
}

/** Drops empty objects and `undefined` values, recursively; returns `undefined` if nothing is left. */
function prune(value: PatchObject): JsonObject | undefined {
  const result: JsonObject = {};
  for (const [key, item] of Object.entries(value)) {
    if (item === undefined) continue;
    if (item !== null && typeof item === "object" && !Array.isArray(item)) {
      const pruned = prune(item);
      if (pruned !== undefined) result[key] = pruned;
    } else {
      result[key] = item as JsonObject[string];
    }
  }
  return Object.keys(result).length ? result : undefined;
}
