/**
 * A counted limit on work done at once: whoever takes a slot while all are taken waits, in the
 * order of arrival, until one is given back. It knows nothing of what it limits.
 *
 * @module
 */

import type { Congestion } from "./turns.ts";

/**
 * At most `limit` holders at once (`null`: no limit); the others wait first come, first served, those who
 * asked to go ahead before the rest.
 *
 * @example
 * ```ts
 * import { Slots } from "./slots.ts";
 * const slots = new Slots(1);
 * const first = await slots.take();
 * const second = slots.take(); // waits for the first to be given back
 * first();
 * (await second)();
 * ```
 */
export class Slots implements Congestion {
  #limit: number | null;
  readonly #what: string;
  #taken = 0;
  /** The waiters that asked to go first, then the others; each line in order of arrival. */
  readonly #ahead = new Line();
  readonly #behind = new Line();
  /** How many waiters are in place (not cancelled, not admitted). */
  #queued = 0;
  /** Who waits for the queue to be at most so long, by that length. */
  readonly #shorter = new Map<number, PromiseWithResolvers<void>>();

  /**
   * @param limit How many holders at once; `null` for no limit.
   * @param what Where the limit comes from, for the error about a wrong one (e.g. a setting's name).
   */
  constructor(limit: number | null, what = "The limit of slots") {
    this.#what = what;
    this.#limit = this.#checked(limit);
  }

  /** How many holders at once; changing it lets waiters in at once when it grows. */
  get limit(): number | null {
    return this.#limit;
  }

  set limit(limit: number | null) {
    if (limit === this.#limit) return;
    this.#limit = this.#checked(limit);
    this.#admit();
  }

  /** How many slots are taken now. */
  get taken(): number {
    return this.#taken;
  }

  /** How many wait for a slot now. */
  get waiting(): number {
    return this.#queued;
  }

  /**
   * The slots as a congestion (see `Turns`): nothing while at most `limit` wait for a slot (always,
   * without a limit); otherwise a promise that resolves once no more do. New work that would only
   * add to a long queue waits before it starts instead.
   */
  eased(): Promise<void> | undefined {
    if (this.#limit === null || this.#queued <= this.#limit) return undefined;
    return this.whenWaitingAtMost(this.#limit);
  }

  /**
   * Waits until at most `count` wait for a slot: a way to hold back new work while the limit's
   * queue is long, instead of queueing it there too.
   *
   * @returns Nothing if that is so now, or a promise that resolves once it is.
   */
  whenWaitingAtMost(count: number): Promise<void> | undefined {
    if (this.#queued <= count) return undefined;
    let shorter = this.#shorter.get(count);
    if (!shorter) {
      shorter = Promise.withResolvers<void>();
      this.#shorter.set(count, shorter);
    }
    return shorter.promise;
  }

  /**
   * Takes a slot, waiting for one if all are taken.
   *
   * @param signal Stops the waiting: the promise rejects with its reason and holds no slot.
   * @param ahead Waits ahead of those who did not ask so (behind those who did and came earlier).
   * @returns The function that gives the slot back (calling it again does nothing).
   */
  take(signal?: AbortSignal, ahead = false): Promise<() => void> {
    if (signal?.aborted) return Promise.reject(signal.reason);
    if (this.#free()) {
      this.#taken++;
      return Promise.resolve(this.#release());
    }
    const line = ahead ? this.#ahead : this.#behind;
    return new Promise((resolve, reject) => {
      const abort = () => {
        line.cancel(place);
        // With none left in place, only empty places are: dropped here, since releases skip the lines then.
        if (--this.#queued === 0) {
          this.#ahead.clear();
          this.#behind.clear();
        }
        this.#notifyShorter();
        reject(signal!.reason);
      };
      this.#queued++;
      const place = line.add(() => {
        signal?.removeEventListener("abort", abort);
        resolve(this.#release());
      });
      signal?.addEventListener("abort", abort, { once: true });
    });
  }

  /**
   * Takes a slot if one is free now, without waiting.
   *
   * @returns The function that gives the slot back; `undefined` if all are taken.
   */
  tryTake(): (() => void) | undefined {
    // `#free()` written out: every request asks, and each call it makes costs (see `#release`).
    if (this.#limit !== null && this.#taken >= this.#limit) return undefined;
    this.#taken++;
    return this.#release();
  }

  #free(): boolean {
    return this.#limit === null || this.#taken < this.#limit;
  }

  #release(): () => void {
    let held = true;
    return () => {
      if (!held) return;
      held = false;
      this.#taken--;
      // Nobody waits, for a slot or for a shorter queue: every request's release when the cap is not
      // reached. Asked here rather than in `#admit()`: a call per request costs at a LocalCluster's
      // pace, where each function an object's path runs is fetched into cold caches
      // (docs/performance/cpu.md, "Fewer functions, a second pass").
      if (this.#queued !== 0 || this.#shorter.size !== 0) this.#admit();
    };
  }

  #admit(): void {
    while (this.#free()) {
      const waiter = this.#ahead.next() ?? this.#behind.next();
      if (!waiter) break;
      this.#taken++;
      this.#queued--;
      waiter();
    }
    this.#notifyShorter();
  }

  #notifyShorter(): void {
    for (const [count, shorter] of this.#shorter) {
      if (this.#queued > count) continue;
      this.#shorter.delete(count);
      shorter.resolve();
    }
  }

  #checked(limit: number | null): number | null {
    if (limit !== null && !(Number.isInteger(limit) && limit >= 1)) {
      throw new RangeError(`${this.#what} must be a whole number of at least 1, or null for no limit; it is ${limit}.`);
    }
    return limit;
  }
}

/** Waiters in order of arrival; a cancelled one leaves its place empty. */
class Line {
  readonly #waiters: ((() => void) | undefined)[] = [];
  #head = 0;

  /** Adds a waiter at the end; returns its place, for {@linkcode Line.cancel}. */
  add(waiter: () => void): number {
    return this.#waiters.push(waiter) - 1;
  }

  cancel(place: number): void {
    this.#waiters[place] = undefined;
  }

  /** Forgets every place: only when none is still in place. */
  clear(): void {
    this.#waiters.length = 0;
    this.#head = 0;
  }

  /** Takes the first waiter still in place, if any. */
  next(): (() => void) | undefined {
    while (this.#head < this.#waiters.length) {
      const waiter = this.#waiters[this.#head];
      this.#waiters[this.#head++] = undefined;
      if (waiter) return waiter;
    }
    // Compacted only once drained, so that places stay fixed while cancellations refer to them.
    this.#waiters.length = 0;
    this.#head = 0;
    return undefined;
  }
}
