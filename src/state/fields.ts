/**
 * Nested fields of bodies, essences and patches addressed by paths (`"status.kopf.progress"` or
 * `["status", "kopf", "progress"]`): reading, force-setting, removing with emptied parents, and
 * copying between objects, the way Kopf's storages address them.
 *
 * @module
 */

import type { JsonObject, JsonValue } from "../model/body.ts";
import type { Patch } from "../model/patch.ts";

/** A field: a dotted string (`"status.kopf.progress"`) or the list of its keys. */
export type FieldSpec = string | readonly string[];

/** A mutable mapping as the helpers walk it (bodies, essences and parts of patches alike). */
type Mapping = { [key: string]: unknown };

/** Splits a field into its keys: `"a.b"` -> `["a", "b"]`; lists are taken as they are. */
export function parseField(field: FieldSpec): string[] {
  return typeof field === "string" ? field.split(".") : [...field];
}

/** Expands `{name}` in a field given as a string (Kopf's `field.format(name=name)`); lists stay as they are. */
export function formatField(field: FieldSpec, name: string): string[] {
  return typeof field === "string" ? parseField(field.replaceAll("{name}", name)) : parseField(field);
}

/** Whether a value is a mapping (a plain object, not an array or null). */
export function isMapping(value: unknown): value is Mapping {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}

// The helpers below test for a mapping inline rather than by calling `isMapping()`: they run for
// several fields of every handled object, and each distinct function on that path costs at a
// cluster's pace (docs/performance/cpu.md, "Fewer functions, a third pass").

/**
 * The value at a path, or `undefined` if any key is absent or any parent is not a mapping.
 * `null` values are returned as `null` (present).
 */
export function resolveField(root: unknown, path: readonly string[]): unknown {
  let current: unknown = root;
  for (let index = 0; index < path.length; index++) {
    if (current === null || typeof current !== "object" || Array.isArray(current)) return undefined;
    const key = path[index];
    if (!Object.hasOwn(current, key)) return undefined;
    current = (current as Mapping)[key];
    if (current === undefined) return undefined;
  }
  return current;
}

/** Sets the value at a path, creating missing parents as empty mappings. */
export function ensureField(root: Mapping, path: readonly string[], value: unknown): void {
  if (path.length === 0) throw new RangeError("Setting the root of an object is impossible; name a field.");
  let current: Mapping = root;
  for (let index = 0; index < path.length - 1; index++) {
    const key = path[index];
    let next = current[key];
    if (next === undefined) next = current[key] = {};
    if (next === null || typeof next !== "object" || Array.isArray(next)) {
      throw new TypeError(`Cannot set ${path.join(".")}: ${key} holds ${JSON.stringify(next)}, not an object.`);
    }
    current = next as Mapping;
  }
  current[path[path.length - 1]] = value;
}

/**
 * Removes the value at a path and every parent that this leaves empty. Absent keys and parents that
 * are not mappings are no error: there is nothing to remove. `keep` is the number of leading levels
 * that are never removed even when emptied (the fixed stanzas of a patch).
 */
export function removeField(root: Mapping, path: readonly string[], keep = 0): void {
  if (path.length === 0) throw new RangeError("Removing the root of an object is impossible; name a field.");
  // Down the path first (mostly it ends early: the field is absent), then back up through the
  // parents it passed, deleting those left empty. No slices, no recursion: see above.
  const last = path.length - 1;
  let parents: Mapping[] | undefined;
  let mapping = root;
  for (let depth = 0; depth < last; depth++) {
    const child = Object.hasOwn(mapping, path[depth]) ? mapping[path[depth]] : undefined;
    if (child === null || typeof child !== "object" || Array.isArray(child)) return;
    (parents ??= []).push(mapping);
    mapping = child as Mapping;
  }
  if (!Object.hasOwn(mapping, path[last])) return;
  delete mapping[path[last]];
  for (let depth = last - 1; depth >= keep; depth--) {
    for (const key in mapping) if (Object.hasOwn(mapping, key)) return;
    mapping = parents![depth];
    delete mapping[path[depth]];
  }
}

/**
 * Copies the given fields from one object to another (deep copies), creating parents as needed;
 * fields absent in the source, or under a non-mapping parent, are skipped.
 */
export function cherrypick(src: unknown, dst: JsonObject, fields: Iterable<FieldSpec>): void {
  for (const field of fields) {
    const path = parseField(field);
    const value = resolveField(src, path);
    if (value !== undefined) ensureField(dst, path, cloneJson(value as JsonValue));
  }
}

/** A deep copy of a JSON value; `undefined` members of objects are left out. */
export function cloneJson<T extends JsonValue>(value: T): T;
/** A deep copy of a JSON value; `undefined` members of objects are left out. */
export function cloneJson(value: unknown): unknown;
export function cloneJson(value: unknown): unknown {
  if (value === null || typeof value !== "object") return value;
  if (Array.isArray(value)) return value.map((item) => cloneJson(item));
  const copy: Mapping = {};
  for (const key in value) {
    if (!Object.hasOwn(value, key)) continue;
    const item = (value as Mapping)[key];
    if (item !== undefined) copy[key] = cloneJson(item);
  }
  return copy;
}

/** The top-level stanzas a `Patch` always has; they are never removed from it. */
const PATCH_STANZAS = new Set(["metadata", "spec", "status"]);

// A path that starts with one of the fixed stanzas is in the patch itself; any other in `patch.other`.

/** The value a patch holds at a path (`null` = a deletion), or `undefined` if it holds nothing there. */
export function resolveInPatch(patch: Patch, path: readonly string[]): unknown {
  return resolveField(PATCH_STANZAS.has(path[0]) ? patch : patch.other, path);
}

/** Sets a value in a patch at a path (`null` deletes it on the server), creating parents as needed. */
export function ensureInPatch(patch: Patch, path: readonly string[], value: JsonValue): void {
  ensureField(PATCH_STANZAS.has(path[0]) ? patch as unknown as Mapping : patch.other as Mapping, path, value);
}

/** Drops a path from a patch (and its emptied parents, except the patch's fixed stanzas). */
export function removeFromPatch(patch: Patch, path: readonly string[]): void {
  if (!PATCH_STANZAS.has(path[0])) return removeField(patch.other as Mapping, path);
  const fixed = path[0] === "metadata" && (path[1] === "annotations" || path[1] === "labels") ? 2 : 1;
  removeField(patch as unknown as Mapping, path, fixed);
}
