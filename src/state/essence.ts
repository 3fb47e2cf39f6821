/**
 * The essence of an object: the part whose changes matter to change handlers and that is stored
 * as the diff-base (Kopf's "last handled configuration"). It is the body without `apiVersion`,
 * `kind`, `metadata` and `status`, plus the labels and the annotations that are nobody's
 * bookkeeping, plus the extra fields that handlers watch (e.g. `status.phase`). The key order of
 * the result is Kopf's, so that it serialises to the same text.
 *
 * @module
 */

import type { JsonObject, JsonValue, KubernetesObject } from "../model/body.ts";
import { cherrypick, cloneJson, type FieldSpec, isMapping, parseField, removeField } from "./fields.ts";
import { detectMarkedPrefixes } from "./keys.ts";

/** kubectl's own bookkeeping annotation, never part of the essence. */
export const KUBECTL_LAST_APPLIED = "kubectl.kubernetes.io/last-applied-configuration";

/** The fields of `metadata` that belong to the essence, in their order there. */
const ESSENTIAL_METADATA: readonly string[] = ["labels", "annotations"];

/** Options of {@linkcode buildEssence}. */
export interface EssenceOptions {
  /** Fields added back although they are otherwise left out, e.g. `status.phase` that a handler watches. */
  extraFields?: Iterable<FieldSpec>;
  /** Fields removed at the end, e.g. `spec.replicas` managed by an autoscaler. */
  ignoredFields?: Iterable<FieldSpec>;
}

/**
 * The essence of an object, with annotations of Kopf-managed prefixes (`kopf.zalando.org/...`,
 * `*.kopf.zalando.org/...`, and any prefix with a `<prefix>/kopf-managed` key) and kubectl's
 * last-applied configuration left out, and empty `metadata`, `labels`, `annotations` and `status`
 * stanzas removed. Other empty objects (e.g. `spec: {}`) are kept, as Kopf keeps them.
 *
 * @example
 * ```ts
 * buildEssence({ apiVersion: "v1", kind: "X", metadata: { name: "x", labels: { a: "b" } }, spec: { field: "value" } });
 * // { spec: { field: "value" }, metadata: { labels: { a: "b" } } }
 * ```
 */
export function buildEssence(body: KubernetesObject | JsonObject, options: EssenceOptions = {}): JsonObject {
  // Built in every cycle of every object (and again for the diff-base it stores): loops, no entry lists.
  const essence: JsonObject = {};
  const source = body as JsonObject;
  for (const key in source) {
    if (!Object.hasOwn(source, key)) continue;
    if (key === "apiVersion" || key === "kind" || key === "metadata" || key === "status") continue;
    const value = source[key];
    if (value !== undefined) essence[key] = cloneJson(value);
  }
  // Copied as `cherrypick()` copies fields (present and defined: deep copies under a new `metadata`),
  // written out: the path's helpers are a few calls more per object (docs/performance/cpu.md, "Fewer
  // functions, a second pass").
  const meta = source.metadata;
  if (meta !== null && typeof meta === "object" && !Array.isArray(meta)) {
    for (const key of ESSENTIAL_METADATA) {
      const value = Object.hasOwn(meta, key) ? meta[key] : undefined;
      if (value !== undefined) ((essence.metadata ??= {}) as JsonObject)[key] = cloneJson(value);
    }
  }

  // Only what was copied above can be here: a mapping, whose annotations were copied only if defined.
  // The test of each key is `holdsEssentialAnnotations()`'s: a change of one is a change of both.
  const annotations = (essence.metadata as JsonObject | undefined)?.annotations;
  if (annotations !== null && typeof annotations === "object" && !Array.isArray(annotations)) {
    const prefixes = detectMarkedPrefixes(Object.keys(annotations));
    for (const key in annotations) {
      const slash = key.indexOf("/");
      const marked = slash >= 0 && prefixes.has(key.slice(0, slash));
      if (marked || key === KUBECTL_LAST_APPLIED) delete annotations[key];
    }
  }

  const { extraFields } = options;
  // Mostly an empty list (no handler watches a field of the status): not even a call then.
  if (extraFields !== undefined && !(Array.isArray(extraFields) && extraFields.length === 0)) {
    cherrypick(body, essence, extraFields);
  }
  removeEmptyStanzas(essence);
  if (options.ignoredFields !== undefined) {
    for (const field of options.ignoredFields) removeField(essence, parseField(field));
  }
  return essence;
}

/**
 * Whether {@linkcode buildEssence} would keep any of these annotations: it drops those under the
 * prefixes that Kopf operators manage (the storages' bookkeeping, see `detectMarkedPrefixes()`) and
 * kubectl's last applied configuration, by the same test. Lets a caller see that a merge-patch of
 * such annotations alone is no essence without building one.
 */
export function holdsEssentialAnnotations(annotations: JsonObject): boolean {
  const prefixes = detectMarkedPrefixes(Object.keys(annotations));
  for (const key in annotations) {
    const slash = key.indexOf("/");
    const marked = slash >= 0 && prefixes.has(key.slice(0, slash));
    if (!marked && key !== KUBECTL_LAST_APPLIED) return true;
  }
  return false;
}

/** Removes the given annotations from the essence (in place), keeping the order of the others. */
export function removeAnnotations(essence: JsonObject, keys: Iterable<string>): void {
  const metadata = essence.metadata;
  const annotations = isMapping(metadata) ? metadata.annotations : undefined;
  if (!isMapping(metadata) || !isMapping(annotations)) return;
  const removed = new Set(keys);
  if (!Object.keys(annotations).some((key) => removed.has(key))) return;
  metadata.annotations = Object.fromEntries(Object.entries(annotations).filter(([key]) => !removed.has(key)));
}

/**
 * Removes empty (or `null`, `false`, `0`, `""`, `[]`: Python's falsy) `metadata.annotations`,
 * `metadata.labels`, `metadata` and `status` from the essence (in place); nothing else.
 */
export function removeEmptyStanzas(essence: JsonObject): void {
  // The members tested inline, not by a helper: this runs for every object, often twice, and each
  // distinct function on that path costs at a cluster's pace (docs/performance/cpu.md, "Fewer functions,
  // a third pass").
  const metadata = essence.metadata;
  if (metadata !== null && typeof metadata === "object" && !Array.isArray(metadata)) {
    if (Object.hasOwn(metadata, "annotations") && isFalsy(metadata.annotations)) delete metadata.annotations;
    if (Object.hasOwn(metadata, "labels") && isFalsy(metadata.labels)) delete metadata.labels;
  }
  if (Object.hasOwn(essence, "metadata") && isFalsy(metadata)) delete essence.metadata;
  if (Object.hasOwn(essence, "status") && isFalsy(essence.status)) delete essence.status;
}

/** Whether {@linkcode removeEmptyStanzas} would remove anything from the essence. */
export function hasEmptyStanzas(essence: JsonObject): boolean {
  const metadata = essence.metadata;
  if (metadata !== null && typeof metadata === "object" && !Array.isArray(metadata)) {
    if (Object.hasOwn(metadata, "annotations") && isFalsy(metadata.annotations)) return true;
    if (Object.hasOwn(metadata, "labels") && isFalsy(metadata.labels)) return true;
  }
  return (Object.hasOwn(essence, "metadata") && isFalsy(metadata)) ||
    (Object.hasOwn(essence, "status") && isFalsy(essence.status));
}

/** Python's truth test of a JSON value. */
function isFalsy(value: JsonValue | undefined): boolean {
  if (value === null || value === undefined || value === false || value === 0 || value === "") return true;
  if (Array.isArray(value)) return value.length === 0;
  return typeof value === "object" && Object.keys(value).length === 0;
}
