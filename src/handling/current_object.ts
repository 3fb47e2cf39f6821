/**
 * The object currently being handled, known to any code that a handler calls (directly or
 * after `await`s), so that helpers such as `kopf.adopt()` can default their owner to it; and, for
 * change handlers, their sub-handling scope, kept in the same context so that a handler call
 * enters one context, not two (each costs a copy of the context's map).
 *
 * @module
 */

import { AsyncLocalStorage } from "node:async_hooks";
import { processGlobal } from "../utils/process_global.ts";
import type { KubernetesObject } from "../model/body.ts";

/** What code running for an object finds. */
interface HandlingFrame {
  readonly object: KubernetesObject;
  /** The sub-handling scope of a change handler's attempt (see subhandlers.ts); absent for other handlers. */
  readonly scope?: object;
}

// One per process: a handler using another copy of the library must still find the handling context.
const storage = processGlobal("current-object", 2, () => new AsyncLocalStorage<HandlingFrame>());

/**
 * Runs `fn` (with `args`, if given) with `body` as the object being handled; everything `fn` starts
 * (promises, timers) sees it through {@linkcode currentObject}, and `scope` (a change handler's
 * sub-handling scope) through {@linkcode currentHandlingScope}. The framework wraps each resource
 * handler in it. A handler and its context given as `fn` and `args` need no closure around the call.
 *
 * @example
 * ```ts
 * import { currentObject, runWithObject } from "./current_object.ts";
 * const body = { metadata: { name: "kex", uid: "u1" } };
 * await runWithObject(body, async () => {
 *   await Promise.resolve();
 *   console.assert(currentObject() === body);
 * });
 * console.assert(currentObject() === undefined);
 * ```
 */
export function runWithObject<T, A extends unknown[] = []>(
  body: KubernetesObject,
  fn: (...args: A) => T,
  scope?: object,
  ...args: A
): T {
  return storage.run(scope === undefined ? { object: body } : { object: body, scope }, fn, ...args);
}

/** The object being handled by the handler that (directly or indirectly) calls this; `undefined` outside handlers. */
export function currentObject(): KubernetesObject | undefined {
  return storage.getStore()?.object;
}

/** The sub-handling scope given to {@linkcode runWithObject} for the running handler; `undefined` if none. */
export function currentHandlingScope(): object | undefined {
  return storage.getStore()?.scope;
}
