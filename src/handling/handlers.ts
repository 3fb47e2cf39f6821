/**
 * What a registered handler is: its kind, id, resource selector, options and function.
 *
 * @module
 */

import type { Selector } from "../model/selector.ts";
import type { Reason } from "./causes.ts";
import type { ChangeContext, EventContext } from "./context.ts";
import type { FilterOptions } from "./filters.ts";

/** What an arbitrary error (not a TemporaryError or PermanentError) means for a handler. */
export type ErrorsMode = "temporary" | "permanent" | "ignored";

/** Options shared by resource handlers. */
export interface ResourceHandlerOptions extends FilterOptions {
  /** The handler id; the function's name by default. Results are stored at `status[id]`. */
  id?: string;
  /** Any value, passed to the handler as `param`. */
  param?: unknown;
}

/** How a handler is retried. */
export interface RetryOptions {
  /** What an arbitrary error means: retried after `backoff` (`temporary`, the default), given up (`permanent`), or `ignored`. */
  errors?: ErrorsMode;
  /** Seconds since the first attempt after which the handler is given up (before an attempt). */
  timeout?: number;
  /** The most attempts; the handler is given up after so many failures. */
  retries?: number;
  /** Seconds before retrying after an arbitrary error; `settings.execution.defaultBackoff` (60) by default. */
  backoff?: number;
}

/** Options of change handlers (`on.create`, `on.update`, `on.field`). */
export interface ChangeHandlerOptions extends ResourceHandlerOptions, RetryOptions {}

/** Options of `on.delete`. */
export interface DeleteHandlerOptions extends ChangeHandlerOptions {
  /** Do not put a finalizer on objects for this handler: it runs only if another handler needs one. */
  optional?: boolean;
}

/** Options of `on.resume`. */
export interface ResumeHandlerOptions extends ChangeHandlerOptions {
  /** Also resume objects that are being deleted. */
  deleted?: boolean;
}

/** The value a handler returns; JSON, stored at `status[id]`. */
export type HandlerResult = unknown;

/** A function called for a change of an object. */
export type ChangeFn = (context: ChangeContext) => HandlerResult | Promise<HandlerResult>;

/** A function called for every watch event of an object. */
export type EventFn = (context: EventContext) => HandlerResult | Promise<HandlerResult>;

/** A registered change handler (`on.create`, `on.update`, `on.delete`, `on.resume`, `on.field`). */
export interface ChangeHandler {
  readonly kind: "change";
  /** The reason it serves; `null` for `on.field`, which serves any reason where its field changed. */
  readonly reason: Reason | null;
  readonly id: string;
  readonly selector: Selector;
  readonly fn: ChangeFn;
  readonly options: ChangeHandlerOptions;
  /** The `field` option as a path, if any. */
  readonly field: readonly string[] | undefined;
  /** Whether objects need the finalizer for it (mandatory delete handlers). */
  readonly requiresFinalizer: boolean;
  /** Whether it is a resume handler (runs for objects first seen by the initial listing). */
  readonly initial: boolean;
  /** Whether a resume handler also runs for objects being deleted. */
  readonly deleted: boolean;
}

/** A registered event handler (`on.event`). */
export interface EventHandler {
  readonly kind: "event";
  readonly id: string;
  readonly selector: Selector;
  readonly fn: EventFn;
  readonly options: ResourceHandlerOptions;
  /** The `field` option as a path, if any. */
  readonly field: readonly string[] | undefined;
}

/** Any resource handler. */
export type ResourceHandler = ChangeHandler | EventHandler;
