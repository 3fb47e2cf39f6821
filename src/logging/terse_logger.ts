/**
 * A handler logger that turns informational lines into debug lines: for handlers that run on
 * every event of every object (indexers), where a line useful once per change is noise.
 *
 * @module
 */

import type { HandlerLogger } from "./handler_logger.ts";

/**
 * Indexers run for every event of every object: lines that would be useful once per change are
 * noise here, so informational lines become debug lines (shown with `--verbose` only), while
 * warnings and errors stay.
 */
export class TerseLogger implements HandlerLogger {
  readonly #inner: HandlerLogger;

  /** @param inner where the lines go. */
  constructor(inner: HandlerLogger) {
    this.#inner = inner;
  }
  debug(message: string): void {
    this.#inner.debug(message);
  }
  info(message: string): void {
    this.#inner.debug(message);
  }
  warning(message: string): void {
    this.#inner.warning(message);
  }
  warn(message: string): void {
    this.#inner.warning(message);
  }
  error(message: string): void {
    this.#inner.error(message);
  }
  exception(message: string, error?: unknown): void {
    this.#inner.exception(message, error);
  }
}
