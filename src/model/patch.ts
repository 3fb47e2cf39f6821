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
  declare metadata: PatchMetadata;
  /** Changes of `spec`. */
  declare spec: PatchObject;
  /** Changes of `status`. */
  declare status: PatchObject;
  /** Changes of other top-level fields (e.g. `data` of a ConfigMap). */
  declare readonly other: PatchObject;

  /** An empty patch, its stanzas ready to be written into. */
  constructor() {
    // Set here, not initialised in the class body: V8 runs field initialisers as a function of their
    // own at every construction, and every cycle makes a patch (docs/performance/cpu.md, "Fewer
    // functions, a third pass").
    this.metadata = { labels: {}, annotations: {} };
    this.spec = {};
    this.status = {};
    this.other = {};
  }

  /** True when sending it would change nothing. */
  get empty(): boolean {
    // Without rendering (a deep copy): asked before every handler attempt. What the rendering
    // keeps is exactly a defined value directly in one of the stanzas (an empty object inside counts).
    // One loop over the six mappings, not a helper per mapping: this runs for every object, and
    // each distinct function on its path costs at a cluster's pace (docs/performance/cpu.md, "Fewer
    // functions, a third pass").
    const { metadata } = this;
    const mappings = [this.other, metadata, metadata.labels, metadata.annotations, this.spec, this.status];
    for (let index = 0; index < mappings.length; index++) {
      const mapping: { [key: string]: unknown } = mappings[index];
      for (const key in mapping) {
        if (!Object.hasOwn(mapping, key) || mapping[key] === undefined) continue;
        if (index !== 1 || (key !== "labels" && key !== "annotations")) return false;
      }
    }
    return true;
  }

  /** The whole merge-patch, without empty stanzas. */
  toMergePatch(): JsonObject {
    // Rendered for every write and compared with the patched object: built in one pass, and
    // without deleting what turns out empty (a deletion makes V8 keep an object as a slow
    // dictionary, and each later walk over it costs; both showed in the profiles of cycles).
    // Other top-level fields first, then metadata (its stanzas after its other fields), spec, status.
    const result: JsonObject = {};
    const { other, metadata: source } = this;
    for (const key in other) {
      if (!Object.hasOwn(other, key)) continue;
      const cleaned = withoutUndefined(other[key], false);
      if (cleaned !== undefined) result[key] = cleaned as JsonValue;
    }
    const metadata: JsonObject = {};
    let changed = false;
    for (const key in source) {
      if (!Object.hasOwn(source, key) || key === "labels" || key === "annotations") continue;
      const cleaned = withoutUndefined(source[key], false);
      if (cleaned !== undefined) {
        metadata[key] = cleaned as JsonValue;
        changed = true;
      }
    }
    const labels = withoutUndefined(source.labels, true);
    if (labels !== undefined) {
      metadata.labels = labels as JsonValue;
      changed = true;
    }
    const annotations = withoutUndefined(source.annotations, true);
    if (annotations !== undefined) {
      metadata.annotations = annotations as JsonValue;
      changed = true;
    }
    if (changed) result.metadata = metadata;
    const spec = withoutUndefined(this.spec, true);
    if (spec !== undefined) result.spec = spec as JsonValue;
    const status = withoutUndefined(this.status, true);
    if (status !== undefined) result.status = status as JsonValue;
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

/**
 * A deep copy without the `undefined` members of mappings (`null` in arrays). A `stanza` (one the
 * patch creates up front, empty) that is left without members gives `undefined`: it is not sent.
 * Empty objects that handlers put in elsewhere are kept: in a merge-patch, `{}` creates an empty
 * object where there was none.
 */
function withoutUndefined(value: PatchValue | undefined, stanza: boolean): PatchValue | undefined {
  if (value === null || typeof value !== "object") return value;
  if (Array.isArray(value)) return value.map((item) => withoutUndefined(item, false) ?? null);
  const result: { [key: string]: PatchValue } = {};
  let kept = false;
  // Not `for...in`: its keyed loads, recursing into members with other names, made V8 drop this
  // function's optimised code every ~90 objects and compile it again (`--trace-deopt`).
  const keys = Object.keys(value);
  for (let index = 0; index < keys.length; index++) {
    const key = keys[index];
    const cleaned = withoutUndefined(value[key], false);
    if (cleaned !== undefined) {
      result[key] = cleaned;
      kept = true;
    }
  }
  return kept || !stanza ? result : undefined;
}
