/**
 * Rest after unexpected errors: an object whose cycle fails unexpectedly (not a handler's own
 * failure, which its retries cover) rests for the next of `settings.batching.errorDelays` before it
 * is processed again, so that one broken object never busies the operator; the first success ends
 * the rest. The log lines of those errors live here too.
 *
 * @module
 */

import { ObjectLogger } from "../logging/object_logger.ts";
import type { KubernetesObject } from "../model/body.ts";
import type { ObjectMemory } from "./processing.ts";

/** The settings an {@linkcode ErrorThrottle} reads, at each error: `settings.batching`. */
export interface ErrorDelays {
  /** Seconds to rest after the 1st, 2nd, ... unexpected error in a row; the last one repeats; none: no rest. */
  readonly errorDelays: readonly number[];
}

/**
 * The rests of one stream's objects, kept in their memories (`memory.rest`: ask the throttle only
 * where it is set): an object forgotten and seen again starts afresh.
 *
 * @example
 * ```ts
 * import { ErrorThrottle } from "./error_throttle.ts";
 * import { newMemory } from "./processing.ts";
 * const throttle = new ErrorThrottle({ errorDelays: [1, 2, 5] });
 * const memory = newMemory({}, false);
 * const object = { apiVersion: "v1", kind: "ConfigMap", metadata: { namespace: "ns", name: "one" } };
 * throttle.failed(memory, object, new Error("boom")); // 1: rests for 1 second
 * throttle.resting(memory);                            // seconds left, or undefined once over
 * throttle.succeeded(memory, object);                  // the rest is over
 * ```
 */
export class ErrorThrottle {
  readonly #settings: ErrorDelays;
  readonly #now: () => number;

  /**
   * @param settings Where to read the delays, at each error.
   * @param now The clock, in ms since the epoch.
   */
  constructor(settings: ErrorDelays, now: () => number = Date.now) {
    this.#settings = settings;
    this.#now = now;
  }

  /** The seconds the object still rests; `undefined` if it does not rest now. */
  resting(memory: ObjectMemory): number | undefined {
    const until = memory.rest?.until;
    const now = this.#now();
    return until !== undefined && now < until ? (until - now) / 1000 : undefined;
  }

  /**
   * Logs an unexpected error of the object's cycle and starts its next rest; returns the rest's
   * seconds, or `undefined` when there are no `errorDelays` (the error is only logged).
   */
  failed(memory: ObjectMemory, object: KubernetesObject, error: unknown): number | undefined {
    const delays = this.#settings.errorDelays;
    if (delays.length === 0) {
      reportUnexpectedError(object, error);
      return undefined;
    }
    const errors = memory.rest?.errors ?? 0;
    const delay = delays[Math.min(errors, delays.length - 1)];
    memory.rest = { errors: errors + 1, until: this.#now() + delay * 1000 };
    new ObjectLogger(object).exception(`Throttling for ${delay} seconds due to an unexpected error.`, error);
    return delay;
  }

  /** Ends the object's errors in a row after a cycle that did not fail, with a log line if it had any. */
  succeeded(memory: ObjectMemory, object: KubernetesObject): void {
    if (memory.rest === undefined) return;
    memory.rest = undefined;
    new ObjectLogger(object).info("Throttling is over. Switching back to normal operations.");
  }
}

/** Logs an unexpected error of an object's cycle that no rest follows. */
export function reportUnexpectedError(object: KubernetesObject, error: unknown): void {
  new ObjectLogger(object).exception("An unexpected error while processing the object.", error);
}
