/**
 * Per-object wake-up timers: at most one pending per key, a new one replacing the old, so that an
 * object is looked at again later (delayed handlers, a consistency wait, the end of a rest after an
 * error) without any write to the cluster.
 *
 * @module
 */

/**
 * Pending wake-ups by key, each carrying the item to wake up with.
 *
 * @example
 * ```ts
 * import { Wakeups } from "./wakeups.ts";
 * const wakeups = new Wakeups<string>((key, item) => console.log(`${key}: ${item}`));
 * wakeups.schedule("uid-1", "state-1", 0.5);
 * wakeups.schedule("uid-1", "state-2", 0.1); // replaces the first one
 * wakeups.clear();                           // none fires
 * ```
 */
export class Wakeups<T> {
  readonly #wake: (key: string, item: T) => void;
  readonly #timers = new Map<string, ReturnType<typeof setTimeout>>();

  /** @param wake Called when a wake-up is due, with its key and item. */
  constructor(wake: (key: string, item: T) => void) {
    this.#wake = wake;
  }

  /** How many wake-ups are pending. */
  get size(): number {
    return this.#timers.size;
  }

  /** Wakes the key up with the item after so many seconds, instead of any wake-up pending for it. */
  schedule(key: string, item: T, seconds: number): void {
    this.cancel(key);
    this.#timers.set(
      key,
      setTimeout(() => {
        this.#timers.delete(key);
        this.#wake(key, item);
      }, seconds * 1000),
    );
  }

  /** Cancels the key's pending wake-up, if any. */
  cancel(key: string): void {
    // Most objects have none, and this runs for every event of every object: no timer call then.
    const timer = this.#timers.get(key);
    if (timer === undefined) return;
    clearTimeout(timer);
    this.#timers.delete(key);
  }

  /** Cancels every pending wake-up. */
  clear(): void {
    for (const timer of this.#timers.values()) clearTimeout(timer);
    this.#timers.clear();
  }
}
