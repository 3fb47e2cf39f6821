/**
 * Sensitive fields: what counts as secret (a Secret's `data` and `stringData`, plus the fields a
 * user marks in `settings.persistence.sensitiveFields`), decided here and nowhere else, and how
 * their values are masked wherever the framework renders an object: in the diff-base it stores on
 * the object, and in what it logs (patches, diffs, `old`/`new`).
 *
 * A masked value is a salted digest, `sha256:<hex>`, so that a change of one key still shows as a
 * change of that key (handlers fire, field handlers on `data.<key>` too) while the value itself
 * is never written or printed. The salt is the object's uid: equal values of different objects
 * get different digests.
 *
 * @module
 */

import type { Diff, DiffItem } from "../model/diff.ts";
import type { Resource } from "../model/resource.ts";
import { sha256, toHex } from "../utils/digests.ts";
import { type FieldSpec, isMapping, parseField } from "./fields.ts";

/** The fields of a Secret whose values are secret (`stringData` is write-only, but handlers may patch it). */
const SECRET_FIELDS: readonly (readonly string[])[] = [["data"], ["stringData"]];

const MASKED = /^sha256:[0-9a-f]{64}$/;

/** The fields of one resource whose values are masked; empty for most resources. */
export type SensitiveFields = readonly (readonly string[])[];

/**
 * The sensitive fields of a resource: a core Secret's `data` and `stringData`, plus `marked` (the
 * user's `settings.persistence.sensitiveFields`, for every resource).
 */
export function sensitiveFieldsOf(
  resource: Pick<Resource, "group" | "plural">,
  marked: Iterable<FieldSpec> = [],
): SensitiveFields {
  const own = resource.group === "" && resource.plural === "secrets" ? SECRET_FIELDS : [];
  const extra = [...marked].map(parseField);
  return extra.length ? [...own, ...extra] : own;
}

/** The masked form of a value: `sha256:` and the hex digest of the salt and the value. */
export function maskValue(value: unknown, salt: string): string {
  const text = typeof value === "string" ? value : JSON.stringify(value);
  return `sha256:${toHex(sha256(`${salt}\u0000${text}`))}`;
}

/**
 * A copy of `value` (an object, an essence, a merge-patch) with the values of the sensitive fields
 * masked: each key of a mapping field (each key of a Secret's `data`), or the field's whole value
 * otherwise. Values masked already and `null`s (a merge-patch's removals) stay as they are.
 * Returns `value` itself when there is nothing to mask, so callers can tell by identity.
 *
 * @example
 * ```ts
 * const fields = sensitiveFieldsOf({ group: "", plural: "secrets" });
 * maskSensitive({ data: { password: "aHVudGVyMg==" } }, fields, "uid-1");
 * // { data: { password: "sha256:..." } }
 * ```
 */
export function maskSensitive<T>(value: T, fields: SensitiveFields, salt: string): T {
  let result = value;
  for (const path of fields) result = maskAt(result, path, 0, salt) as T;
  return result;
}

/** Masks the field at `path[depth...]` below `node`; returns `node` itself when nothing changes. */
function maskAt(node: unknown, path: readonly string[], depth: number, salt: string): unknown {
  if (!isMapping(node)) return node;
  const key = path[depth];
  if (!Object.hasOwn(node, key) || node[key] === undefined) return node;
  const child = node[key];
  const masked = depth === path.length - 1 ? maskLeaf(child, salt) : maskAt(child, path, depth + 1, salt);
  return masked === child ? node : { ...node, [key]: masked };
}

/** A mapping's values masked one by one; any other value masked as a whole. */
function maskLeaf(value: unknown, salt: string): unknown {
  if (!isMapping(value)) return maskOne(value, salt);
  let copy: Record<string, unknown> | undefined;
  for (const [key, item] of Object.entries(value)) {
    const masked = maskOne(item, salt);
    if (masked !== item) (copy ??= { ...value })[key] = masked;
  }
  return copy ?? value;
}

function maskOne(value: unknown, salt: string): unknown {
  if (value === null || (typeof value === "string" && MASKED.test(value))) return value;
  return maskValue(value, salt);
}

/**
 * A diff with the values at, below or containing sensitive fields masked (e.g. a patch's
 * inconsistencies, which carry the values that were asked for and the values found). Returns
 * `diff` itself when nothing is sensitive.
 */
export function maskDiff(diff: Diff, fields: SensitiveFields, salt: string): Diff {
  if (!fields.length) return diff;
  return diff.map((item): DiffItem => {
    const [op, path, old, now] = item;
    const masked: DiffItem = [op, path, maskAtPath(old, path, fields, salt), maskAtPath(now, path, fields, salt)];
    return masked[2] === old && masked[3] === now ? item : masked;
  });
}

/** Masks a value found at `path` of an object: wholly below a sensitive field, else the fields inside it. */
function maskAtPath(value: unknown, path: readonly string[], fields: SensitiveFields, salt: string): unknown {
  if (value === undefined) return value;
  let result: unknown = value;
  for (const field of fields) {
    const shared = Math.min(field.length, path.length);
    if (!field.slice(0, shared).every((key, index) => path[index] === key)) continue;
    if (path.length > field.length) return maskOne(result, salt);
    result = path.length === field.length ? maskLeaf(result, salt) : maskAt(result, field, path.length, salt);
  }
  return result;
}
