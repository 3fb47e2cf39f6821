/**
 * Server-side label selectors: when every handler of a resource (change, event, daemon, timer,
 * index) filters by the same literal labels or `PRESENT`/`ABSENT`, the resource's LIST and WATCH
 * carry them as a `labelSelector`, so that objects no handler wants never reach the operator. Only
 * the requirements common to all handlers go to the server (a selector is a conjunction; the
 * handlers' filters together are a disjunction); everything else stays client-side, as before.
 *
 * Objects that stop matching leave a selector's watch as `DELETED` events; the watch layer tells
 * them from real deletions with a GET (`confirmDeletions`), and they are handled as changes that
 * no longer match. Not with mandatory deletion handlers, though: releasing a finalizer must not
 * depend on that extra request.
 *
 * @module
 */

import type { ResourceHandler } from "./handlers.ts";
import { ABSENT, PRESENT } from "./filters.ts";

// Label keys (an optional DNS-subdomain prefix and a name) and values, as Kubernetes validates them.
const KEY =
  /^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*\/)?[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$/;
const VALUE = /^(([A-Za-z0-9][-A-Za-z0-9_.]{0,61})?[A-Za-z0-9])?$/;

/**
 * The label selector that the server can apply for these handlers of one resource, or
 * `undefined` if there is none (no handlers, a handler without literal label filters, no
 * requirement common to all, or a mandatory deletion handler).
 *
 * @example
 * ```ts ignore
 * serverLabelSelector(handlers); // "app=x,!legacy" when every handler filters { app: "x", legacy: ABSENT }
 * ```
 */
export function serverLabelSelector(handlers: readonly ResourceHandler[]): string | undefined {
  if (handlers.length === 0) return undefined;
  if (handlers.some((handler) => handler.kind === "change" && handler.requiresFinalizer)) return undefined;
  let common: Set<string> | undefined;
  for (const handler of handlers) {
    const own = requirements(handler.options.labels);
    common = common === undefined ? own : new Set([...common].filter((requirement) => own.has(requirement)));
    if (common.size === 0) return undefined;
  }
  return common && common.size > 0 ? [...common].sort().join(",") : undefined;
}

/** The requirements a handler's label filter states literally; callbacks and odd values stay client-side. */
function requirements(labels: Readonly<Record<string, unknown>> | undefined): Set<string> {
  const found = new Set<string>();
  for (const [key, value] of Object.entries(labels ?? {})) {
    if (!KEY.test(key) || key.length > 316) continue;
    if (value === PRESENT) found.add(key);
    else if (value === ABSENT) found.add(`!${key}`);
    else if (typeof value === "string" && VALUE.test(value)) found.add(`${key}=${value}`);
  }
  return found;
}
