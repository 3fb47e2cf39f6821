/**
 * What a registered handler is: its kind, id, resource selector, options and function; and what
 * change handlers receive, since a change context registers and runs sub-handlers (change
 * functions) and a change function receives a change context: the two types recur into each
 * other, so they live in one module.
 *
 * @module
 */

import type { Selector } from "../model/selector.ts";
import type { Reason } from "./causes.ts";
import type { KubernetesObject } from "../model/body.ts";
import type { DiffItem } from "../model/diff.ts";
import type { DaemonContext, EssenceOf, EventContext, IndexContext, ResourceContext, TimerContext } from "./context.ts";
import type { Lifecycle } from "./lifecycles.ts";
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

/**
 * The value a handler returns, stored at `status[id]`: JSON -- a string, number, boolean, `null`, an
 * array or a plain object -- or nothing (`undefined`, `void`). A `Date`, a function, a `Map`, a `Set`,
 * a bigint (or a promise of one) returned is a `deno check` error: JSON would store something else
 * (a string, nothing, `{}`) or fail. The check is of the value itself and of the items of arrays;
 * the fields of a returned object are not checked (they may be of type `unknown`): a `Date` there
 * is stored as its ISO string.
 *
 * @example
 * ```ts
 * import * as kopf from "@kopf/kopf";
 * kopf.on.create("kopfexamples", () => ({ phase: "Ready", at: new Date().toISOString(), sizes: [1, 2] }));
 * ```
 */
export type HandlerResult =
  | string
  | number
  | boolean
  | null
  | undefined
  | void
  | readonly HandlerResult[]
  | { readonly [key: string]: HandlerResult }
  | (object & {
    readonly [Symbol.toPrimitive]?: never;
    readonly [Symbol.hasInstance]?: never;
    readonly [Symbol.iterator]?: never;
    readonly [Symbol.toStringTag]?: never;
  });

/**
 * A function called for a change of an object; `T` is the object type, `V` that of `old` and
 * `new`, `N` that of `namespace`.
 */
export type ChangeFn<T = KubernetesObject, V = EssenceOf<T>, N extends string | undefined = string | undefined> = (
  context: ChangeContext<T, V, N>,
) => HandlerResult | Promise<HandlerResult>;

/** A function called for every watch event of an object. */
export type EventFn<T = KubernetesObject, N extends string | undefined = string | undefined> = (
  context: EventContext<T, N>,
) => HandlerResult | Promise<HandlerResult>;

/** Any handler function, whatever object type it is declared for: what registration accepts and returns. */
export type AnyHandlerFn = (context: never) => unknown;

/** A registered change handler (`on.create`, `on.update`, `on.delete`, `on.resume`, `on.field`). */
export interface ChangeHandler {
  /** What kind of handler this is: the registry and the engines tell them apart by it. */
  readonly kind: "change";
  /** The reason it serves; `null` for `on.field`, which serves any reason where its field changed. */
  readonly reason: Reason | null;
  /** The handler id: the key of its progress on the object and of its result in `status`. */
  readonly id: string;
  /** The resources it serves. */
  readonly selector: Selector;
  /** The function. */
  readonly fn: ChangeFn;
  /** The options as given (without `registry`). */
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
  /** What kind of handler this is: the registry and the engines tell them apart by it. */
  readonly kind: "event";
  /** The handler id: the key of its progress on the object and of its result in `status`. */
  readonly id: string;
  /** The resources it serves. */
  readonly selector: Selector;
  /** The function. */
  readonly fn: EventFn;
  /** The options as given (without `registry`). */
  readonly options: ResourceHandlerOptions;
  /** The `field` option as a path, if any. */
  readonly field: readonly string[] | undefined;
}

/** Options of daemons (`kopf.daemon`). */
export interface DaemonHandlerOptions extends ResourceHandlerOptions, RetryOptions {
  /** Seconds to wait before the first call (interrupted by the stop). */
  initialDelay?: number;
  /** Seconds a stopped daemon gets to exit on its own before it is cancelled. */
  cancellationBackoff?: number;
  /** Seconds a cancelled daemon gets to exit before it is left orphaned; forever by default. */
  cancellationTimeout?: number;
  /** Seconds between re-checks of a daemon that is still exiting; `settings.background.cancellationPolling` by default. */
  cancellationPolling?: number;
}

/** Options of timers (`kopf.timer`). */
export interface TimerHandlerOptions extends ResourceHandlerOptions, RetryOptions {
  /** Seconds between calls (from the end of one call to the start of the next, unless `sharp`). */
  interval?: number;
  /** Call only after the object has not changed for so many seconds. */
  idle?: number;
  /** Seconds to wait before the first call. */
  initialDelay?: number;
  /** Align the calls to a grid of `interval` seconds, whatever each call takes. */
  sharp?: boolean;
}

/** Options of indexes (`kopf.index`). */
export interface IndexHandlerOptions extends ResourceHandlerOptions, RetryOptions {
  /**
   * With sharding (`kopf run --shard-group`): whether the index holds only this replica's objects
   * (`true`, the default) or every object of the resource (`false`: the replica then watches the
   * resource unsharded, and its handlers still see only their own objects). No effect without sharding.
   */
  readonly sharded?: boolean;
}

/** A function run for each object as long as it exists: it returns (or throws) when done. */
export type DaemonFn<T = KubernetesObject, N extends string | undefined = string | undefined> = (
  context: DaemonContext<T, N>,
) => HandlerResult | Promise<HandlerResult>;

/** A function called for each object every so often. */
export type TimerFn<T = KubernetesObject, N extends string | undefined = string | undefined> = (
  context: TimerContext<T, N>,
) => HandlerResult | Promise<HandlerResult>;

/**
 * A function called for every event of an object; what it returns goes into the index: a plain
 * object's entries under their keys, any other value (but `null`/`undefined`) under the key `null`.
 */
export type IndexFn<T = KubernetesObject, N extends string | undefined = string | undefined> = (
  context: IndexContext<T, N>,
) => unknown;

/** A registered daemon. */
export interface DaemonHandler {
  /** What kind of handler this is: the registry and the engines tell them apart by it. */
  readonly kind: "daemon";
  /** The handler id: the key of its progress on the object and of its result in `status`. */
  readonly id: string;
  /** The resources it serves. */
  readonly selector: Selector;
  /** The function. */
  readonly fn: DaemonFn;
  /** The options as given (without `registry`). */
  readonly options: DaemonHandlerOptions;
  /** The `field` option as a path, if any. */
  readonly field: readonly string[] | undefined;
}

/** A registered timer. */
export interface TimerHandler {
  /** What kind of handler this is: the registry and the engines tell them apart by it. */
  readonly kind: "timer";
  /** The handler id: the key of its progress on the object and of its result in `status`. */
  readonly id: string;
  /** The resources it serves. */
  readonly selector: Selector;
  /** The function. */
  readonly fn: TimerFn;
  /** The options as given (without `registry`). */
  readonly options: TimerHandlerOptions;
  /** The `field` option as a path, if any. */
  readonly field: readonly string[] | undefined;
}

/** A registered index handler. */
export interface IndexHandler {
  /** What kind of handler this is: the registry and the engines tell them apart by it. */
  readonly kind: "index";
  /** The handler id: the key of its progress on the object and of its result in `status`. */
  readonly id: string;
  /** The resources it serves. */
  readonly selector: Selector;
  /** The function. */
  readonly fn: IndexFn;
  /** The options as given (without `registry`). */
  readonly options: IndexHandlerOptions;
  /** The `field` option as a path, if any. */
  readonly field: readonly string[] | undefined;
}

/** A daemon or a timer: what runs in the background of an object. */
export type BackgroundHandler = DaemonHandler | TimerHandler;

/** Any resource handler. */
export type ResourceHandler = ChangeHandler | EventHandler | DaemonHandler | TimerHandler | IndexHandler;

/**
 * What change handlers (`on.create`, `on.update`, `on.delete`, `on.resume`, `on.field`) receive;
 * `V` is the type of `old` and `new` (the field's value for handlers with a `field`).
 */
export interface ChangeContext<
  T = KubernetesObject,
  V = EssenceOf<T>,
  N extends string | undefined = string | undefined,
> extends ResourceContext<T, N> {
  /** Why the handler runs. */
  readonly reason: Reason;
  /** How many times it ran before for this change (0 on the first attempt). */
  readonly retry: number;
  /** When the first attempt for this change started. */
  readonly started: Date;
  /** Milliseconds since `started`. */
  readonly runtime: number;
  /**
   * The essence before the change (spec, labels, annotations, other top-level fields; not status
   * or system metadata); `null` on creation. For handlers with a `field`: that field's old value.
   */
  readonly old: V;
  /** The essence after the change; for handlers with a `field`: that field's new value. */
  readonly new: V;
  /** The changes from `old` to `new`: `[op, path, oldValue, newValue]`. */
  readonly diff: readonly DiffItem[];
  /**
   * Aborted at the handler's deadline (its `timeout`, or `settings.execution.handlerTimeout`,
   * counted from `started`) or when the operator stops (also when it stops serving the object's
   * resource or namespace). Pass it to `fetch`, `kopf.sleep()`, the `api` calls: at the deadline
   * the attempt fails with a `HandlerTimeoutError` (for good), and a handler still running then is
   * left behind; after a stop, the attempt counts for nothing and is made again later.
   */
  readonly signal: AbortSignal;
  /**
   * Registers a sub-handler of this handler, with the id `<this id>/<options.id or fn.name>`:
   * `subhandler(fn)` or `subhandler(options, fn)`; the same as `kopf.subhandler()`. Registered
   * sub-handlers run when the handler calls `execute()`, or else right after it returns; the
   * handler is called again on every cycle until all have finished, and must register the same
   * ones each time.
   */
  readonly subhandler: RegisterSubhandler;
  /**
   * Runs sub-handlers of this handler (`{ fns }`, `{ handlers }`, or the registered ones) and
   * returns once all have finished; the same as `kopf.execute()`. While some are unfinished, the
   * handler's attempt ends here and it is called again on the next cycle.
   */
  readonly execute: ExecuteSubhandlers;
}

/**
 * Options of a sub-handler: those of a change handler. `old`/`new` are accepted only under
 * `on.update` and `on.field` parents (at any depth). The id is `<parent id>/<id>`, where `id`
 * defaults to the function's name; a `field` adds no suffix to it (as in Kopf).
 */
export type SubhandlerOptions = ChangeHandlerOptions;

/** A sub-handler given to `kopf.execute()` as `handlers`: its function and its options. */
export interface SubhandlerSpec extends SubhandlerOptions {
  /** The sub-handler's function. */
  readonly fn: ChangeFn;
}

/** Which sub-handlers `kopf.execute()` runs, and how. */
export interface ExecuteOptions {
  /**
   * Functions to run as sub-handlers without options: an object of ids to functions, or an array
   * of named functions (ids from their names).
   */
  readonly fns?: Readonly<Record<string, ChangeFn>> | readonly ChangeFn[];
  /** Sub-handlers with options. Only one of `fns` and `handlers` may be given. */
  readonly handlers?: readonly SubhandlerSpec[];
  /** Which due sub-handlers run in this cycle; by default the lifecycle that ran the parent. */
  readonly lifecycle?: Lifecycle;
}

/** `ctx.subhandler`: registers a sub-handler of the running handler; returns the function. */
export interface RegisterSubhandler {
  /** Registers `fn` (named after the function) as a sub-handler. */
  (fn: ChangeFn): ChangeFn;
  /** Registers `fn` with options as a sub-handler. */
  (options: SubhandlerOptions, fn: ChangeFn): ChangeFn;
}

/** `ctx.execute`: runs sub-handlers of the running handler (see `kopf.execute()`). */
export type ExecuteSubhandlers = (options?: ExecuteOptions) => Promise<void>;
