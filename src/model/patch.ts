/**
 * The patch a handling cycle accumulates: handlers write into it, the framework sends it as one
 * JSON merge-patch (the `status` part to the status subresource when the resource has one).
 *
 * @module
 */

import type { JsonObject, JsonValue } from "./body.ts";

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
    const { metadata } = this;
    return undefinedOnly(this.other) && undefinedOnly(metadata, METADATA_STANZAS) &&
      undefinedOnly(metadata.labels) && undefinedOnly(metadata.annotations) && undefinedOnly(this.spec) &&
      undefinedOnly(this.status);
  }

  /** The whole merge-patch, without empty stanzas. */
  toMergePatch(): JsonObject {
    // Rendered for every write and compared with the patched object: built in one pass, and
    // without deleting what turns out empty (a deletion makes V8 keep an object as a slow
    // dictionary, and each later walk over it costs; both showed in the profiles of cycles).
    const metadata: JsonObject = {};
    copyDefined(this.metadata, metadata, METADATA_STANZAS);
    const result: JsonObject = {};
    copyDefined(this.other, result);
    if (hasKeys(metadata)) result.metadata = metadata;
    const spec = withoutUndefined(this.spec);
    if (spec !== undefined && !emptyMapping(spec)) result.spec = spec as JsonValue;
    const status = withoutUndefined(this.status);
    if (status !== undefined && !emptyMapping(status)) result.status = status as JsonValue;
    return result;
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

/** The stanzas of `metadata` that a patch creates up front. */
const METADATA_STANZAS: readonly string[] = ["labels", "annotations"];

/** Whether a mapping has no keys other than those holding `undefined` (and those skipped). */
function undefinedOnly(mapping: { [key: string]: unknown }, skipped?: readonly string[]): boolean {
  for (const key in mapping) {
    if (Object.hasOwn(mapping, key) && mapping[key] !== undefined && !skipped?.includes(key)) return false;
  }
  return true;
}

/**
 * Copies the defined members of a mapping, without their `undefined` values deep inside; the
 * named keys go last, in that order (the stanzas of the metadata after its other fields), and only
 * if something is left in them: the patch creates them up front, empty. Empty objects that
 * handlers put in elsewhere are kept: in a merge-patch, `{}` creates an empty object where there was none.
 */
function copyDefined(source: PatchObject, target: JsonObject, stanzas: readonly string[] = []): void {
  for (const key in source) {
    if (!Object.hasOwn(source, key) || stanzas.includes(key)) continue;
    const cleaned = withoutUndefined(source[key]);
    if (cleaned !== undefined) target[key] = cleaned as JsonValue;
  }
  for (const key of stanzas) {
    const cleaned = withoutUndefined(source[key]);
    if (cleaned !== undefined && !emptyMapping(cleaned)) target[key] = cleaned as JsonValue;
  }
}

/** Whether an object has any own key (the values of a rendered patch are never `undefined`). */
function hasKeys(value: object): boolean {
  for (const key in value) if (Object.hasOwn(value, key)) return true;
  return false;
}

/** Whether a value is a mapping without keys (`null` and arrays are not). */
function emptyMapping(value: PatchValue): boolean {
  return value !== null && typeof value === "object" && !Array.isArray(value) && !hasKeys(value);
}

function withoutUndefined(value: PatchValue | undefined): PatchValue | undefined {
  if (value === null || typeof value !== "object") return value;
  if (Array.isArray(value)) return value.map((item) => withoutUndefined(item) ?? null);
  const result: { [key: string]: PatchValue } = {};
  // Not `for...in`: its keyed loads, recursing into members with other names, made V8 drop this
  // function's optimised code every ~90 objects and compile it again (`--trace-deopt`).
  const keys = Object.keys(value);
  for (let index = 0; index < keys.length; index++) {
    const key = keys[index];
    const cleaned = withoutUndefined(value[key]);
    if (cleaned !== undefined) result[key] = cleaned;
  }
  return result;
}
