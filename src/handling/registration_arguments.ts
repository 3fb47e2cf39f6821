/**
 * The one way a registration's arguments become the parts of a handler: the call form, the
 * resource selector, the options (checked by `registration_options.ts`), the handler id and the
 * field path. Every `kopf.on.*` function goes through {@linkcode parseRegistration}, so every
 * mistake is a `TypeError` that starts by naming the call, e.g.
 * `kopf.on.create("kopfexamples", createFn): retries must be a non-negative integer, got -1.`
 *
 * @module
 */

import { parseField } from "../model/diff.ts";
import { Selector, type SelectorInput } from "../model/selector.ts";
import type { Activity } from "./activities.ts";
import { fieldSuffix } from "./filters.ts";
import { defaultRegistry, type Registry } from "./registry.ts";
import { checkOptions, isActivity, type RegistrationKind, shown } from "./registration_options.ts";

/** The kinds of registration that take a resource: every `kopf.on.*` function but the activities. */
export type ResourceKind = Exclude<RegistrationKind, Activity | "subhandler">;

/** A registration's parts, checked. */
export interface Registration<O, F, S extends Selector | null = Selector> {
  /** The resources it serves; `null` for activities. */
  readonly selector: S;
  /** Where it goes: the `registry` option, or the default registry. */
  readonly registry: Registry;
  /** The options without `registry`. */
  readonly options: O;
  /** The handler function. */
  readonly fn: F;
  /** The handler id: `id`, else the function's name; with `/<field>` for a field (not for indexes). */
  readonly id: string;
  /** The `field` option as a path, if any. */
  readonly field: readonly string[] | undefined;
}

/**
 * Parses the arguments of a `kopf.on.*` call -- `(resource, fn)` or `(resource, options, fn)`, and
 * `(fn)` or `(options, fn)` for activities -- and checks everything that can be checked before
 * the operator runs.
 *
 * @param kind which registration function was called.
 * @param args its arguments as given.
 * @throws {TypeError} `kopf.on.<kind>(<resource>, <function>): <what is wrong and what to do>.`
 *
 * @example
 * ```ts
 * const { selector, registry, options, fn, id } = parseRegistration("create", [resource, optionsOrFn, maybeFn]);
 * ```
 */
export function parseRegistration<O, F>(
  kind: Activity,
  args: readonly [unknown, unknown?],
): Registration<O, F, null>;
/** A resource handler's registration. */
export function parseRegistration<O, F>(
  kind: ResourceKind,
  args: readonly [unknown, unknown, unknown?],
): Registration<O, F>;
export function parseRegistration(
  kind: Activity | ResourceKind,
  args: readonly unknown[],
): Registration<unknown, unknown, Selector | null> {
  const activity = isActivity(kind);
  const [resource, optionsOrFn, maybeFn] = activity ? [undefined, ...args] : args;
  let selector: Selector | null = null;
  let refusal: Error | undefined;
  if (!activity) {
    try {
      selector = new Selector(resource as SelectorInput);
    } catch (error) {
      refusal = error as Error;
    }
  }
  const target = selector?.toString() ?? (typeof resource === "string" ? JSON.stringify(resource) : undefined);
  const [given, fn] = splitForms(kind, target, optionsOrFn, maybeFn);
  const label = callLabel(kind, target, fn, given);
  if (refusal) throw new TypeError(`${label}: ${refusal.message}`, { cause: refusal });
  checkOptions(kind, label, given);
  const { registry = defaultRegistry, ...options } = given as { registry?: Registry; id?: string; field?: string };
  const name = options.id ?? functionName(fn);
  if (!name) {
    const place = callerPlace();
    throw new TypeError(
      `${label}: an anonymous handler needs an id: pass { id: "\u2026" } or use a named function` +
        (place ? ` (${place}).` : "."),
    );
  }
  const field = options.field === undefined ? undefined : parseField(options.field);
  // An index's id is its name in `indices`: a field must not rename it.
  const id = kind === "index" ? name : name + fieldSuffix(options.field);
  return { selector, registry, options, fn, id, field };
}

/** Splits the call forms: `[options, fn]`. */
function splitForms(
  kind: RegistrationKind,
  target: string | undefined,
  optionsOrFn: unknown,
  maybeFn: unknown,
): [unknown, (...args: never[]) => unknown] {
  const where = `kopf.on.${kind}(${target ?? ""})`;
  if (typeof optionsOrFn === "function") {
    if (maybeFn !== undefined) {
      const resource = isActivity(kind) ? "" : "resource, ";
      throw new TypeError(`${where}: give either (${resource}fn) or (${resource}options, fn).`);
    }
    return [{}, optionsOrFn as (...args: never[]) => unknown];
  }
  if (typeof maybeFn !== "function") {
    throw new TypeError(`${where}: the last argument must be the handler function, got ${shown(maybeFn)}.`);
  }
  return [optionsOrFn ?? {}, maybeFn as (...args: never[]) => unknown];
}

/**
 * How messages name a call: as it was written, as far as it can be told -- the selector, and the
 * function's name (or its `id`, for an anonymous function).
 */
function callLabel(kind: RegistrationKind, target: string | undefined, fn: { name: string }, options: unknown): string {
  const id = typeof options === "object" && options !== null ? (options as { id?: unknown }).id : undefined;
  const name = functionName(fn);
  const handler = name ? name : typeof id === "string" && id ? `{ id: ${JSON.stringify(id)} }, \u2026` : "() => \u2026";
  const resource = isActivity(kind) ? "" : `${target ?? "\u2026"}, `;
  return `kopf.on.${kind}(${resource}${handler})`;
}

// This folder's own frames are skipped to find the user's line (tests here are users too).
const HERE = new URL(".", import.meta.url).href;

/** Where the registration was called from: the first stack frame outside this folder's modules. */
function callerPlace(): string {
  const frames = new Error().stack?.split("\n").slice(1) ?? [];
  const frame = frames.find((line) => !line.includes(HERE) || line.includes("_test.ts"));
  return frame?.trim().replace(/^at /, "") ?? "";
}

/**
 * The name a function is known by: bound methods (`obj.method.bind(obj)`) are named after the
 * method, not `bound method`.
 */
export function functionName(fn: { name: string }): string {
  return fn.name.replace(/^(bound )+/, "");
}
