/**
 * The registration of index handlers: `kopf.index()`, the same function as `kopf.on.index()`.
 *
 * @module
 */

import type { HandledObject, NamespaceOf } from "../model/builtin_types.ts";
import type { SelectorInput } from "../model/selector.ts";
import type { AnyHandlerFn, IndexFn, IndexHandlerOptions } from "./handlers.ts";
import { parseRegistration } from "./registration_arguments.ts";
import type { Registry } from "./registry.ts";

/** Options of `kopf.index()`: the filters, `id`, `param`, the retry options, and `registry`. */
export interface IndexOptions extends IndexHandlerOptions {
  /** The registry to add the handler to; the default registry otherwise. */
  registry?: Registry;
}

/**
 * Registers an indexer: it is called for every event of every matching object, and what it
 * returns goes into the in-memory index named after its id (the function's name or `id`; a
 * `field` does not change it), which every handler sees as `indices[id]`:
 * - a plain object: each entry under its key (one object may contribute to many keys);
 * - a `Map`: each entry under its key, which may be a tuple (an array) or a plain object, compared
 *   by value;
 * - `null` or `undefined`: no change (the object keeps the values it had);
 * - anything else (an array, a string, a number...): that value under the key `null`.
 *
 * The object's values are re-computed on every event, and removed when it is deleted or stops
 * matching the filters. Errors are logged and the old values kept (`errors: "ignored"`, the
 * default); a `PermanentError` (or `errors: "permanent"`) removes the object's values and
 * excludes it from the index until the operator restarts; a `TemporaryError` (or
 * `errors: "temporary"`) does so for its `delay` (or `backoff`, 60 s by default) -- the object's
 * first event after that indexes it again -- and `retries`/`timeout` make that final. Other
 * handlers do not run until every indexed resource has been listed and indexed once.
 *
 * @example
 * ```ts
 * import * as kopf from "@kopf/kopf";
 * kopf.index("pods", function byNamespace({ namespace, name }) {
 *   return { [namespace]: name };
 * });
 * kopf.index("pods", { labels: { app: kopf.PRESENT } }, function byApp({ labels, namespace, name }) {
 *   return new Map([[[namespace, labels.app], name]]); // tuple keys
 * });
 * kopf.timer("kopfexamples", { interval: 10 }, ({ indices, namespace }) => {
 *   return { pods: [...indices.byNamespace.get(namespace, [])] };
 * });
 * ```
 */
export function index<T = never, R extends SelectorInput = SelectorInput>(
  resource: R,
  fn: IndexFn<HandledObject<T, R>, NamespaceOf<R>>,
): IndexFn<HandledObject<T, R>, NamespaceOf<R>>;
/** Registers an indexer with options: filters, `id`, `param`, `errors`, `timeout`, `retries`, `backoff`, `registry`. */
export function index<T = never, R extends SelectorInput = SelectorInput>(
  resource: R,
  options: IndexOptions,
  fn: IndexFn<HandledObject<T, R>, NamespaceOf<R>>,
): IndexFn<HandledObject<T, R>, NamespaceOf<R>>;
export function index(
  resource: SelectorInput,
  optionsOrFn: IndexOptions | AnyHandlerFn,
  maybeFn?: AnyHandlerFn,
): AnyHandlerFn {
  const { selector, registry, options, fn, id, field } = parseRegistration<IndexHandlerOptions, IndexFn>(
    "index",
    [resource, optionsOrFn, maybeFn],
  );
  registry.add({ kind: "index", id, selector, fn, options, field });
  return fn;
}
