/**
 * Sub-handlers (Kopf's `@kopf.subhandler`, `kopf.register()`, `kopf.execute()`): children that a
 * change handler declares while it runs, with ids `parent/child`. They are tracked like top-level
 * handlers (own progress, retries, delays, results); the parent counts as unfinished, and is
 * called again on the next cycle, until all of them have finished.
 *
 * This module knows the registration side: options, ids, the scope of the running parent (found
 * by the module-level functions in the handling context of current_object.ts), and when a parent
 * must be retried. Running the children is the job of `execution.ts`, which gives each scope a
 * runner.
 *
 * @module
 */

import { parseField } from "../model/diff.ts";
import { currentHandlingScope, currentObject } from "./current_object.ts";
import { TemporaryError } from "./errors.ts";
import { functionName } from "./registration_arguments.ts";
import { checkOptions } from "./registration_options.ts";
import type {
  ChangeFn,
  ChangeHandler,
  ExecuteOptions,
  ExecuteSubhandlers,
  RegisterSubhandler,
  SubhandlerOptions,
  SubhandlerSpec,
} from "./handlers.ts";
import type { Lifecycle } from "./lifecycles.ts";

/** How far a set of children got in this cycle. */
export interface ChildrenOutcome {
  /** All of them finished (succeeded, or failed for good). */
  readonly done: boolean;
  /** Seconds until the next unfinished one is due (0: at once). */
  readonly delay: number;
}

/** Runs the children of one parent within its attempt (provided by the execution). */
export type ChildrenRunner = (children: readonly ChangeHandler[], lifecycle: Lifecycle) => Promise<ChildrenOutcome>;

/**
 * Thrown out of `execute()` (and hence out of the parent) when some children are unfinished: the
 * parent is then retried after `delay` seconds without an error being reported. Code after the
 * `await` does not run until all children have finished.
 */
export class HandlerChildrenRetry extends TemporaryError {
  /** @param delay seconds until the next child is due. */
  constructor(delay: number) {
    super("Some sub-handlers are not finished yet.", { delay });
    this.name = "HandlerChildrenRetry";
  }
}

const EXECUTE_OPTION_NAMES: readonly string[] = ["fns", "handlers", "lifecycle"];

/**
 * The sub-handling of one attempt of one handler: the children it registers, whether it ran them
 * itself, and whether some are unfinished. The framework creates one per attempt, runs the handler
 * inside it (given to `runWithObject()` with the object), then calls
 * {@linkcode SubhandlingScope.finish} where {@linkcode SubhandlingScope.unsettled} says so, and
 * sets {@linkcode SubhandlingScope.closed}.
 *
 * Every change handler's attempt makes one, and nearly none uses it: its fields are declared and set
 * in the constructor, none initialised in the class body nor `#private` (V8 runs field initialisers
 * as a function of their own at every construction), and what ends it is two fields, not two calls
 * (docs/performance/cpu.md, "Fewer functions, a third pass").
 */
export class SubhandlingScope {
  /** Registers a sub-handler (the implementation of `ctx.subhandler` and `kopf.subhandler`). */
  declare readonly subhandler: RegisterSubhandler;
  /** Runs sub-handlers (the implementation of `ctx.execute` and `kopf.execute`). */
  declare readonly execute: ExecuteSubhandlers;
  /**
   * Whether {@linkcode SubhandlingScope.finish} has anything to do: sub-handlers were registered,
   * or some that ran are unfinished.
   */
  declare unsettled: boolean;
  /**
   * Set once the handler's attempt is over: registering or executing afterwards (e.g. from a
   * detached promise) fails.
   */
  declare closed: boolean;
  declare private readonly parent: ChangeHandler;
  declare private readonly kind: string;
  declare private readonly lifecycle: Lifecycle;
  declare private readonly runner: ChildrenRunner;
  /** Made by the first registration: most handlers register none. */
  declare private registered: Map<string, ChangeHandler> | undefined;
  declare private executed: boolean;
  declare private unfinished: number | undefined;

  /**
   * @param parent the running handler.
   * @param kind the kind of the top-level handler (`create`, `update`, `field`, ...): sub-handlers
   *   are checked and matched as handlers of that kind.
   * @param lifecycle the default lifecycle of its children.
   * @param runner runs children.
   */
  constructor(parent: ChangeHandler, kind: string, lifecycle: Lifecycle, runner: ChildrenRunner) {
    this.parent = parent;
    this.kind = kind;
    this.lifecycle = lifecycle;
    this.runner = runner;
    this.registered = this.unfinished = undefined;
    this.executed = this.unsettled = this.closed = false;
    // Bound to this scope (handlers get them detached, in their context); made here, run only when called.
    this.subhandler =
      ((optionsOrFn: SubhandlerOptions | ChangeFn, maybeFn?: ChangeFn) =>
        this.register(optionsOrFn, maybeFn)) as RegisterSubhandler;
    this.execute = (options?: ExecuteOptions) => this.executeChildren(options);
  }

  private register(optionsOrFn: SubhandlerOptions | ChangeFn, maybeFn?: ChangeFn): ChangeFn {
    const where = "kopf.subhandler()";
    this.checkOpen(where);
    let options: SubhandlerOptions;
    let fn: ChangeFn | undefined;
    if (typeof optionsOrFn === "function") {
      if (maybeFn !== undefined) throw new TypeError(`${where}: give either (fn) or (options, fn).`);
      [options, fn] = [{}, optionsOrFn];
    } else {
      [options, fn] = [optionsOrFn ?? {}, maybeFn];
    }
    const child = this.build(where, fn, options);
    const registered = this.registered ??= new Map();
    const existing = registered.get(child.id);
    if (existing && existing.fn !== child.fn) {
      throw new TypeError(
        `${where}: the sub-handler id '${child.id}' is registered twice with different functions; ` +
          `give each sub-handler its own id (e.g. { id: \`item-\${index}\` }).`,
      );
    }
    if (!existing) registered.set(child.id, child);
    this.unsettled = true;
    return child.fn;
  }

  private async executeChildren(options: ExecuteOptions = {}): Promise<void> {
    const where = "kopf.execute()";
    this.checkOpen(where);
    const unknown = Object.keys(options ?? {}).filter((key) => !EXECUTE_OPTION_NAMES.includes(key));
    if (unknown.length) {
      throw new TypeError(
        `${where}: unknown option(s) ${unknown.join(", ")}; the options are: fns, handlers, lifecycle.`,
      );
    }
    const { fns, handlers, lifecycle } = options ?? {};
    if (fns !== undefined && handlers !== undefined) {
      throw new TypeError(`${where}: give either fns or handlers, not both.`);
    }
    let children: ChangeHandler[];
    if (fns !== undefined) {
      if (Array.isArray(fns)) {
        children = this.unique(where, fns.map((fn) => this.build(where, fn, {})));
      } else if (typeof fns === "object" && fns !== null) {
        const entries = Object.entries(fns as Record<string, ChangeFn>);
        children = this.unique(where, entries.map(([id, fn]) => this.build(where, fn, { id })));
      } else {
        throw new TypeError(`${where}: fns must be an object of ids to functions or an array of functions.`);
      }
    } else if (handlers !== undefined) {
      if (!Array.isArray(handlers)) {
        throw new TypeError(`${where}: handlers must be an array of { fn, \u2026options }.`);
      }
      children = this.unique(
        where,
        handlers.map((spec: SubhandlerSpec) => {
          const { fn, ...rest } = spec;
          return this.build(where, fn, rest);
        }),
      );
    } else {
      // Without arguments: the registered ones, once (a second call has nothing left to do).
      if (this.executed) return;
      this.executed = true;
      children = [...this.registered?.values() ?? []];
    }
    await this.runChildren(children, lifecycle ?? this.lifecycle);
  }

  /**
   * Called after the handler returned: runs the registered sub-handlers if the handler did not
   * call `execute()` itself, and throws {@linkcode HandlerChildrenRetry} if some children are
   * unfinished -- also when the handler caught that error itself, so that it is retried anyway.
   */
  async finish(): Promise<void> {
    if (!this.executed && this.registered?.size) await this.execute();
    if (this.unfinished !== undefined) throw new HandlerChildrenRetry(this.unfinished);
  }

  private async runChildren(children: readonly ChangeHandler[], lifecycle: Lifecycle): Promise<void> {
    const outcome = await this.runner(children, lifecycle);
    if (outcome.done) return;
    this.unfinished = Math.min(this.unfinished ?? Infinity, outcome.delay);
    this.unsettled = true;
    throw new HandlerChildrenRetry(outcome.delay);
  }

  private checkOpen(where: string): void {
    if (this.closed) {
      throw new Error(
        `${where}: handler '${this.parent.id}' has finished; sub-handlers must be registered and executed ` +
          `while it runs (await them inside the handler).`,
      );
    }
  }

  /** Checks the options and builds the child handler, as registration does for top-level handlers. */
  private build(where: string, fn: unknown, options: SubhandlerOptions): ChangeHandler {
    if (typeof fn !== "function") {
      throw new TypeError(`${where}: the sub-handler must be a function, got ${typeof fn}.`);
    }
    const given = typeof options === "object" && options !== null ? options.id : undefined;
    const name = typeof given === "string" ? given : functionName(fn);
    const id = `${this.parent.id}/${name}`;
    const label = `${where}: sub-handler '${
      name ? id : `${this.parent.id}/\u2026`
    }' (under an on.${this.kind} handler)`;
    // Filters follow the rules of the top-level parent's kind (old/new only under update and field).
    checkOptions("subhandler", label, options, this.kind);
    if (!name) {
      throw new TypeError(
        `${where}: an anonymous sub-handler of '${this.parent.id}' needs an id: pass { id: "\u2026" } ` +
          `or use a named function.`,
      );
    }
    return {
      kind: "change",
      reason: this.parent.reason,
      id,
      selector: this.parent.selector,
      fn: fn as ChangeFn,
      options,
      field: options.field === undefined ? undefined : parseField(options.field),
      requiresFinalizer: false,
      initial: false,
      deleted: false,
    };
  }

  /** The children of one `execute()` call, each id once; one id for two functions is a mistake. */
  private unique(where: string, children: ChangeHandler[]): ChangeHandler[] {
    const byId = new Map<string, ChangeHandler>();
    for (const child of children) {
      const existing = byId.get(child.id);
      if (existing && existing.fn !== child.fn) {
        throw new TypeError(`${where}: the sub-handler id '${child.id}' is given twice with different functions.`);
      }
      if (!existing) byId.set(child.id, child);
    }
    return [...byId.values()];
  }
}

function currentScope(where: string): SubhandlingScope {
  // Made by this copy of the library or another one (see current_object.ts): the same shape either way.
  const scope = currentHandlingScope() as SubhandlingScope | undefined;
  if (scope) return scope;
  const place = currentObject() === undefined
    ? "outside of any handler"
    : "in a handler of another kind (on.event, a daemon, a timer, \u2026), which keeps no progress and has no retries";
  throw new TypeError(
    `Sub-handlers are only supported inside change handlers. ${where} was called ${place}; ` +
      `use it inside on.create, on.update, on.delete, on.resume or on.field handlers.`,
  );
}

/**
 * Registers a sub-handler of the change handler that is running (found through the async
 * context, so it works after `await`s too); the same as `ctx.subhandler`. Its id is
 * `<parent id>/<options.id or the function's name>`. The registered sub-handlers run when the
 * parent calls {@linkcode execute} without arguments, or else right after the parent returns.
 * The parent is called again on every cycle until all of them have finished, so it must register
 * the same sub-handlers each time (with stable ids) and keep its own code free of side effects
 * that must not repeat; finished sub-handlers are not called again.
 *
 * @throws {TypeError} outside change handlers, for an anonymous function without `id`, or for
 *   invalid options (as for top-level handlers; `old`/`new` only under update/field handlers).
 *
 * @example
 * ```ts
 * import * as kopf from "@kopf/kopf";
 * kopf.on.create("kopfexamples", function createFn({ spec }) {
 *   for (const item of (spec.items ?? []) as string[]) {
 *     kopf.subhandler({ id: item }, function createItem() {
 *       return item; // stored at status["createFn/<item>"]
 *     });
 *   }
 * });
 * ```
 */
export function subhandler(fn: ChangeFn): ChangeFn;
/** Registers `fn` with options as a sub-handler of the running change handler (see above). */
export function subhandler(options: SubhandlerOptions, fn: ChangeFn): ChangeFn;
export function subhandler(optionsOrFn: SubhandlerOptions | ChangeFn, maybeFn?: ChangeFn): ChangeFn {
  const scope = currentScope("kopf.subhandler()");
  return typeof optionsOrFn === "function" && maybeFn === undefined
    ? scope.subhandler(optionsOrFn)
    : scope.subhandler(optionsOrFn as SubhandlerOptions, maybeFn as ChangeFn);
}

/**
 * Registers `fn` as a sub-handler of the running change handler: {@linkcode subhandler} with the
 * function first (Kopf's `kopf.register(fn, id=...)`).
 *
 * @example
 * ```ts
 * import * as kopf from "@kopf/kopf";
 * kopf.on.create("kopfexamples", function createFn() {
 *   kopf.register(function first() { return 1; });
 *   kopf.register(() => 2, { id: "second" });
 * });
 * ```
 */
export function register(fn: ChangeFn, options: SubhandlerOptions = {}): ChangeFn {
  return currentScope("kopf.register()").subhandler(options, fn);
}

/**
 * Runs sub-handlers of the running change handler, within its attempt, and returns once all of
 * them have finished (succeeded, or failed for good). If some are unfinished (retrying, delayed,
 * or not picked by the lifecycle in this cycle), it throws an internal error that ends the
 * parent's attempt quietly: the parent is called again on the next cycle, and the code after the
 * `await` runs only once all sub-handlers are done.
 *
 * Without `fns` or `handlers`, it runs the sub-handlers registered with {@linkcode subhandler} or
 * {@linkcode register}. The parent's result is stored only once all sub-handlers are done.
 *
 * @throws {TypeError} outside change handlers (e.g. in `on.event` handlers), or for invalid options.
 *
 * @example
 * ```ts
 * import * as kopf from "@kopf/kopf";
 * kopf.on.create("kopfexamples", async function createFn({ logger }) {
 *   await kopf.execute({ fns: { a: () => "A", b: () => "B" } }); // status["createFn/a"] == "A"
 *   logger.info("Both sub-handlers have succeeded."); // logged once
 * });
 * ```
 */
export function execute(options: ExecuteOptions = {}): Promise<void> {
  let scope: SubhandlingScope;
  try {
    scope = currentScope("kopf.execute()");
  } catch (error) {
    return Promise.reject(error);
  }
  return scope.execute(options);
}
