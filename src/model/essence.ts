/**
 * The essence of an object: what counts as a change for change handlers, and what is stored as
 * the diff-base (Kopf's `last-handled-configuration`). Not status, not system metadata, not the
 * framework's own annotations.
 *
 * @module
 */

import type { JsonObject, JsonValue, KubernetesObject } from "./body.ts";

/** Annotations that never count as changes: kubectl's own bookkeeping. */
const IGNORED_ANNOTATIONS = new Set(["kubectl.kubernetes.io/last-applied-configuration"]);

/** Whether an annotation belongs to the framework (Kopf's prefixes, and any prefix marked `kopf-managed`). */
function isFrameworkAnnotation(key: string, managedPrefixes: Set<string>): boolean {
  const slash = key.indexOf("/");
  if (slash < 0) return false;
  const prefix = key.slice(0, slash);
  return prefix === "kopf.zalando.org" || prefix.endsWith(".kopf.zalando.org") || managedPrefixes.has(prefix);
}

/**
 * The essence of an object: everything but `apiVersion`, `kind`, `metadata` and `status`, plus
 * its labels and the annotations that are not the framework's; empty stanzas dropped.
 */
export function essenceOf(body: KubernetesObject): JsonObject {
  const essence: JsonObject = {};
  for (const [key, value] of Object.entries(body)) {
    if (key === "apiVersion" || key === "kind" || key === "metadata" || key === "status" || value === undefined) {
      continue;
    }
    essence[key] = structuredClone(value) as JsonValue;
  }
  const annotations = body.metadata.annotations ?? {};
  const managed = new Set(
    Object.keys(annotations).filter((key) => key.endsWith("/kopf-managed")).map((key) => key.split("/", 1)[0]),
  );
  const kept = Object.fromEntries(
    Object.entries(annotations).filter(([key]) =>
      !IGNORED_ANNOTATIONS.has(key) && !isFrameworkAnnotation(key, managed)
    ),
  );
  const metadata: JsonObject = {};
  if (body.metadata.labels && Object.keys(body.metadata.labels).length) metadata.labels = { ...body.metadata.labels };
  if (Object.keys(kept).length) metadata.annotations = kept;
  if (Object.keys(metadata).length) essence.metadata = metadata;
  return dropEmpty(essence);
}

function dropEmpty(value: JsonObject): JsonObject {
  const result: JsonObject = {};
  for (const [key, item] of Object.entries(value)) {
    if (item !== null && typeof item === "object" && !Array.isArray(item)) {
      const inner = dropEmpty(item);
      if (Object.keys(inner).length) result[key] = inner;
    } else {
      result[key] = item;
    }
  }
  return result;
}

/**
 * Serialises an essence as Kopf stores it: compact JSON, non-ASCII escaped as Python's `json`
 * does by default, and a trailing newline.
 */
export function serializeEssence(essence: JsonObject): string {
  return JSON.stringify(essence).replace(
    /[\u007f-\uffff]/g,
    (char) => `\\u${char.charCodeAt(0).toString(16).padStart(4, "0")}`,
  ) +
    "\n";
}
