/**
 * The registration functions behind `kopf.on.*`: each takes a resource selector, optional
 * options, and the handler function, and adds a handler to a registry.
 *
 * @module
 */

import { Selector, type SelectorInput } from "../model/selector.ts";
import type { ChangeFn, ChangeHandlerOptions, EventFn, ResourceHandlerOptions } from "./handlers.ts";
import { defaultRegistry, type Registry } from "./registry.ts";

/** Where a handler is registered. */
export interface RegistryOption {
  /** The registry to add the handler to; the default registry otherwise. */
  registry?: Registry;
}

/** Options of `on.create`. */
export type CreateOptions = ChangeHandlerOptions & RegistryOption;

/** Options of `on.event`. */
export type EventOptions = ResourceHandlerOptions & RegistryOption;

/** Splits the two call forms `(resource, fn)` and `(resource, options, fn)`. */
function forms<O extends object, F>(kind: string, optionsOrFn: O | F, maybeFn: F | undefined): [O, F] {
  if (typeof optionsOrFn === "function") {
    if (maybeFn !== undefined) {
      throw new TypeError(`on.${kind}(): give either (resource, fn) or (resource, options, fn).`);
    }
    return [{} as O, optionsOrFn as F];
  }
  if (typeof maybeFn !== "function") {
    throw new TypeError(`on.${kind}(): the last argument must be the handler function, got ${typeof maybeFn}.`);
  }
  return [(optionsOrFn ?? {}) as O, maybeFn];
}

/** The handler id: the `id` option, else the function's name; anonymous functions need an `id`. */
function handlerId(kind: string, selector: Selector, options: { id?: string }, fn: { name: string }): string {
  const id = options.id ?? fn.name;
  if (!id) {
    const place = new Error().stack?.split("\n").slice(4, 5).join("").trim() ?? "";
    throw new TypeError(
      `on.${kind}(${selector}): an anonymous handler needs an id: pass { id: "…" } or use a named function` +
        (place ? ` (${place}).` : "."),
    );
  }
  return id;
}

/**
 * Registers a handler for the creation of objects: it runs once per object, and its result is
 * stored at `status[id]`.
 *
 * @example
 * ```ts
 * import * as kopf from "@kopf/kopf";
 * kopf.on.create("kopfexamples", function createFn({ spec, logger }) {
 *   logger.info(`Created with ${JSON.stringify(spec)}`);
 *   return { message: "hello world" };
 * });
 * ```
 */
export function create(resource: SelectorInput, fn: ChangeFn): ChangeFn;
export function create(resource: SelectorInput, options: CreateOptions, fn: ChangeFn): ChangeFn;
export function create(resource: SelectorInput, optionsOrFn: CreateOptions | ChangeFn, maybeFn?: ChangeFn): ChangeFn {
  const [options, fn] = forms<CreateOptions, ChangeFn>("create", optionsOrFn, maybeFn);
  const selector = new Selector(resource);
  const { registry = defaultRegistry, ...rest } = options;
  registry.add({
    kind: "change",
    reason: "create",
    id: handlerId("create", selector, rest, fn),
    selector,
    fn,
    options: rest,
  });
  return fn;
}

/**
 * Registers a handler for every watch event of matching objects (including the objects found by
 * the initial listing, with `type` null). Its errors are logged and ignored; nothing is stored.
 *
 * @example
 * ```ts
 * import * as kopf from "@kopf/kopf";
 * kopf.on.event("pods", function seen({ type, name, logger }) {
 *   logger.info(`${type} ${name}`);
 * });
 * ```
 */
export function event(resource: SelectorInput, fn: EventFn): EventFn;
export function event(resource: SelectorInput, options: EventOptions, fn: EventFn): EventFn;
export function event(resource: SelectorInput, optionsOrFn: EventOptions | EventFn, maybeFn?: EventFn): EventFn {
  const [options, fn] = forms<EventOptions, EventFn>("event", optionsOrFn, maybeFn);
  const selector = new Selector(resource);
  const { registry = defaultRegistry, ...rest } = options;
  registry.add({ kind: "event", id: handlerId("event", selector, rest, fn), selector, fn, options: rest });
  return fn;
}
