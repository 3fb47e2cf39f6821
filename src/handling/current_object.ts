/**
 * The object currently being handled, known to any code that a handler calls (directly or
 * after `await`s), so that helpers such as `kopf.adopt()` can default their owner to it.
 *
 * @module
 */

import { AsyncLocalStorage } from "node:async_hooks";
import { processGlobal } from "../utils/process_global.ts";
import type { KubernetesObject } from "../model/body.ts";

// One per process: a handler using another copy of the library must still find the handling context.
const storage = processGlobal("current-object", 1, () => new AsyncLocalStorage<KubernetesObject>());

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
