/**
 * Handler filters (Kopf's `labels=`, `annotations=`, `field=`, `value=`, `old=`, `new=`, `when=`):
 * their types, the presence markers, and the matching of an object against a handler's filters.
 * The callback combinators are in `filter_combinators.ts`, the checks made when a handler is
 * registered in `filter_validation.ts`.
 *
 * Pure: no I/O. The registry decides which handlers to consider; this module only says whether
 * one handler's filters accept one object.
 *
 * @module
 */

import type { KubernetesObject } from "../model/body.ts";
import { deepEqual, type Diff, parseField, resolveField } from "../model/diff.ts";
import type { ObjectContext } from "./context.ts";
import { truthy } from "./filter_combinators.ts";

/**
 * A filter value that matches when the label, annotation or field exists, whatever its value
 * (an empty string counts as existing).
 *
 * @example
 * ```ts
 * kopf.on.create("kopfexamples", { labels: { app: kopf.PRESENT } }, fn);
 * ```
 */
export const PRESENT: unique symbol = Symbol.for("@kopf/kopf.PRESENT");

/**
 * A filter value that matches when the label, annotation or field does not exist.
 *
 * @example
 * ```ts
 * kopf.on.create("kopfexamples", { annotations: { skip: kopf.ABSENT } }, fn);
 * ```
 */
export const ABSENT: unique symbol = Symbol.for("@kopf/kopf.ABSENT");

/** {@linkcode PRESENT} or {@linkcode ABSENT}. */
export type PresenceMarker = typeof PRESENT | typeof ABSENT;

/**
 * What filter callbacks receive: the handler's context without `param`, `retry`, `started` and
 * `runtime` (as in Kopf). Change handlers add `reason`, `old`, `new`, `diff` -- always of the whole
 * object here, even for handlers with a `field`; `on.event` handlers add `event` and `type`.
 */
export interface FilterContext extends Omit<ObjectContext, "param"> {
  /** Why a change handler runs (`"create"`, `"update"`, `"delete"`, `"resume"`). */
  readonly reason?: string;
  /** The essence before the change (change handlers); `null` on creation. */
  readonly old?: unknown;
  /** The essence after the change (change handlers). */
  readonly new?: unknown;
  /** The diff of the whole essence (change handlers). */
  readonly diff?: Diff;
  /** The raw watch event (`on.event` handlers). */
  readonly event?: { readonly type: string | null; readonly object: Readonly<KubernetesObject> };
  /** The watch event type (`on.event` handlers); `null` for listed objects. */
  readonly type?: string | null;
}

/**
 * A callback in a label, annotation, `value`, `old` or `new` slot: gets the value (`undefined`
 * when absent) and the context; a truthy result is a match. It must be synchronous.
 */
export type ValueCallback<C = FilterContext> = (value: unknown, context: C) => boolean;

/** The `when` callback: gets the context; a truthy result is a match. It must be synchronous. */
export type WhenCallback<C = FilterContext> = (context: C) => boolean;

/** A label or annotation filter value: the exact string, a presence marker, or a callback. */
export type MetaFilterValue<C = FilterContext> = string | PresenceMarker | ValueCallback<C>;

/** Label or annotation filters: every key must match its value. */
export type MetaFilter<C = FilterContext> = Readonly<Record<string, MetaFilterValue<C>>>;

/**
 * A `value`, `old` or `new` filter: a presence marker, a callback, or a literal compared by deep
 * equality (`null` is not accepted: use {@linkcode ABSENT} or a callback).
 */
export type ValueFilter<C = FilterContext> =
  | PresenceMarker
  | ValueCallback<C>
  | string
  | number
  | boolean
  | readonly unknown[]
  | { readonly [key: string]: unknown };

/**
 * The filter options of a handler. All given criteria must match (AND); the `when` callback is
 * evaluated last, only if everything else matched.
 */
export interface FilterOptions<C = FilterContext> {
  /** Labels the object must have (exact values, markers or callbacks). */
  readonly labels?: MetaFilter<C>;
  /** Annotations the object must have (exact values, markers or callbacks). */
  readonly annotations?: MetaFilter<C>;
  /**
   * A field (`"spec.size"` or `["spec", "size"]`): it must be present unless `value` says
   * otherwise; for `on.update` and `on.field`, it must also have changed.
   */
  readonly field?: string | readonly string[];
  /** What the field's value must be (either side of a change, for change handlers). */
  readonly value?: ValueFilter<C>;
  /** What the field's value must have been before the change (`on.update`, `on.field` only). */
  readonly old?: ValueFilter<C>;
  /** What the field's value must be after the change (`on.update`, `on.field` only). */
  readonly new?: ValueFilter<C>;
  /** A final check over the whole context. */
  readonly when?: WhenCallback<C> | null;
}

/**
 * Which values the field filters look at, and what they require:
 * - `"current"` -- the current body only (`on.event`, daemons, timers, indexes, admission webhooks);
 * - `"change"` -- the old and the new essences: `field`/`value` match if either side matches
 *   (`on.create`, `on.resume`, `on.delete`);
 * - `"update"` -- as `"change"`, and with a `field` the field's value must differ between the two
 *   sides (`on.update`, `on.field`). Sub-handlers use the mode of their parent.
 *
 * `old`/`new` filters are checked in the `"change"` and `"update"` modes, never in `"current"`.
 */
export type MatchMode = "current" | "change" | "update";

/**
 * What the matching needs to know about one object.
 *
 * @typeParam C The context type given to the callbacks.
 */
export interface MatchInput<C = FilterContext> {
  /** The current object: labels and annotations are read from it, and fields in `"current"` mode. */
  readonly body: Readonly<KubernetesObject>;
  /** The essence before the change (`null`/absent on creation); `"change"`/`"update"` modes only. */
  readonly old?: unknown;
  /** The essence after the change; `"change"`/`"update"` modes only. */
  readonly new?: unknown;
  /**
   * The context for callbacks, or a function building it: it is then called at most once, and
   * only if some callback needs it.
   */
  readonly context: C | (() => C);
}

/** The handler kinds that take filters, and the mode each is matched in. */
const MODES: Readonly<Record<string, MatchMode>> = Object.freeze({
  create: "change",
  resume: "change",
  delete: "change",
  update: "update",
  field: "update",
  event: "current",
  daemon: "current",
  timer: "current",
  index: "current",
  validate: "current",
  mutate: "current",
});

/**
 * The match mode of a handler kind (`"create"`, `"update"`, `"field"`, `"event"`, `"timer"`, ...).
 *
 * @throws {TypeError} for kinds that take no filters (activities) or unknown kinds.
 *
 * @example
 * ```ts
 * matchModeOf("update"); // "update"
 * matchModeOf("daemon"); // "current"
 * ```
 */
export function matchModeOf(kind: string): MatchMode {
  if (!Object.hasOwn(MODES, kind)) {
    throw new TypeError(`Handlers of kind ${JSON.stringify(kind)} take no filters; known: ${Object.keys(MODES)}.`);
  }
  return MODES[kind];
}

/**
 * A handler id suffix for a field, `/<dotted.field>` (Kopf's rule for handlers with `field`;
 * not for indexes), or `""` without a field.
 *
 * @example
 * ```ts
 * "resize" + fieldSuffix("spec.size");        // "resize/spec.size"
 * "fn" + fieldSuffix(["metadata", "labels"]); // "fn/metadata.labels"
 * ```
 */
export function fieldSuffix(field: string | readonly string[] | undefined): string {
  if (field === undefined) return "";
  const path = parseField(field);
  return path.length ? `/${path.join(".")}` : "";
}

/** Lazily builds the callbacks' context once. */
class LazyContext<C> {
  #source: C | (() => C);
  #built = false;
  #value: C | undefined;

  constructor(source: C | (() => C)) {
    this.#source = source;
  }

  get(): C {
    if (!this.#built) {
      this.#value = typeof this.#source === "function" ? (this.#source as () => C)() : this.#source;
      this.#built = true;
    }
    return this.#value as C;
  }
}

/** Whether a label/annotation mapping satisfies the filters. */
function matchesMeta<C>(
  filters: MetaFilter<C> | undefined,
  content: Readonly<Record<string, string>> | undefined,
  context: LazyContext<C>,
): boolean {
  if (!filters) return true;
  const values = content ?? {};
  for (const [key, filter] of Object.entries(filters)) {
    const present = Object.hasOwn(values, key);
    if (filter === PRESENT) {
      if (!present) return false;
    } else if (filter === ABSENT) {
      if (present) return false;
    } else if (typeof filter === "function") {
      if (!truthy(filter(present ? values[key] : undefined, context.get()))) return false;
    } else if (!present || values[key] !== filter) {
      return false;
    }
  }
  return true;
}

/** Whether one field value (`undefined` when absent) satisfies a `value`/`old`/`new` filter. */
function matchesValue<C>(filter: ValueFilter<C>, value: unknown, context: LazyContext<C>): boolean {
  if (filter === PRESENT) return value !== undefined;
  if (filter === ABSENT) return value === undefined;
  if (typeof filter === "function") return truthy(filter(value, context.get()));
  return value !== undefined && deepEqual(filter, value);
}

/** `field` + `value`: any of the sides (the new then the old essence, or the current body) matches. */
function matchesFieldValues<C>(
  options: FilterOptions<C>,
  mode: MatchMode,
  path: readonly string[],
  input: MatchInput<C>,
  context: LazyContext<C>,
): boolean {
  const sides = mode === "current"
    ? [resolveField(input.body, path)]
    : [resolveField(input.new, path), resolveField(input.old, path)];
  const filter = options.value;
  if (filter === undefined || filter === null) return sides.some((side) => side !== undefined);
  return sides.some((side) => matchesValue(filter, side, context));
}

/** The change requirement (`"update"` mode) and the `old`/`new` filters (`"change"`/`"update"` modes). */
function matchesFieldChanges<C>(
  options: FilterOptions<C>,
  mode: MatchMode,
  path: readonly string[],
  input: MatchInput<C>,
  context: LazyContext<C>,
): boolean {
  if (mode === "current") return true;
  const old = resolveField(input.old, path);
  const now = resolveField(input.new, path);
  if (mode === "update" && deepEqual(old, now)) return false;
  if (options.old !== undefined && options.old !== null && !matchesValue(options.old, old, context)) return false;
  if (options.new !== undefined && options.new !== null && !matchesValue(options.new, now, context)) return false;
  return true;
}

/**
 * Whether a handler's options hold no filter at all, so that every object matches: most handlers, whose callers
 * skip the matching then (its mode and input are not even made).
 */
export function unfiltered<C>(options: FilterOptions<C>): boolean {
  return !options.labels && !options.annotations && options.field === undefined && !options.when;
}

function matches<C>(options: FilterOptions<C>, mode: MatchMode, input: MatchInput<C>, changes: boolean): boolean {
  // Most handlers have no filters, and each is matched several times per cycle: no context for them.
  if (unfiltered(options)) return true;
  const context = new LazyContext(input.context);
  const meta = input.body?.metadata;
  if (!matchesMeta(options.labels, meta?.labels, context)) return false;
  if (!matchesMeta(options.annotations, meta?.annotations, context)) return false;
  if (options.field !== undefined) {
    const path = parseField(options.field);
    if (path.length) {
      if (!matchesFieldValues(options, mode, path, input, context)) return false;
      if (changes && !matchesFieldChanges(options, mode, path, input, context)) return false;
    }
  }
  if (options.when) return truthy(options.when(context.get()));
  return true;
}

/**
 * Whether an object passes a handler's filters, in this order (cheap checks first, callbacks only
 * when reached, `when` last):
 * 1. every label and annotation filter: an exact string, {@linkcode PRESENT}, {@linkcode ABSENT},
 *    or a callback given the value (`undefined` if absent) -- always against the current body;
 * 2. `field` with `value` (or, without `value`, "the field is present"): in `"current"` mode
 *    against the body; in `"change"`/`"update"` modes satisfied if the new **or** the old essence
 *    matches (so on creation, where the old side is absent, `value: ABSENT` always matches);
 * 3. in `"update"` mode, the field's value must differ between the old and new essences
 *    (appearing or disappearing counts; `null` differs from absent);
 * 4. in `"change"`/`"update"` modes, `old` and `new` each checked against their own side;
 * 5. `when`, given the context.
 *
 * Literal values compare by deep equality. Callbacks must be synchronous; a promise result
 * throws a `TypeError`. Errors thrown by callbacks propagate.
 *
 * @example
 * ```ts
 * matchesFilters({ field: "spec.x", value: "on" }, "update", {
 *   body, old: { spec: { x: "on" } }, new: { spec: { x: "off" } }, context,
 * }); // true: the old side matches, and spec.x changed
 * ```
 */
export function matchesFilters<C>(options: FilterOptions<C>, mode: MatchMode, input: MatchInput<C>): boolean {
  return matches(options, mode, input, true);
}

/**
 * Kopf's "pre-match": {@linkcode matchesFilters} without steps 3 and 4 (no change requirement, no
 * `old`/`new` checks). It says whether an object is of interest to a handler at all, regardless of
 * what changed in this event: used to decide whether any change handler cares about an object
 * (if none does, it is left alone -- no state stored), and whether handlers that require a
 * finalizer (mandatory `on.delete`, daemons, timers) match it, so that the finalizer is added or
 * removed.
 *
 * @example
 * ```ts
 * prematchesFilters({ labels: { f: "y" } }, "change", { body, context }); // finalizer needed?
 * ```
 */
export function prematchesFilters<C>(options: FilterOptions<C>, mode: MatchMode, input: MatchInput<C>): boolean {
  return matches(options, mode, input, false);
}
