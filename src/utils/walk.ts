/**
 * Walking over "one object or many": the argument shape of Kopf's helpers that accept a single
 * object, a list of them, or lists of lists.
 *
 * @module
 */

/** One object, or any (nested) array or iterable of them. */
export type OneOrMany<T> = T | Iterable<OneOrMany<T>>;

/** A path into an object: `"spec.template"`, or its keys `["spec", "template"]`. */
export type FieldPath = string | readonly string[];

/** Whether a value is a plain JSON-like object (not an array, not `null`). */
export function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function isIterable(value: unknown): value is Iterable<unknown> {
  return typeof value === "object" && value !== null && Symbol.iterator in value;
}

/**
 * Yields every object of a (nested) array or iterable, or the one object given; with `nested`,
 * after each object also the sub-objects at those paths that exist (and are objects).
 *
 * @example
 * ```ts
 * import { walk } from "./walk.ts";
 * const a = { spec: { template: {} } }, b = {};
 * console.assert([...walk([a, [b]])].length === 2);
 * console.assert([...walk(a, ["spec.template"])][1] === a.spec.template);
 * ```
 *
 * @throws TypeError for anything that is neither an object nor an iterable.
 */
export function* walk<T extends object>(objs: OneOrMany<T>, nested: readonly FieldPath[] = []): Generator<T> {
  if (objs === null || objs === undefined) return;
  if (isIterable(objs)) {
    for (const obj of objs) yield* walk(obj as OneOrMany<T>, nested);
    return;
  }
  if (!isPlainObject(objs)) throw new TypeError(`Not a Kubernetes object: ${String(objs)}.`);
  yield objs;
  for (const path of nested) {
    const keys = typeof path === "string" ? path.split(".") : path;
    let value: unknown = objs;
    for (const key of keys) value = isPlainObject(value) ? value[key] : undefined;
    if (isPlainObject(value)) yield value as T;
  }
}
