/**
 * Errors that handlers raise to tell the framework what to do next.
 *
 * @module
 */

import { shareInstances } from "../utils/process_global.ts";

/** Options of a {@linkcode TemporaryError}. */
export interface TemporaryErrorOptions {
  /** Seconds until the handler is retried; 60 by default. */
  delay?: number;
}

/**
 * The handler failed but may succeed later: it is retried after `delay` seconds.
 *
 * @example
 * ```ts
 * import { TemporaryError } from "@kopf/kopf";
 * throw new TemporaryError("The database is not ready yet.", { delay: 10 });
 * ```
 */
export class TemporaryError extends Error {
  /** Seconds until the retry. */
  readonly delay: number;

  /**
   * Makes the error that retries the handler.
   *
   * @param message why it failed.
   * @param options when to retry.
   */
  constructor(message: string, options: TemporaryErrorOptions = {}) {
    super(message);
    this.name = "TemporaryError";
    this.delay = options.delay ?? 60;
  }
}

/** The handler failed and retrying will not help: it is not called again for this change. */
export class PermanentError extends Error {
  /**
   * Makes the error that gives the handler up.
   *
   * @param message why it failed.
   */
  constructor(message: string) {
    super(message);
    this.name = "PermanentError";
  }
}

/** A handler ran out of time (its `timeout` option): it is not called again for this change. */
export class HandlerTimeoutError extends PermanentError {
  /**
   * Makes the error a handler is given up with when its time is over.
   *
   * @param message what timed out.
   */
  constructor(message: string) {
    super(message);
    this.name = "HandlerTimeoutError";
  }
}

/** A handler failed as many times as its `retries` option allows: it is not called again for this change. */
export class HandlerRetriesError extends PermanentError {
  /**
   * Makes the error a handler is given up with when its retries are spent.
   *
   * @param message which handler and how many retries.
   */
  constructor(message: string) {
    super(message);
    this.name = "HandlerRetriesError";
  }
}

// Handlers may throw these from another copy of the library (a handler file that imports
// @kopf/kopf by another URL than the CLI): the framework must still recognise them.
shareInstances(TemporaryError, "TemporaryError");
shareInstances(PermanentError, "PermanentError");
shareInstances(HandlerTimeoutError, "HandlerTimeoutError");
shareInstances(HandlerRetriesError, "HandlerRetriesError");
