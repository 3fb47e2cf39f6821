/**
 * The hard deadline of a handler's attempt (its `timeout`): the handler's `signal` aborts at the
 * deadline (or when the operator stops), and the attempt ends there with a
 * {@linkcode HandlerTimeoutError} whether or not the handler has noticed.
 *
 * JavaScript cannot stop a running function: a handler that ignores its signal is left behind
 * with a warning, and whatever it does afterwards no longer counts for the object.
 *
 * @module
 */

import type { HandlerLogger } from "../logging/handler_logger.ts";
import { type LinkedSignal, linkSignals } from "../utils/signals.ts";
import { HandlerTimeoutError } from "./errors.ts";

/** Turns of the event loop a handler gets to settle after its signal aborted at the deadline. */
const SETTLING_TURNS = 10;

/** The limits of one attempt. */
export interface AttemptLimits {
  /** How the handler is named in messages, e.g. `Handler 'x'`. */
  label: string;
  /** The deadline in ms since the epoch; `undefined`: none. */
  deadline?: number;
  /** Seconds of the timeout, for messages. */
  timeout?: number;
  /** Aborts the handler's signal too (the operator stops, a daemon is stopped). */
  signal?: AbortSignal;
  logger: HandlerLogger;
}

/**
 * Runs one attempt with a signal that aborts at the deadline or with `limits.signal`; `work` gets
 * it through a function, so that an attempt without a deadline links it only if the handler asks
 * for it (most never do: the link is a controller and two listener changes per attempt).
 * Past the deadline, it throws a {@linkcode HandlerTimeoutError} and stops waiting for the handler.
 */
export async function runWithDeadline<T>(
  work: (signal: () => AbortSignal) => Promise<T> | T,
  limits: AttemptLimits,
): Promise<T> {
  if (limits.deadline === undefined) {
    // No deadline, no controller of its own to abort: the handler's signal follows the caller's alone.
    let linked: LinkedSignal | undefined;
    let ended = false;
    // Read after the attempt (by a promise the handler left behind): detached, as a link made earlier is by then.
    const signal = () =>
      ended ? linked?.signal ?? new AbortController().signal : (linked ??= linkSignals(limits.signal)).signal;
    try {
      return await work(signal);
    } finally {
      ended = true;
      linked?.[Symbol.dispose]();
    }
  }
  const timeout = new AbortController();
  using linked = linkSignals(limits.signal, timeout.signal);
  const running = (async () => await work(() => linked.signal))();

  let settled = false;
  const outcome = running.finally(() => settled = true);
  let timer: ReturnType<typeof setTimeout> | undefined;
  const expired = new Promise<"expired">((resolve) => {
    timer = setTimeout(() => resolve("expired"), Math.max(0, limits.deadline! - Date.now()));
  });
  try {
    const first = await Promise.race([outcome, expired]);
    if (first !== "expired" || settled) return await outcome;
  } finally {
    clearTimeout(timer);
  }

  const seconds = limits.timeout ?? 0;
  const error = new HandlerTimeoutError(`${limits.label} has timed out after ${seconds} s.`);
  timeout.abort(error);
  // A handler that passes its signal on ends within a few turns of the event loop.
  for (let turn = 0; turn < SETTLING_TURNS && !settled; turn++) await new Promise((ok) => setTimeout(ok, 0));
  if (!settled) {
    limits.logger.warning(
      `${limits.label} ignored its signal and is still running at its ${seconds} s deadline. ` +
        "It is left behind: what it does from now on does not count for the object. " +
        "Pass `signal` to what it awaits (fetch, kopf.sleep) to let it stop.",
    );
    outcome.catch((late) => limits.logger.debug(`${limits.label}, left behind at its deadline, failed: ${late}`));
  } else {
    outcome.catch(() => {});
  }
  throw error;
}
