/**
 * The logger given to activity handlers (startup, cleanup, probes): records under the category
 * `kopf.activities.<activity>`, about no object, so never posted as Kubernetes Events.
 *
 * @module
 */

import { getLogger, type Logger } from "@logtape/logtape";
import type { HandlerLogger } from "./object_logger.ts";

/** Messages are literal text: braces must not be read as placeholders. */
function literal(message: string): string {
  return message.replaceAll("{", "{{").replaceAll("}", "}}");
}

/** A logger for one activity (`startup`, `cleanup`, `probe`); its records carry no object. */
export class ActivityLogger implements HandlerLogger {
  readonly #logger: Logger;

  /** @param activity the activity, the last part of the log category. */
  constructor(activity: string) {
    this.#logger = getLogger(["kopf", "activities", activity]);
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
    this.#logger.error(literal(message), error === undefined ? {} : { error });
  }
}
