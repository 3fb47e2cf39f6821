/**
 * Turns on the event loop for work that may be CPU-bound. A handler written synchronously runs to
 * its first `await` without letting anything else run: a listing of 500 objects whose handlers
 * burn 20 ms each would hold the loop for 10 s — no Lease renewals, no watch events read, no probe
 * answered. Work that takes a turn first runs at once while the loop has been busy for less than a
 * budget; after that, one piece of work per pass of the event loop, in the order they asked, so
 * that timers and I/O run between them.
 *
 * @module
 */

import { setImmediate } from "node:timers";

/** How long (ms) work may run back to back before the loop gets a pass. */
const DEFAULT_BUDGET = 10;

/** Takes turns on the event loop; see the module's description. */
export class Turns {
  readonly #budget: number;
  readonly #waiting: (() => void)[] = [];
  /** When the current stretch of work began (the last pass given to the loop). */
  #since = -Infinity;
  #pumping = false;

  /** @param budget How long (ms) work may run back to back before the loop gets a pass. */
  constructor(budget: number = DEFAULT_BUDGET) {
    this.#budget = budget;
  }

  /**
   * Returns nothing when the work may go on now, or a promise that resolves at its turn (after the
   * loop has had a pass). Not awaiting `undefined` saves a microtask per item in the common case.
   */
  take(): Promise<void> | undefined {
    if (!this.#waiting.length && performance.now() - this.#since < this.#budget) return undefined;
    const { promise, resolve } = Promise.withResolvers<void>();
    this.#waiting.push(resolve);
    if (!this.#pumping) {
      this.#pumping = true;
      setImmediate(this.#pass);
    }
    return promise;
  }

  /** One pass: a new stretch begins with the next waiting piece of work. */
  readonly #pass = (): void => {
    this.#since = performance.now();
    this.#waiting.shift()?.();
    if (this.#waiting.length) setImmediate(this.#pass);
    else this.#pumping = false;
  };
}

/** The process's turns, shared by every queue so that all streams take turns with each other. */
export const sharedTurns: Turns = new Turns();
