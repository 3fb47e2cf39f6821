/**
 * The registry: the handlers an operator runs. Registration functions add to the default one
 * unless given another, so two operators in one process can keep their handlers apart.
 *
 * @module
 */

import type { Selector } from "../model/selector.ts";
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

  /**
   * Adds a handler. Registering one function for several causes or selectors is fine: a cycle
   * runs a handler id only once.
   */
  add(handler: ResourceHandler): void {
    this.#handlers.push(handler);
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

/** The registry that registration functions use when none is given. */
export const defaultRegistry: Registry = new Registry();
