/**
 * A timer's life for one object: calls every `interval` seconds (from the end of a call, or on a
 * fixed grid with `sharp`), only after the object has been unchanged for `idle` seconds if asked,
 * never two calls at once; failures reschedule the next call by their delay.
 *
 * @module
 */

import type { TimerHandler } from "../handling/handlers.ts";
import { linkSignals } from "../utils/signals.ts";
import { sleep } from "../utils/sleep.ts";
import { attemptBackground, type AttemptDeps } from "./background_attempt.ts";

/** What a timer needs to know about the changes of its object. */
export interface ChangeTracker {
  /** When (ms since the epoch) the object's essence last changed; its first sighting counts. */
  readonly lastChange: number;
  /** Aborted at the next change of the object's essence. */
  readonly nextChange: AbortSignal;
}

/**
 * Runs a timer until `stopped` aborts, or until it is done: a timer with neither `interval` nor
 * `idle` is called once; a timer that failed for good is not called again.
 *
 * @returns `true` if it ended on its own (it is not started again for this object in this
 *   process); `false` if it ended because it was asked to stop.
 */
export async function runTimer(
  handler: TimerHandler,
  stopped: AbortSignal,
  changes: ChangeTracker,
  deps: AttemptDeps,
): Promise<boolean> {
  const { interval, idle, initialDelay, sharp } = handler.options;
  if (initialDelay !== undefined && await sleep(initialDelay, stopped)) return false;
  const grid = Date.now();
  let retry = 0;
  let started = new Date();
  while (!stopped.aborted) {
    if (idle !== undefined && !await idleFor(idle, stopped, changes)) return false;
    if (retry === 0) started = new Date();
    const outcome = await attemptBackground(handler, stopped, retry, started, deps);
    if (outcome.kind === "failed") return !stopped.aborted;
    if (outcome.kind === "retry") {
      retry++;
      if (await sleep(outcome.delay, stopped)) return false;
      continue;
    }
    retry = 0;
    if (interval === undefined) {
      if (idle === undefined) return !stopped.aborted;
      // One call per idle period: the next one waits for a change and a new idle period.
      using either = linkSignals(stopped, changes.nextChange);
      await aborted(either.signal);
      continue;
    }
    if (await sleep(untilNextCall(interval, sharp ?? false, grid, Date.now()), stopped)) return false;
  }
  return false;
}

/**
 * Seconds from the end of a call to the next one: the interval, or -- when `sharp` -- what is left
 * of the current interval on the grid that started at `grid` (ms), so that slow calls do not
 * shift the schedule.
 */
export function untilNextCall(interval: number, sharp: boolean, grid: number, now: number): number {
  if (!sharp || interval <= 0) return interval;
  return interval - ((now - grid) / 1000) % interval;
}

/** Waits until the object has been unchanged for `idle` seconds; `false` if stopped meanwhile. */
async function idleFor(idle: number, stopped: AbortSignal, changes: ChangeTracker): Promise<boolean> {
  while (!stopped.aborted) {
    const left = changes.lastChange + idle * 1000 - Date.now();
    if (left <= 0) return true;
    using either = linkSignals(stopped, changes.nextChange);
    await sleep(left / 1000, either.signal);
  }
  return false;
}

/** Resolves when the signal aborts. */
function aborted(signal: AbortSignal): Promise<void> {
  if (signal.aborted) return Promise.resolve();
  return new Promise((resolve) => signal.addEventListener("abort", () => resolve(), { once: true }));
}
