/**
 * Diffs between two essences (or any JSON values) in Kopf's format: a list of
 * `[op, path, oldValue, newValue]` items, plus the field helpers that field-scoped handlers need
 * (parsing a field, resolving it in a value, reducing a diff to it).
 *
 * Pure: no I/O, no copies of the compared values (diff items share subtrees with their inputs).
 *
 * @module
 */

/** What happened to a value at a path: it appeared, it changed, or it disappeared. */
export type DiffOperation = "add" | "change" | "remove";

/**
 * The operations by name, as Kopf's `kopf.DiffOperation` enum has them.
 *
 * @example
 * ```ts
 * const added = diff(null, { a: 1 }).filter(([op]) => op === DiffOperation.ADD);
 * ```
 */
export const DiffOperation: {
  readonly ADD: "add";
  readonly CHANGE: "change";
  readonly REMOVE: "remove";
} = Object.freeze({ ADD: "add", CHANGE: "change", REMOVE: "remove" });

/**
 * One change: the operation, the path of keys from the root (`[]` is the root itself), the old
 * value and the new value. An absent side is `null`: `["add", path, null, new]`,
 * `["remove", path, old, null]`.
 */
export type DiffItem = readonly [DiffOperation, readonly string[], unknown, unknown];

/** All changes from one value to another; empty when they are equal. */
export type Diff = readonly DiffItem[];

/** A plain JSON-like object (not an array, not `null`). */
function isMapping(value: unknown): value is Readonly<Record<string, unknown>> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/**
 * Deep equality of JSON-like values: objects by their own keys (in any order), arrays by their
 * items in order, everything else with `Object.is` (except that `0` equals `-0`). `undefined` and
 * `null` are different values here (absent vs. present-and-null).
 *
 * @example
 * ```ts
 * deepEqual({ a: [1, { b: 2 }] }, { a: [1, { b: 2 }] }); // true
 * deepEqual({ a: 1 }, { a: 1, b: undefined });            // false
 * ```
 */
export function deepEqual(a: unknown, b: unknown): boolean {
  if (a === b || Object.is(a, b)) return true;
  if (typeof a !== "object" || typeof b !== "object" || a === null || b === null) return false;
  // Loops, not `every` and key lists: compared for every field of every patch and diff-base.
  const aIsArray = Array.isArray(a);
  const bIsArray = Array.isArray(b);
  if (aIsArray || bIsArray) {
    if (!aIsArray || !bIsArray || a.length !== b.length) return false;
    for (let index = 0; index < a.length; index++) if (!deepEqual(a[index], b[index])) return false;
    return true;
  }
  const aRecord = a as Readonly<Record<string, unknown>>;
  const bRecord = b as Readonly<Record<string, unknown>>;
  let unmatched = 0;
  for (const key in aRecord) {
    if (!Object.hasOwn(aRecord, key)) continue;
    if (!Object.hasOwn(bRecord, key) || !deepEqual(aRecord[key], bRecord[key])) return false;
    unmatched++;
  }
  for (const key in bRecord) if (Object.hasOwn(bRecord, key)) unmatched--;
  return unmatched === 0;
}

function* diffIter(a: unknown, b: unknown, path: readonly string[]): Generator<DiffItem> {
  // `undefined` (JS's "absent") is the same as `null` (Kopf's `None`) on either side.
  const old = a === undefined ? null : a;
  const now = b === undefined ? null : b;
  if (deepEqual(old, now)) return;
  if (old === null) {
    yield ["add", path, null, now];
  } else if (now === null) {
    yield ["remove", path, old, null];
  } else if (isMapping(old) && isMapping(now)) {
    // Kopf's order: the added keys, then the removed keys, then the common keys.
    for (const key of Object.keys(now)) {
      if (!Object.hasOwn(old, key)) yield* diffIter(null, now[key], [...path, key]);
    }
    for (const key of Object.keys(old)) {
      if (!Object.hasOwn(now, key)) yield* diffIter(old[key], null, [...path, key]);
    }
    for (const key of Object.keys(old)) {
      if (Object.hasOwn(now, key)) yield* diffIter(old[key], now[key], [...path, key]);
    }
  } else {
    yield ["change", path, old, now];
  }
}

/**
 * The diff from `a` to `b`, as Kopf computes it: objects are recursed into key by key; arrays and
 * scalars are compared as whole values (a changed array item is a `"change"` of the whole array);
 * an added key is reported once with its whole new subtree, a removed key once with its whole old
 * subtree. `null` and `undefined` both mean "absent". Items come in Kopf's order: at each level,
 * the added keys (in `b`'s key order), then the removed keys, then the common keys (in `a`'s key
 * order).
 *
 * @example
 * ```ts
 * diff(null, { spec: { a: 1 } });           // [["add", [], null, { spec: { a: 1 } }]]
 * diff({ spec: { a: 1 } }, { spec: { a: 2 } }); // [["change", ["spec", "a"], 1, 2]]
 * diff({ x: [1] }, { x: [1] });              // []
 * ```
 */
export function diff(a: unknown, b: unknown): Diff {
  // Nothing before (an object handled for the first time): one item or none, without the walk.
  if (a === undefined || a === null) return b === undefined || b === null ? [] : [["add", [], null, b]];
  return [...diffIter(a, b, [])];
}

/**
 * A field as a path of keys: a dotted string (`"spec.size"` -> `["spec", "size"]`) or an array of
 * keys (copied; use it when a key contains a dot, e.g. a label name). `""` and `[]` are the root.
 *
 * @throws {TypeError} if the field is neither a string nor an array of strings.
 *
 * @example
 * ```ts
 * parseField("metadata.labels");                       // ["metadata", "labels"]
 * parseField(["metadata", "labels", "app.kubernetes.io/name"]);
 * ```
 */
export function parseField(field: string | readonly string[]): string[] {
  if (typeof field === "string") return field === "" ? [] : field.split(".");
  if (Array.isArray(field) && field.every((key) => typeof key === "string")) return [...field];
  throw new TypeError(`A field must be a dotted string or an array of strings; got ${describe(field)}.`);
}

/**
 * The value at a field inside `value`, or `undefined` if anything along the path is absent or is
 * not an object (arrays are not indexed into, as in Kopf). Only own keys are followed.
 *
 * @example
 * ```ts
 * resolveField({ spec: { size: 3 } }, "spec.size");   // 3
 * resolveField({ spec: { size: 3 } }, "spec.x.y");    // undefined
 * resolveField({ spec: "text" }, ["spec", "length"]); // undefined
 * ```
 */
export function resolveField(value: unknown, path: string | readonly string[]): unknown {
  let current: unknown = value;
  for (const key of parseField(path)) {
    if (!isMapping(current) || !Object.hasOwn(current, key)) return undefined;
    current = current[key];
  }
  return current;
}

/**
 * The part of a diff that concerns one field, re-rooted at that field (Kopf's field-scoped diff
 * for handlers with `field`):
 * - items inside the field keep their operation and values, their paths lose the field's prefix;
 * - items on the field's parents (e.g. the whole `spec` added, while the field is `spec.size`)
 *   are replaced by a fresh diff of the field's old and new values resolved from them;
 * - items elsewhere are dropped.
 *
 * An empty path returns the diff unchanged (as a copy).
 *
 * @example
 * ```ts
 * const d = diff({ metadata: { labels: { a: "1" } } }, { metadata: { labels: { a: "2", b: "3" } } });
 * reduceDiff(d, "metadata.labels"); // [["add", ["b"], null, "3"], ["change", ["a"], "1", "2"]]
 * reduceDiff([["add", [], null, { spec: { size: 1 } }]], "spec.size"); // [["add", [], null, 1]]
 * ```
 */
export function reduceDiff(diff: Diff, path: string | readonly string[]): Diff {
  const prefix = parseField(path);
  const reduced: DiffItem[] = [];
  for (const [op, field, old, now] of diff) {
    if (startsWith(field, prefix)) {
      reduced.push([op, field.slice(prefix.length), old, now]);
    } else if (startsWith(prefix, field)) {
      const tail = prefix.slice(field.length);
      reduced.push(...diffIter(resolveField(old, tail), resolveField(now, tail), []));
    }
  }
  return reduced;
}

/** Whether `path` begins with all the keys of `prefix` (equal paths included). */
function startsWith(path: readonly string[], prefix: readonly string[]): boolean {
  return prefix.length <= path.length && prefix.every((key, index) => path[index] === key);
}

function describe(value: unknown): string {
  if (value === null || value === undefined) return String(value);
  if (Array.isArray(value)) return "an array with non-string items";
  return typeof value === "string" ? JSON.stringify(value) : typeof value;
}
