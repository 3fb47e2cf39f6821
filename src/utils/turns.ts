/**
 * Turns on the event loop for work that may be CPU-bound or may flood a shared resource.
 *
 * A handler written synchronously runs to its first `await` without letting anything else run: a
 * listing of 500 objects whose handlers burn 20 ms each would hold the loop for 10 s -- no Lease
 * renewals, no watch events read, no probe answered. Work that takes a turn runs at once while the
 * loop has been busy for less than a budget; after that, one piece of work per pass of the event
 * loop, in the order they asked, so that timers and I/O run between them.
 *
 * And work that would only queue for a congested resource (requests waiting for a free slot of the
 * API client) waits for its turn until the congestion eases, holding nothing: 10,000 objects listed
 * at once would otherwise all start their cycles, each holding its state while its requests queue.
 * Within one pass, the work let in runs until it waits for I/O, so the next pass sees the queue it
 * made.
 *
 * @module
 */

import { setImmediate } from "node:timers";

/** How long (ms) work may run back to back before the loop gets a pass. */
const DEFAULT_BUDGET = 10;

/** A shared resource that new work should not queue for while it is congested. */
export interface Congestion {
  /** Nothing when new work may go on now; otherwise a promise that resolves once it may. */
  eased(): Promise<void> | undefined;
}

interface Waiter {
  readonly resolve: () => void;
  readonly congestion?: Congestion;
}

/** Takes turns on the event loop; see the module's description. */
export class Turns {
  readonly #budget: number;
  readonly #waiting: Waiter[] = [];
  /** When the current stretch of work began. */
  #since = -Infinity;
  /** Whether a stretch is under way: from the first work after a pass of the loop until the next pass. */
  #stretching = false;
  #pumping = false;

  /** @param budget How long (ms) work may run back to back before the loop gets a pass. */
  constructor(budget: number = DEFAULT_BUDGET) {
    this.#budget = budget;
  }

  /**
   * Returns nothing when the work may go on now, or a promise that resolves at its turn (after the
   * loop has had a pass, and once the congestion, if any, has eased). Not awaiting `undefined` saves
   * a microtask per item in the common case.
   */
  take(congestion?: Congestion): Promise<void> | undefined {
    if (!this.#waiting.length) {
      const now = performance.now();
      // The first work after the loop had its pass (e.g. after idling) begins a new stretch: it was
      // not busy meanwhile. Timing from the last pass instead made such work wait for a pass of its
      // own -- at a steady trickle of objects, every object's: 14% of the operator's CPU at 250 objects/s.
      if (!this.#stretching) this.#stretch(now);
      if (now - this.#since < this.#budget && !congestion?.eased()) return undefined;
    }
    const { promise, resolve } = Promise.withResolvers<void>();
    this.#waiting.push({ resolve, congestion });
    if (!this.#pumping) {
      this.#pumping = true;
      setImmediate(this.#pass);
    }
    return promise;
  }

  /** Begins a stretch of work at `now`; it lasts until the loop's next pass. */
  #stretch(now: number): void {
    this.#since = now;
    this.#stretching = true;
    setImmediate(this.#passed);
  }

  readonly #passed = (): void => {
    this.#stretching = false;
  };

  /** One pass: a new stretch begins with the next waiting piece of work, unless it must wait longer. */
  readonly #pass = (): void => {
    const eased = this.#waiting[0]?.congestion?.eased();
    if (eased) {
      void eased.then(() => setImmediate(this.#pass));
      return;
    }
    this.#since = performance.now();
    this.#waiting.shift()?.resolve();
    if (this.#waiting.length) setImmediate(this.#pass);
    else this.#pumping = false;
  };
}

/** The process's turns, shared by every queue so that all streams take turns with each other. */
export const sharedTurns: Turns = new Turns();
