/**
 * The operator context of Event posting: which operator's poster `kopf.event()` & co. and the
 * log sink use, found through the asynchronous call chain (several operators may run in one process).
 *
 * @module
 */

import { AsyncLocalStorage } from "node:async_hooks";
import { processGlobal } from "../utils/process_global.ts";
import type { EventPoster } from "./posting.ts";

// One per process: a handler using another copy of the library must still find the handling context.
const storage = processGlobal("posting-context", 1, () => new AsyncLocalStorage<EventPoster>());

/**
 * Runs `fn` with `poster` as the operator's poster: everything `fn` starts (handlers, promises,
 * timers) finds it through {@linkcode currentPoster}. The operator wraps its whole run in it.
 *
 * @example
 * ```ts ignore
 * const poster = new EventPoster(client, settings.posting);
 * try {
 *   await runWithPoster(poster, () => runTheOperator());
 * } finally {
 *   await poster.close();
 * }
 * ```
 */
export function runWithPoster<T>(poster: EventPoster, fn: () => T): T {
  return storage.run(poster, fn);
}

/** The poster of the operator that (directly or indirectly) runs the caller; `undefined` outside operators. */
export function currentPoster(): EventPoster | undefined {
  return storage.getStore();
}
