/**
 * The object currently being handled, known to any code that a handler calls (directly or
 * after `await`s), so that helpers such as `kopf.adopt()` can default their owner to it.
 *
 * @module
 */

import { AsyncLocalStorage } from "node:async_hooks";
import type { KubernetesObject } from "../model/body.ts";

const storage = new AsyncLocalStorage<KubernetesObject>();

/**
 * Runs `fn` with `body` as the object being handled; everything `fn` starts (promises, timers)
 * sees it through {@linkcode currentObject}. The framework wraps each resource handler in it.
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
export function runWithObject<T>(body: KubernetesObject, fn: () => T): T {
  return storage.run(body, fn);
}

/** The object being handled by the handler that (directly or indirectly) calls this; `undefined` outside handlers. */
export function currentObject(): KubernetesObject | undefined {
  return storage.getStore();
}
