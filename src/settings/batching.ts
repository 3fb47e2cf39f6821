/**
 * Settings of per-object processing (Kopf's `batching` group, called `queueing` since Kopf 1.42).
 *
 * @module
 */

import { getLogger } from "@logtape/logtape";

const logger = getLogger(["kopf", "settings"]);

/**
 * How the events of objects are processed.
 *
 * @example
 * ```ts
 * import * as kopf from "@kopf/kopf";
 * kopf.on.startup(function configure({ settings }) {
 *   settings.batching.workerLimit = 10; // at most 10 objects of each stream handled at once
 *   settings.batching.exitTimeout = 5;
 * });
 * ```
 */
export class BatchingSettings {
  /**
   * How many objects of one watch stream are processed at once (the others wait, in the order
   * their events came); `null`: no limit. Read when the streams start.
   */
  workerLimit: number | null = null;
  /**
   * How many objects of one watch stream may have events or wake-ups waiting or in processing
   * before the stream stops reading more until one is done; `null`: no limit. A listing of many
   * objects is then read as fast as they are handled, rather than held in memory all at once.
   * More events of an object that already has work do not count: one slow object's changes never
   * stop the stream for the others. Raise it for handlers that mostly wait (on other services):
   * about this many objects of a stream are in their handlers at once at most. Read when the
   * streams start.
   */
  backlogLimit: number | null = 1000;
  /**
   * Seconds the objects' pending work gets to finish when the operator stops; what is left then
   * is logged ("Unprocessed objects left ...") and not waited for. Kopf's default: 2.
   */
  exitTimeout = 2;
  /**
   * Seconds an object rests after each unexpected error in a row (an API failure after all
   * retries, a framework bug), so that one broken object never stops the others; the last value
   * repeats. Kopf's default: Fibonacci from 1 to 610.
   */
  errorDelays: number[] = [1, 1, 2, 3, 5, 8, 13, 21, 34, 55, 89, 144, 233, 377, 610];

  /**
   * Has no effect, as in Kopf since 1.42: events are never held back to wait for more. Each
   * object's events are processed in order, and when several are already queued, work that only
   * the newest state needs is done once for them. Setting it logs a warning.
   *
   * @deprecated Kopf 1.42 removed the batch window; there is nothing to tune.
   */
  get batchWindow(): number {
    return 0;
  }

  set batchWindow(seconds: number) {
    logger.warn(
      "settings.batching.batchWindow = {seconds} has no effect: events are not delayed for batching " +
        "(as in Kopf 1.42 and later). Remove the setting.",
      { seconds },
    );
  }
}
