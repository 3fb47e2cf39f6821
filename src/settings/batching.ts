/**
 * Settings of per-object processing (Kopf's `batching` group).
 *
 * @module
 */

/** How the events of objects are processed. */
export class BatchingSettings {
  /**
   * Seconds an object rests after each unexpected error in a row (an API failure after all
   * retries, a framework bug), so that one broken object never stops the others; the last value
   * repeats. Kopf's default: Fibonacci from 1 to 610.
   */
  errorDelays: number[] = [1, 1, 2, 3, 5, 8, 13, 21, 34, 55, 89, 144, 233, 377, 610];
}
