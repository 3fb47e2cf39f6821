/**
 * The checks of a handler's filter options when it is registered (Kopf's registration-time
 * errors), so that mistakes fail at import rather than silently never matching.
 *
 * @module
 */

import { parseField } from "../model/diff.ts";
import { ABSENT, type FilterOptions, matchModeOf, PRESENT } from "./filters.ts";

function isPlainObject(value: unknown): value is Readonly<Record<string, unknown>> {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return false;
  const proto = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}

/**
 * Checks a handler's filter options when it is registered (Kopf's registration-time errors),
 * so that mistakes fail at import rather than silently never matching:
 * - `field` must be a non-empty dotted string or array of non-empty strings (whether a kind requires
 *   it is the registration's concern: `on.field` does, its sub-handlers do not);
 * - `value`, `old`, `new` require `field`; `value` excludes `old`/`new`; none of them may be `null`;
 * - `old`/`new` are allowed only for `on.update` and `on.field` (and their sub-handlers);
 * - `labels`/`annotations` must be objects whose values are strings, {@linkcode PRESENT},
 *   {@linkcode ABSENT} or functions -- not `null`/`undefined`;
 * - `when` must be a function.
 *
 * @param kind The handler kind (`"create"`, `"update"`, `"field"`, `"event"`, `"daemon"`, ...);
 *   for sub-handlers, the kind of their top-level parent.
 * @param where How messages name the registration; `kopf.on.<kind>()` by default.
 * @throws {TypeError} `<where>: <the problem>`.
 *
 * @example
 * ```ts
 * validateFilters("update", { field: "spec.size", old: kopf.ABSENT }); // fine
 * validateFilters("create", { value: 1 }); // TypeError: value without field
 * ```
 */
export function validateFilters<C>(kind: string, options: FilterOptions<C>, where = `kopf.on.${kind}()`): void {
  const mode = matchModeOf(kind);
  if (typeof options !== "object" || options === null) {
    throw new TypeError(`${where}: the options must be an object.`);
  }
  const { labels, annotations, field, value, old, new: now, when } = options;

  if (field !== undefined) {
    let path: string[];
    try {
      path = parseField(field);
    } catch (error) {
      throw new TypeError(`${where}: ${(error as Error).message}`);
    }
    if (path.length === 0 || path.some((key) => key === "")) {
      throw new TypeError(`${where}: the field ${JSON.stringify(field)} is empty or has empty keys.`);
    }
  }

  for (const [name, filter] of [["value", value], ["old", old], ["new", now]] as const) {
    if (filter === null) {
      throw new TypeError(
        `${where}: null is not supported as a ${name} filter; use kopf.ABSENT, kopf.PRESENT or a callback.`,
      );
    }
  }
  if (field === undefined && (value !== undefined || old !== undefined || now !== undefined)) {
    throw new TypeError(`${where}: value/old/new filters are specified without a mandatory field.`);
  }
  if (value !== undefined && (old !== undefined || now !== undefined)) {
    throw new TypeError(`${where}: either value or old/new can be defined, not both.`);
  }
  if ((old !== undefined || now !== undefined) && mode !== "update") {
    throw new TypeError(
      `${where}: old/new filters can only be used in on.update and on.field handlers (and their sub-handlers).`,
    );
  }

  for (const [name, filters] of [["label", labels], ["annotation", annotations]] as const) {
    if (filters === undefined) continue;
    if (!isPlainObject(filters)) {
      throw new TypeError(`${where}: ${name}s must be an object of ${name} names to filter values.`);
    }
    for (const [key, filter] of Object.entries(filters)) {
      if (filter === null || filter === undefined) {
        throw new TypeError(
          `${where}: ${String(filter)} for the ${name} filter ${JSON.stringify(key)} is not supported; ` +
            `use kopf.PRESENT or kopf.ABSENT.`,
        );
      }
      if (typeof filter !== "string" && filter !== PRESENT && filter !== ABSENT && typeof filter !== "function") {
        throw new TypeError(
          `${where}: the ${name} filter ${JSON.stringify(key)} must be a string, kopf.PRESENT, kopf.ABSENT ` +
            `or a function; got ${typeof filter} (${name} values are always strings).`,
        );
      }
    }
  }

  if (when !== undefined && when !== null && typeof when !== "function") {
    throw new TypeError(`${where}: when must be a function (context) => boolean; got ${typeof when}.`);
  }
}
