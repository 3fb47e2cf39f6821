/**
 * A daemon's life for one object: an optional initial delay, then calls until one ends for good --
 * retried after temporary failures as handlers are -- or until it is asked to stop.
 *
 * @module
 */

import type { DaemonHandler } from "../handling/handlers.ts";
import { sleep } from "../utils/sleep.ts";
import { attemptBackground, type AttemptDeps } from "./background_attempt.ts";

/**
 * Runs a daemon until it exits or `stopped` aborts.
 *
 * @returns `true` if it exited on its own (returned, or failed for good) -- it is not started again
 *   for this object in this process; `false` if it ended because it was asked to stop.
 */
export async function runDaemon(handler: DaemonHandler, stopped: AbortSignal, deps: AttemptDeps): Promise<boolean> {
  const { initialDelay } = handler.options;
  if (initialDelay !== undefined && await sleep(initialDelay, stopped)) return false;
  const started = new Date();
  for (let retry = 0; !stopped.aborted; retry++) {
    const outcome = await attemptBackground(handler, stopped, retry, started, deps);
    // Whatever a daemon does after being asked to stop is its way of stopping, not an exit of its own.
    if (stopped.aborted) return false;
    if (outcome.kind !== "retry") return true;
    if (await sleep(outcome.delay, stopped)) return false;
  }
  return false;
}
