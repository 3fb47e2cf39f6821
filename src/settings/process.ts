/**
 * Settings of the operator as a process: how long stopping may take, the liveness endpoint, and
 * giving memory back after bursts.
 *
 * @module
 */

/**
 * How the operator stops and reports its health.
 *
 * @example
 * ```ts
 * import * as kopf from "@kopf/kopf";
 * kopf.on.startup(function configure({ settings }) {
 *   settings.process.ultimateExitingTimeout = 25; // below the pod's terminationGracePeriodSeconds
 *   settings.process.probingMaxAge = 5;
 * });
 * ```
 */
export class ProcessSettings {
  /**
   * Seconds after the first SIGINT/SIGTERM after which the process exits even if stopping has not
   * finished (with the code a shell reports for that signal: 130 or 143); `null`: never. Not
   * applied when the operator is stopped by its `signal` option. Kopf's default: 600.
   */
  ultimateExitingTimeout: number | null = 600;
  /**
   * Seconds all cleanup handlers may take together, retries included: a handler whose next retry
   * would start later gives up at once, and one still running then is no longer waited for;
   * `null`: only the handlers' own `timeout` and `retries` bound them (Kopf's behaviour).
   */
  cleanupTimeout: number | null = 30;
  /**
   * Seconds for which the results of the probe handlers are reused by the liveness endpoint:
   * they run at most once per this period, concurrent requests sharing one run. Kopf's fixed 10.
   */
  probingMaxAge = 10;
  /**
   * Seconds during which no object queue of any stream has work, after some work, before the
   * process runs one full garbage collection; `null`: never. V8 gives back the memory a burst made
   * it grow to (10,000 objects listed at start: 190 MiB resident for a live heap of 15 MiB) only
   * after a full collection, which an idle process may not run for hours. One collection per quiet
   * period, none while idle, none during work, and only after work that grew the memory
   * ({@linkcode idleCollectionGrowth}). 5 s: the events of a burst come milliseconds apart and rests
   * after errors start at 1 s, so the burst is over by then. Read when the operator connects.
   */
  idleCollection: number | null = 5;
  /**
   * MiB the process's resident memory must have grown by since the last idle collection for the
   * next one to run (the first, after the start, always does); 0: after any work. A collection costs
   * 40-120 ms of CPU and gives back under a MiB after an object or a few: for an operator whose
   * objects come one at a time, seconds apart, one after each was most of its CPU. Read when the
   * operator connects.
   */
  idleCollectionGrowth = 4;
}
