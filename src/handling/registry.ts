/**
 * The registry: the handlers an operator runs. Registration functions add to the default one
 * unless given another, so two operators in one process can keep their handlers apart.
 *
 * @module
 */

import type { Selector } from "../model/selector.ts";
import { processGlobal } from "../utils/process_global.ts";
import type { Activity, ActivityHandler } from "./activities.ts";
import type { AdmissionHandler } from "./admission_handler.ts";
import type { ConversionHandler } from "./conversion_handler.ts";
import type { ResourceHandler } from "./handlers.ts";

/**
 * A set of handlers.
 *
 * @example
 * ```ts
 * import * as kopf from "@kopf/kopf";
 * const registry = new kopf.Registry();
 * kopf.on.event("pods", { registry }, function seen({ name }) { console.log(name); });
 * ```
 */
export class Registry {
  readonly #handlers: ResourceHandler[] = [];
  readonly #activities: ActivityHandler[] = [];
  readonly #webhooks: AdmissionHandler[] = [];
  readonly #converters: ConversionHandler[] = [];

  /**
   * Adds a handler. Registering one function for several causes or selectors is fine: a cycle
   * runs a handler id only once. Activity handlers (startup, cleanup, probes) are kept apart
   * from resource handlers, and so are admission handlers (`on.validate`, `on.mutate`) and
   * converters (`on.conversion`), which need no watching.
   */
  add(handler: ResourceHandler | ActivityHandler | AdmissionHandler | ConversionHandler): void {
    if (handler.kind === "activity") this.#activities.push(handler);
    else if (handler.kind === "admission") this.#webhooks.push(handler);
    else if (handler.kind === "conversion") this.#converters.push(handler);
    else this.#handlers.push(handler);
  }

  /**
   * The converters (`on.conversion`), in registration order; of several converters between the
   * same two versions of a resource, the operator uses the first (and warns about the others).
   */
  get converters(): readonly ConversionHandler[] {
    return this.#converters;
  }

  /**
   * The admission handlers (`on.validate`, `on.mutate`), in registration order; of handlers with
   * the same id, only the first (each id is one webhook).
   */
  get webhooks(): readonly AdmissionHandler[] {
    const seen = new Set<string>();
    return this.#webhooks.filter((handler) => {
      if (seen.has(handler.id)) return false;
      seen.add(handler.id);
      return true;
    });
  }

  /**
   * The handlers of an activity, in registration order; of handlers with the same id, only the
   * first (one function registered twice runs once).
   */
  activities(activity: Activity): ActivityHandler[] {
    const seen = new Set<string>();
    return this.#activities.filter((handler) => {
      if (handler.activity !== activity || seen.has(handler.id)) return false;
      seen.add(handler.id);
      return true;
    });
  }

  /** All resource handlers, in registration order. */
  get handlers(): readonly ResourceHandler[] {
    return this.#handlers;
  }

  /** The distinct selectors the handlers use. */
  get selectors(): Selector[] {
    const seen = new Map<string, Selector>();
    for (const handler of this.#handlers) seen.set(handler.selector.toString(), handler.selector);
    return [...seen.values()];
  }
}

/**
 * The registry that registration functions use when none is given: one per process, shared by every
 * copy of the library that is loaded, so handler files register where the CLI's operator looks.
 */
export const defaultRegistry: Registry = processGlobal("default-registry", 1, () => new Registry());
