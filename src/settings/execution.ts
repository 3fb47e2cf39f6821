/**
 * Settings of handler execution.
 *
 * @module
 */

/** How handlers are run and retried. */
export class ExecutionSettings {
  /** Seconds before retrying a handler that threw an arbitrary error, unless it sets `backoff`. */
  defaultBackoff = 60;
  /**
   * Seconds: the `timeout` of change handlers and timers that set none; `null` (the default, as
   * in Kopf): no timeout. A timeout is a hard deadline since the first attempt for the change:
   * the handler's `signal` aborts then, and it fails for good with a `HandlerTimeoutError`.
   */
  handlerTimeout: number | null = null;
}
