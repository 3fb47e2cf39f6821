/**
 * Waiting for a condition in a test, the one way for both tiers: unit tests beside the code (no
 * cluster needed: this module imports nothing) and integration tests against the shared cluster.
 * The bound is generous: it limits how long a broken test hangs, it does not assert a timing.
 *
 * @module
 */

/** How long {@linkcode eventually} tries, and how often. */
export interface EventuallyOptions {
  /** Give up after so many seconds (60 by default). */
  seconds?: number;
  /** Seconds between two checks (0.1 by default). */
  interval?: number;
  /** Gives up at once (with the signal's reason) when it aborts, e.g. when a scenario has lost a race. */
  signal?: AbortSignal;
}

/**
 * Calls `check` until it returns something other than `undefined` or `false`, and returns that.
 * A `check` that throws has not succeeded yet; if time runs out, the error says what was awaited,
 * after how long, and the last error thrown.
 */
export async function eventually<T>(
  what: string,
  check: () => Promise<T | undefined | false> | T | undefined | false,
  options: EventuallyOptions = {},
): Promise<Exclude<T, undefined | false>> {
  const { seconds = 60, interval = 0.1, signal } = options;
  const deadline = Date.now() + seconds * 1000;
  let last: unknown;
  for (;;) {
    signal?.throwIfAborted();
    try {
      const result = await check();
      if (result !== undefined && result !== false) return result as Exclude<T, undefined | false>;
    } catch (error) {
      last = error;
    }
    if (Date.now() > deadline) {
      const because = last === undefined ? "" : ` (last error: ${last instanceof Error ? last.message : last})`;
      throw new Error(`Timed out after ${seconds} s waiting for ${what}${because}.`);
    }
    await new Promise((resolve) => setTimeout(resolve, interval * 1000));
  }
}
