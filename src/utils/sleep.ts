/**
 * Interruptible sleeping, the one way the framework waits for time to pass.
 *
 * @module
 */

/**
 * Sleeps for some seconds, or less if the signal aborts first.
 *
 * @example
 * ```ts
 * import { sleep } from "@kopf/kopf";
 * const interrupted = await sleep(10, AbortSignal.timeout(100));
 * console.log(interrupted); // true
 * ```
 *
 * @param seconds How long to sleep; zero or negative returns at once.
 * @param signal Ends the sleep early when aborted.
 * @returns `true` if the signal interrupted the sleep (or was already aborted), `false` otherwise.
 */
export function sleep(seconds: number, signal?: AbortSignal): Promise<boolean> {
  if (signal?.aborted) return Promise.resolve(true);
  if (!(seconds > 0)) return Promise.resolve(false);
  return new Promise((resolve) => {
    const onAbort = () => {
      clearTimeout(timer);
      resolve(true);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve(false);
    }, seconds * 1000);
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}
