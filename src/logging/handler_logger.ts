/**
 * The logger handlers get: Kopf's (Python's) method names over a LogTape logger, with messages
 * taken as literal text.
 *
 * @module
 */

import type { Logger } from "@logtape/logtape";

/** The logging methods handlers use; the same names as Kopf's (Python's) loggers, plus `warn`. */
export interface HandlerLogger {
  /** Logs a debug message. */
  debug(message: string): void;
  /** Logs an informational message. */
  info(message: string): void;
  /** Logs a warning. */
  warning(message: string): void;
  /** Same as `warning`. */
  warn(message: string): void;
  /** Logs an error. */
  error(message: string): void;
  /** Logs an error with an exception's message and stack. */
  exception(message: string, error?: unknown): void;
}

/**
 * A message as literal text: a template of one part, which LogTape takes as it is -- unlike a
 * string, which it scans for `{placeholders}` (and which would need its braces doubled).
 */
function literal(message: string): TemplateStringsArray {
  return [message] as unknown as TemplateStringsArray;
}

/** A {@linkcode HandlerLogger} writing to one LogTape logger. */
export class LogTapeHandlerLogger implements HandlerLogger {
  readonly #logger: Logger;

  /** @param logger where the records go (its category and properties are the caller's choice). */
  constructor(logger: Logger) {
    this.#logger = logger;
  }

  /** Logs a debug message. */
  debug(message: string): void {
    this.#logger.debug(literal(message));
  }
  /** Logs an informational message. */
  info(message: string): void {
    this.#logger.info(literal(message));
  }
  /** Logs a warning. */
  warning(message: string): void {
    this.#logger.warn(literal(message));
  }
  /** Same as `warning`. */
  warn(message: string): void {
    this.#logger.warn(literal(message));
  }
  /** Logs an error. */
  error(message: string): void {
    this.#logger.error(literal(message));
  }
  /** Logs an error with an exception's message and stack. */
  exception(message: string, error?: unknown): void {
    (error === undefined ? this.#logger : this.#logger.with({ error })).error(literal(message));
  }
}
