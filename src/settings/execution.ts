/**
 * Settings of handler execution.
 *
 * @module
 */

/** How handlers are run and retried. */
export class ExecutionSettings {
  /** Seconds before retrying a handler that threw an arbitrary error, unless it sets `backoff`. */
  defaultBackoff = 60;
}
