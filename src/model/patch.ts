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
  /** Labels to set; `null` removes one. */
  labels: Record<string, string | null>;
  /** Annotations to set; `null` removes one. */
  annotations: Record<string, string | null>;
  /** Any other field of `metadata` to set; `null` removes it. */
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
    // Without rendering (a deep copy): asked before every handler attempt. What the rendering
    // keeps is exactly a defined value directly in one of the stanzas (an empty object inside counts).
    const { labels, annotations, ...restOfMetadata } = this.metadata;
    return [this.other, restOfMetadata, labels, annotations, this.spec, this.status].every(undefinedOnly);
  }

  /** The whole merge-patch, without empty stanzas. */
  toMergePatch(): JsonObject {
    const { labels, annotations, ...restOfMetadata } = this.metadata;
    const metadata = stanzas({ ...restOfMetadata, labels, annotations }, ["labels", "annotations"]);
    return stanzas({ ...this.other, metadata, spec: this.spec, status: this.status }, ["metadata", "spec", "status"]);
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

  /** A deep copy: later changes of either do not show in the other. */
  clone(): Patch {
    const copy = new Patch();
    copy.metadata = structuredClone(this.metadata);
    copy.spec = structuredClone(this.spec);
    copy.status = structuredClone(this.status);
    Object.assign(copy.other, structuredClone(this.other));
    return copy;
  }

  /** Forgets everything written so far. */
  clear(): void {
    this.metadata = { labels: {}, annotations: {} };
    this.spec = {};
    this.status = {};
    for (const key of Object.keys(this.other)) delete this.other[key];
  }
}

/** Whether a mapping has no keys other than those holding `undefined`. */
function undefinedOnly(mapping: { [key: string]: unknown }): boolean {
  for (const key in mapping) {
    if (Object.hasOwn(mapping, key) && mapping[key] !== undefined) return false;
  }
  return true;
}

/**
 * A copy without `undefined` values, and without the named stanzas when they are empty (the
 * ones the patch creates up front). Empty objects that handlers put in are kept: in a
 * merge-patch, `{}` creates an empty object where there was none.
 */
function stanzas(value: PatchObject, prunable: readonly string[]): JsonObject {
  const result = withoutUndefined(value) as JsonObject;
  for (const key of prunable) {
    const item = result[key];
    if (item !== null && typeof item === "object" && !Array.isArray(item) && Object.keys(item).length === 0) {
      delete result[key];
    }
  }
  return result;
}

function withoutUndefined(value: PatchValue | undefined): PatchValue | undefined {
  if (value === null || typeof value !== "object") return value;
  if (Array.isArray(value)) return value.map((item) => withoutUndefined(item) ?? null);
  const result: { [key: string]: PatchValue } = {};
  for (const [key, item] of Object.entries(value)) {
    const cleaned = withoutUndefined(item);
    if (cleaned !== undefined) result[key] = cleaned;
  }
  return result;
}
