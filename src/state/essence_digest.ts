/**
 * The diff-base of objects too big for an annotation: the API server refuses more than 256 KiB of
 * annotations on an object (keys and values together), and the essence of an object with a big
 * spec does not fit. Such an object gets a digest of its essence instead of the essence itself:
 * the next cycle still knows whether anything changed (and handles nothing when not), but not
 * what the old values were -- update handlers then see `old` as `{}` and every field as added.
 *
 * Objects whose essence fits keep Kopf's exact format; only the oversized ones get the digest.
 *
 * @module
 */

import type { JsonObject, KubernetesObject } from "../model/body.ts";
import type { Patch } from "../model/patch.ts";
import { sha256, toHex } from "../utils/digests.ts";
import { dumpPythonJson } from "./python_json.ts";

/** The API server's limit of all annotations of an object, keys and values together, in bytes. */
export const ANNOTATIONS_SIZE_LIMIT = 256 * 1024;

/** The only key of a stored digest (not a field name that Kubernetes objects use). */
export const DIGEST_KEY = "kopf:essence-sha256";

/** The size in bytes of the object's annotations once the patch (and then `extra`) is applied, as the API server counts it. */
export function annotationsSize(body: KubernetesObject, patch: Patch, extra: Record<string, string>): number {
  const merged: Record<string, unknown> = { ...body.metadata?.annotations };
  for (const [key, value] of Object.entries(patch.metadata.annotations)) {
    if (value === null || value === undefined) delete merged[key];
    else merged[key] = value;
  }
  Object.assign(merged, extra);
  let size = 0;
  for (const key in merged) size += utf8Length(key) + utf8Length(String(merged[key]));
  return size;
}

/**
 * The length of a text in UTF-8 bytes, counted without encoding it: each object's cycle that stores
 * its essence measures all of its annotations (an encoded copy of each was garbage at once).
 */
export function utf8Length(text: string): number {
  let bytes = text.length;
  for (let index = 0; index < text.length; index++) {
    const code = text.charCodeAt(index);
    if (code < 0x80) continue;
    if (code < 0x800) {
      bytes += 1;
      continue;
    }
    // Three bytes per unit; a surrogate pair is one code point of four bytes over two units, and
    // a lone surrogate is encoded as U+FFFD (three bytes).
    bytes += 2;
    const next = text.charCodeAt(index + 1);
    if (code >= 0xd800 && code <= 0xdbff && next >= 0xdc00 && next <= 0xdfff) index++;
  }
  return bytes;
}

/** The digest that stands for an essence: `{ "kopf:essence-sha256": "<hex>" }`. */
export function digestEssence(essence: JsonObject): JsonObject {
  return { [DIGEST_KEY]: toHex(sha256(dumpPythonJson(essence))) };
}

/** Whether a stored diff-base is a digest rather than an essence. */
export function isDigest(stored: JsonObject | null): boolean {
  return stored !== null && Object.keys(stored).length === 1 && typeof stored[DIGEST_KEY] === "string";
}

/**
 * The old essence to diff the current one against: the stored one, or -- for a stored digest --
 * the current essence itself when the digest matches (nothing changed), else `{}` (changed, old
 * values unknown).
 */
export function resolveDiffBase(stored: JsonObject | null, current: JsonObject): JsonObject | null {
  // `isDigest()` written out: asked in the cycle of every object that has a diff-base.
  if (stored === null || typeof stored[DIGEST_KEY] !== "string" || Object.keys(stored).length !== 1) return stored;
  return digestEssence(current)[DIGEST_KEY] === stored![DIGEST_KEY] ? current : {};
}
