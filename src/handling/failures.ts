/**
 * What a handler's error means -- retry after a delay, fail for good, or ignore -- by its type and
 * the handler's `errors`, `backoff`, `timeout` and `retries`, with the log line that says so. Used
 * alike for change handlers, daemons and timers.
 *
 * @module
 */

import type { HandlerLogger } from "../logging/object_logger.ts";
import { PermanentError, TemporaryError } from "./errors.ts";
import type { RetryOptions } from "./handlers.ts";

/** The judgement of an error: retried after `delay` seconds, failed for good, or ignored (a success). */
export type Verdict =
  | { kind: "retry"; delay: number; message: string }
  // `timedOut`: given up because the retry would come after the handler's timeout (metrics count it apart).
  | { kind: "failed"; message: string; timedOut?: boolean }
  | { kind: "ignored" };

/** What the judgement needs besides the error. */
export interface Judging {
  /** How the handler is named in log lines, e.g. `Handler 'x'` or `Timer 'y'`. */
  label: string;
  options: RetryOptions;
  logger: HandlerLogger;
  /** Seconds before retrying after an arbitrary error when the handler has no `backoff`. */
  defaultBackoff: number;
  /** Failed attempts before this one. */
  retries: number;
  /** Milliseconds since the first of these attempts started. */
  elapsed: number;
}

/** Judges a handler's error and logs the verdict. */
export function judgeFailure(error: unknown, judging: Judging): Verdict {
  const { label, options, logger } = judging;
  const message = error instanceof Error ? error.message : String(error);
  const mode = error instanceof TemporaryError
    ? "temporary"
    : error instanceof PermanentError
    ? "permanent"
    : options.errors ?? "temporary";
  if (mode === "ignored") {
    logger.exception(`${label} failed with an exception. Will ignore.`, error);
    return { kind: "ignored" };
  }
  if (mode === "permanent") {
    if (error instanceof PermanentError) logger.error(`${label} failed permanently: ${message}`);
    else logger.exception(`${label} failed with an exception. Will stop.`, error);
    return { kind: "failed", message };
  }
  const delay = error instanceof TemporaryError ? error.delay : options.backoff ?? judging.defaultBackoff;
  // Give up now rather than sleep until an attempt that the timeout or retries would forbid.
  const outOfTime = options.timeout !== undefined && judging.elapsed + delay * 1000 >= options.timeout * 1000;
  const outOfRetries = options.retries !== undefined && judging.retries + 1 >= options.retries;
  const next = outOfTime || outOfRetries ? "Will stop." : `Will retry in ${delay} s.`;
  if (error instanceof TemporaryError) logger.error(`${label} failed temporarily: ${message}`);
  else logger.exception(`${label} failed with an exception. ${next}`, error);
  if (outOfTime || outOfRetries) {
    logger.error(
      outOfTime
        ? `${label} has timed out after ${options.timeout} s.`
        : `${label} has exceeded ${options.retries} retries.`,
    );
    return { kind: "failed", message, timedOut: outOfTime };
  }
  return { kind: "retry", delay, message };
}
