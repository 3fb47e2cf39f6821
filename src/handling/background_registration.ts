/**
 * The registration of daemons (`kopf.daemon`) and timers (`kopf.timer`): the handlers that run
 * in the background of each matching object rather than for its changes.
 *
 * @module
 */

import type { HandledObject, NamespaceOf } from "../model/builtin_types.ts";
import type { SelectorInput } from "../model/selector.ts";
import type { AnyHandlerFn, DaemonFn, DaemonHandlerOptions, TimerFn, TimerHandlerOptions } from "./handlers.ts";
import type { RegistryOption } from "./registration.ts";
import { parseRegistration } from "./registration_arguments.ts";

/** Options of `kopf.daemon`. */
export type DaemonOptions = DaemonHandlerOptions & RegistryOption;
/** Options of `kopf.timer`. */
export type TimerOptions = TimerHandlerOptions & RegistryOption;

/**
 * Registers a daemon: a function run for each matching object from when the operator sees it
 * until it is deleted, stops matching, or the operator stops -- then `stopped` aborts, and the
 * daemon should return. A daemon that returns on its own is not started again for that object
 * until the operator restarts; its result goes to `status[id]`. Objects keep the finalizer while
 * a daemon matches them, so that a deletion waits for the daemon to exit.
 *
 * @example
 * ```ts
 * import * as kopf from "@kopf/kopf";
 * kopf.daemon("kopfexamples", { initialDelay: 1 }, async function monitor({ stopped, spec, logger }) {
 *   while (!stopped.aborted) {
 *     logger.info(`Watching ${JSON.stringify(spec)}`); // `spec` always shows the latest state
 *     await kopf.sleep(10, stopped);
 *   }
 * });
 * ```
 */
export function daemon<T = never, R extends SelectorInput = SelectorInput>(
  resource: R,
  fn: DaemonFn<HandledObject<T, R>, NamespaceOf<R>>,
): DaemonFn<HandledObject<T, R>, NamespaceOf<R>>;
/**
 * Registers a daemon with options: filters, `id`, `param`, retrying (`errors`, `timeout`,
 * `retries`, `backoff`), `initialDelay`, and how a stop waits for it (`cancellationBackoff`,
 * `cancellationTimeout`, `cancellationPolling`).
 */
export function daemon<T = never, R extends SelectorInput = SelectorInput>(
  resource: R,
  options: DaemonOptions,
  fn: DaemonFn<HandledObject<T, R>, NamespaceOf<R>>,
): DaemonFn<HandledObject<T, R>, NamespaceOf<R>>;
export function daemon(
  resource: SelectorInput,
  optionsOrFn: DaemonOptions | AnyHandlerFn,
  maybeFn?: AnyHandlerFn,
): AnyHandlerFn {
  const { selector, registry, options, fn, id, field } = parseRegistration<DaemonHandlerOptions, DaemonFn>(
    "daemon",
    [resource, optionsOrFn, maybeFn],
  );
  registry.add({ kind: "daemon", id, selector, fn, options, field });
  return fn;
}

/**
 * Registers a timer: a function called for each matching object every `interval` seconds (never
 * two calls at once for one object), optionally only once the object has not changed for `idle`
 * seconds. Its result goes to `status[id]`; a result and patch that the object already has are
 * not sent again. Objects keep the finalizer while a timer matches them.
 *
 * @example
 * ```ts
 * import * as kopf from "@kopf/kopf";
 * kopf.timer("kopfexamples", { interval: 60, idle: 10 }, function check({ spec }) {
 *   return { size: spec.size ?? 0 };
 * });
 * ```
 */
export function timer<T = never, R extends SelectorInput = SelectorInput>(
  resource: R,
  fn: TimerFn<HandledObject<T, R>, NamespaceOf<R>>,
): TimerFn<HandledObject<T, R>, NamespaceOf<R>>;
/**
 * Registers a timer with options: filters, `id`, `param`, retrying (`errors`, `timeout`,
 * `retries`, `backoff`), and the schedule (`interval`, `idle`, `initialDelay`, `sharp`).
 */
export function timer<T = never, R extends SelectorInput = SelectorInput>(
  resource: R,
  options: TimerOptions,
  fn: TimerFn<HandledObject<T, R>, NamespaceOf<R>>,
): TimerFn<HandledObject<T, R>, NamespaceOf<R>>;
export function timer(
  resource: SelectorInput,
  optionsOrFn: TimerOptions | AnyHandlerFn,
  maybeFn?: AnyHandlerFn,
): AnyHandlerFn {
  const { selector, registry, options, fn, id, field } = parseRegistration<TimerHandlerOptions, TimerFn>(
    "timer",
    [resource, optionsOrFn, maybeFn],
  );
  registry.add({ kind: "timer", id, selector, fn, options, field });
  return fn;
}
