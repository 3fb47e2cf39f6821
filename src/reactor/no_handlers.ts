/**
 * An operator with nothing to run refuses to start: a handler file that registers nothing (a
 * typo, a forgotten import, handlers registered in another registry) would otherwise idle
 * silently forever.
 *
 * What counts as something to run: a resource handler of any kind (change, event, daemon, timer,
 * index), an admission handler or a converter (served even without watching), or a startup handler (user
 * code that may start work of its own). Login, probe and cleanup handlers only support the
 * others (credentials, health, the stop): on their own, the operator would do nothing.
 *
 * @module
 */

import type { Registry } from "../handling/registry.ts";

/**
 * `operator()` was given a registry with nothing to run: no resource, admission or startup
 * handler. The message says what was found, if anything, and what to register.
 *
 * @example
 * ```ts ignore
 * try {
 *   await kopf.operator({ registry: new kopf.Registry() });
 * } catch (error) {
 *   if (error instanceof kopf.NoHandlersError) console.error(error.message);
 * }
 * ```
 */
export class NoHandlersError extends Error {
  /**
   * Makes the error from what was registered instead.
   *
   * @param found What the registry has instead, e.g. `["login", "probe"]`: activities only.
   */
  constructor(readonly found: readonly string[]) {
    const what = found.length
      ? `Only ${found.join(", ")} handlers are registered, which do not serve anything by themselves`
      : "No handlers are registered";
    super(
      `${what}: the operator has nothing to run. Register resource handlers (kopf.on.create, kopf.on.event, ` +
        "kopf.daemon, kopf.timer, kopf.index, \u2026), admission handlers, converters or startup handlers before starting it \u2014 " +
        "in the registry given to the operator, if any.",
    );
    this.name = "NoHandlersError";
  }
}

/**
 * Throws a {@linkcode NoHandlersError} unless the registry has something to run.
 *
 * @param registry The operator's handlers.
 */
export function checkSomethingToRun(registry: Registry): void {
  if (registry.handlers.length || registry.webhooks.length || registry.converters.length) return;
  if (registry.activities("startup").length) return;
  const found = (["login", "probe", "cleanup"] as const).filter((activity) => registry.activities(activity).length);
  throw new NoHandlersError(found);
}
