/**
 * Why a daemon or timer is asked to stop: the `reason` of its `stopped` signal.
 *
 * @module
 */

/**
 * One cause of a stop. The first says what happened (`resourceDeleted`, `filtersMismatch`,
 * `operatorExiting`, `operatorPausing`); the stopping adds the stages it went through
 * (`daemonSignalled` once `cancellationBackoff` has passed, `daemonCancelled` once
 * `cancellationTimeout` has begun, `daemonAbandoned` when the daemon is left running).
 */
export type StopCause =
  | "resourceDeleted"
  | "filtersMismatch"
  | "operatorExiting"
  | "operatorPausing"
  | "daemonSignalled"
  | "daemonCancelled"
  | "daemonAbandoned";

/**
 * The `reason` of an aborted `stopped` signal: the causes of the stop so far.
 *
 * @example
 * ```ts ignore
 * kopf.daemon("kopfexamples", async function monitor({ stopped, logger }) {
 *   while (!stopped.aborted) await kopf.sleep(10, stopped);
 *   const reason = stopped.reason as kopf.StopReason;
 *   if (reason.has("resourceDeleted")) logger.info("The object is gone.");
 * });
 * ```
 */
export class StopReason extends Error {
  readonly #causes: Set<StopCause>;

  /** A stop for this cause. */
  constructor(cause: StopCause) {
    super(`The daemon or timer is stopping: ${cause}.`);
    this.name = "StopReason";
    this.#causes = new Set([cause]);
  }

  /** Whether the stop has this cause. */
  has(cause: StopCause): boolean {
    return this.#causes.has(cause);
  }

  /** All causes so far, in the order they came. */
  get causes(): StopCause[] {
    return [...this.#causes];
  }

  /** Records one more cause or stage of the stop. */
  add(cause: StopCause): void {
    this.#causes.add(cause);
    this.message = `The daemon or timer is stopping: ${this.causes.join(", ")}.`;
  }
}
