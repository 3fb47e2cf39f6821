/**
 * Waiting for whichever of several promises settles first, in a loop, with one reaction per
 * promise. `Promise.race` in a loop adds a reaction to each promise still pending every time
 * round, kept until that promise settles, and each reaction keeps its race's promise with what it
 * settled with: a watch that stays quiet beside a listing of 100,000 objects, raced once per listed
 * object, kept all the objects listed until its next event (a restart's peak RSS 325 MiB against
 * 171: docs/performance/scale.md, "One reaction per step, not a race per object"). Here each
 * promise is followed once; its outcome waits in an {@linkcode Arrival} until taken, and the loop
 * waits at a {@linkcode Doorbell} that any arrival rings.
 *
 * @module
 */

/**
 * Where a loop waits for the next of its arrivals: each rings it as it settles.
 *
 * @example
 * ```ts
 * import { Arrival, Doorbell } from "./arrivals.ts";
 * const doorbell = new Doorbell();
 * const slow = new Arrival(new Promise<string>(() => {}), doorbell);
 * const fast = new Arrival(Promise.resolve("fast"), doorbell);
 * while (!slow.arrived && !fast.arrived) await doorbell.wait();
 * fast.take(); // "fast"
 * ```
 */
export class Doorbell {
  #waiter: (() => void) | undefined;

  /** Wakes the loop waiting in {@linkcode Doorbell.wait}, if any. */
  ring(): void {
    const waiter = this.#waiter;
    this.#waiter = undefined;
    waiter?.();
  }

  /** Resolves at the next ring: look at the arrivals before waiting, since a ring before is not kept. */
  wait(): Promise<void> {
    return new Promise((resolve) => this.#waiter = resolve);
  }
}

/** A promise's outcome, held from its settling until taken; it rings the doorbell when it settles. */
export class Arrival<T> {
  #outcome: { readonly value: T } | { readonly error: unknown } | undefined;

  /** Follows the promise (its rejection is handled here, and rethrown by {@linkcode Arrival.take}). */
  constructor(promise: Promise<T>, doorbell: Doorbell) {
    promise.then(
      (value) => {
        this.#outcome = { value };
        doorbell.ring();
      },
      (error: unknown) => {
        this.#outcome = { error };
        doorbell.ring();
      },
    );
  }

  /** Whether the promise has settled. */
  get arrived(): boolean {
    return this.#outcome !== undefined;
  }

  /** The promise's value, or its rejection thrown; only once {@linkcode Arrival.arrived}. */
  take(): T {
    const outcome = this.#outcome;
    if (outcome === undefined) throw new Error("Arrival.take() was called before its promise settled.");
    if ("error" in outcome) throw outcome.error;
    return outcome.value;
  }
}
