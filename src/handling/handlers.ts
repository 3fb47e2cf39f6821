/**
 * What a registered handler is: its kind, id, resource selector, options and function.
 *
 * @module
 */

import type { Selector } from "../model/selector.ts";
import type { ChangeContext, EventContext } from "./context.ts";

/** Options shared by resource handlers. */
export interface ResourceHandlerOptions {
  /** The handler id; the function's name by default. Results are stored at `status[id]`. */
  id?: string;
  /** Any value, passed to the handler as `param`. */
  param?: unknown;
}

/** Options of change handlers (`on.create`). */
export interface ChangeHandlerOptions extends ResourceHandlerOptions {
  /** What an arbitrary error means: retried later (`temporary`, the default), given up (`permanent`), or `ignored`. */
  errors?: "temporary" | "permanent" | "ignored";
  /** Seconds before retrying after an arbitrary error; `settings.execution.defaultBackoff` (60) by default. */
  backoff?: number;
}

/** The value a handler returns; JSON, stored at `status[id]`. */
export type HandlerResult = unknown;

/** A function called for a change of an object (creation). */
export type ChangeFn = (context: ChangeContext) => HandlerResult | Promise<HandlerResult>;

/** A function called for every watch event of an object. */
export type EventFn = (context: EventContext) => unknown | Promise<unknown>;

/** A registered change handler. */
export interface ChangeHandler {
  readonly kind: "change";
  readonly reason: "create";
  readonly id: string;
  readonly selector: Selector;
  readonly fn: ChangeFn;
  readonly options: ChangeHandlerOptions;
}

/** A registered event handler. */
export interface EventHandler {
  readonly kind: "event";
  readonly id: string;
  readonly selector: Selector;
  readonly fn: EventFn;
  readonly options: ResourceHandlerOptions;
}

/** Any resource handler. */
export type ResourceHandler = ChangeHandler | EventHandler;
