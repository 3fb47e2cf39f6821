/**
 * Running the change handlers of one cause in one cycle: picking the due ones by the lifecycle,
 * giving up those past their timeout or retries, calling them, and recording their outcomes --
 * results in `status[id]`, progress in the storage -- all in the cycle's one patch.
 *
 * Sub-handlers run the same way, one level down, within their parent's attempt: a parent with
 * unfinished children stays unfinished (retried when the earliest child is due), its `subrefs`
 * collect the ids of all its descendants, and its result is stored once all of them are done.
 *
 * A success's progress record goes into the patch only if something will read it: a checkpoint
 * (before the next attempt), or the next cycle (when the cause is left unfinished). A cause
 * finished in one cycle has its records purged at its end, so storing them first was work for
 * nothing (1-2% of a creation's CPU at a LocalCluster's pace, docs/performance/cpu.md, "What the
 * target would take, counted"). The records' own bookkeeping -- kept aside, stored, judged after a
 * failure -- is in `handler_progress.ts`.
 *
 * @module
 */

import { type Diff, reduceDiff, resolveField } from "../model/diff.ts";
import type { ProgressRecord } from "../state/progress.ts";
import { type ResourceContext, resourceContext } from "./context.ts";
import { runWithDeadline } from "./deadlines.ts";
import { type LinkedSignal, linkSignals } from "../utils/signals.ts";
import { HandlerTimeoutError } from "./errors.ts";
import { runWithObject } from "./current_object.ts";
import { type FilterContext, matchesFilters, matchModeOf } from "./filters.ts";
import type { ChangeContext, ChangeHandler } from "./handlers.ts";
import { allAtOnce, type Lifecycle } from "./lifecycles.ts";
import { type ChildrenOutcome, HandlerChildrenRetry, SubhandlingScope } from "./subhandlers.ts";
import { formatTimestamp, normalizeTimestamp, parseTimestamp } from "../state/timestamps.ts";
import { recordHandlerRun } from "../observability/metrics.ts";
import { traceHandler, tracingEnabled } from "../observability/tracing.ts";
import type { CauseOutcome, CauseRun } from "./cause_run.ts";
import { storeResult } from "./results.ts";
import {
  armCheckpoint,
  type AttemptPlan,
  type CallOutcome,
  exhausted,
  recordFailure,
  startedText,
  store,
  storeAll,
  type Tracked,
} from "./handler_progress.ts";

/** What a handler sees of the change: the cause's old/new/diff, narrowed to its field (and its parents'). */
interface View {
  readonly old: unknown;
  readonly new: unknown;
  readonly diff: Diff;
}

/** One level of handlers: the top-level handlers of a cause, or the children of one parent. */
interface Level {
  /** The view that this level's handlers are matched against and narrowed from. */
  readonly view: View;
  readonly lifecycle: Lifecycle;
  /** The kind of the top-level ancestor (`create`, `update`, `field`, ...); none at the top. */
  readonly kind?: string;
  /** The `subrefs` of every ancestor, each collecting the ids of all its descendants. */
  readonly ancestors: readonly Set<string>[];
  /** Successes of the whole cause (all levels) whose records are not in the patch yet. */
  readonly unstored: Tracked[];
}

/** Runs the due handlers of a cause and records everything in the patch. */
export async function runCause(handlers: readonly ChangeHandler[], run: CauseRun): Promise<CauseOutcome> {
  const view = { old: run.old, new: run.new, diff: run.diff };
  const unstored: Tracked[] = [];
  const { tracked, done, delay } = await runLevel(handlers, run, {
    view,
    lifecycle: run.lifecycle,
    ancestors: [],
    unstored,
  });
  // Left unfinished: the next cycle must find which handlers have succeeded.
  if (!done) storeAll(run, unstored);
  // One pass: this runs once per handled cause, nearly always without sub-handlers.
  let succeeded = 0;
  let failed = 0;
  let found: Set<string> | undefined;
  for (const { record } of tracked) {
    if (record.success) succeeded++;
    if (record.failure) failed++;
    if (record.subrefs?.length) { for (const id of record.subrefs) (found ??= new Set()).add(id); }
  }
  const subrefs = found ? [...found].sort() : [];
  return done ? { done, succeeded, failed, subrefs } : { done, delay, succeeded, failed, subrefs };
}

/** Runs the due handlers of one level; says whether all are finished, and when the next one is due. */
async function runLevel(
  handlers: readonly ChangeHandler[],
  run: CauseRun,
  level: Level,
): Promise<{ tracked: Tracked[]; done: boolean; delay: number }> {
  const now = Date.now();
  // Plain loops, not callbacks: each callback is one more function that every cycle's handlers run through.
  const tracked: Tracked[] = [];
  const due: Tracked[] = [];
  for (const handler of handlers) {
    const stored = run.storage.fetch(handler.id, run.body);
    // A record of another purpose belongs to a superseded cause: start afresh, but keep the ids of
    // its sub-handlers (as Kopf does), so that their records are purged with this cause's.
    const record = stored && stored.purpose === run.reason
      ? stored
      : stored?.subrefs?.length
      ? { subrefs: stored.subrefs }
      : {};
    const t: Tracked = { handler, id: handler.id, record, retries: record.retries ?? 0 };
    tracked.push(t);
    // Finished: succeeded or failed for good. Tested inline: three times per handler per cycle.
    if (record.success !== true && record.failure !== true && (!record.delayed || dueAt(t) <= now)) due.push(t);
  }
  // The default lifecycle picks every due handler: asked only of another one (a call less per cycle).
  const picked = new Set(level.lifecycle === allAtOnce ? due : level.lifecycle(due));

  for (const t of tracked) {
    const finished = t.record.success === true || t.record.failure === true;
    if (finished || !picked.has(t)) {
      // Every handler of the cause gets a record on the first cycle, as Kopf does, so that a
      // restart sees which handlers were pending.
      if (!finished && !t.record.purpose) {
        store(run, t, {
          started: formatTimestamp(new Date(now)),
          purpose: run.reason,
          retries: 0,
          success: false,
          failure: false,
          ...(t.record.subrefs?.length ? { subrefs: t.record.subrefs } : {}),
        });
      }
      continue;
    }
    await attempt(t, run, level);
  }

  let earliest = Infinity;
  for (const t of tracked) {
    if (t.record.success !== true && t.record.failure !== true) earliest = Math.min(earliest, dueAt(t));
  }
  if (earliest === Infinity) return { tracked, done: true, delay: 0 };
  return { tracked, done: false, delay: Math.max(0, (earliest - Date.now()) / 1000) };
}

/** When a handler is due next (ms since the epoch; 0: at once). */
function dueAt(t: Tracked): number {
  return t.record.delayed ? parseTimestamp(t.record.delayed).getTime() : 0;
}

/**
 * Runs the children of one parent within its attempt: those whose filters match (in the mode of
 * the top-level ancestor, against the parent's view), each id once. Their ids go into the
 * `subrefs` of every ancestor -- also those of children filtered out but holding a record.
 */
async function runChildren(children: readonly ChangeHandler[], run: CauseRun, level: Level): Promise<ChildrenOutcome> {
  const mode = matchModeOf(level.kind ?? "create");
  const { view } = level;
  const context = (): FilterContext => ({
    ...objectContext(run, undefined),
    reason: run.reason,
    old: view.old,
    new: view.new,
    diff: view.diff,
  });
  const input = { body: run.body, old: view.old, new: view.new, context };
  const selected = new Map<string, ChangeHandler>();
  for (const child of children) {
    if (!selected.has(child.id) && matchesFilters(child.options, mode, input)) selected.set(child.id, child);
  }
  const ids = new Set(selected.keys());
  for (const child of children) if (!ids.has(child.id) && run.storage.fetch(child.id, run.body)) ids.add(child.id);
  for (const ancestor of level.ancestors) for (const id of ids) ancestor.add(id);
  const { done, delay } = await runLevel([...selected.values()], run, level);
  return { done, delay };
}

/** The parts that a handler's context and its filters' context share: the object's and the cause run's. */
function objectContext(run: CauseRun, param: unknown): ResourceContext {
  const { patch, logger, memo, indices, resource } = run;
  return resourceContext(run.body, { patch, logger, memo, indices, resource, param });
}

/** The view narrowed to a handler's field. */
function narrow(view: View, field: readonly string[]): View {
  return {
    old: resolveField(view.old, field) ?? null,
    new: resolveField(view.new, field) ?? null,
    diff: reduceDiff(view.diff, field),
  };
}

/**
 * One attempt of one handler, unless its timeout or retries are used up. Its outcome is recorded in
 * the patch (progress, result) and in the metrics, and logged; a success's record is kept aside
 * (`level.unstored`) until something reads it.
 */
async function attempt(t: Tracked, run: CauseRun, level: Level): Promise<void> {
  // A first attempt's deadline counts from its actual start, not from the start of the cycle.
  const now = Date.now();
  const started = t.record.started ? parseTimestamp(t.record.started) : new Date(now);
  const timeout = t.handler.options.timeout ?? run.handlerTimeout ?? undefined;
  const plan: AttemptPlan = {
    options: { ...t.handler.options, timeout },
    started,
    runtime: now - started.getTime(),
    subrefs: new Set<string>(t.record.subrefs ?? []),
  };
  const began = performance.now();
  // Most handlers have neither a timeout nor retries: nothing can be used up then.
  const limited = plan.options.timeout !== undefined || plan.options.retries !== undefined;
  const outcome = (limited ? exhausted(t, plan) : undefined) ?? await call(t, run, level, plan);
  const seconds = (performance.now() - began) / 1000;

  // The outcome recorded here, not by a function of its own: once per handler of every cycle.
  const { id } = t;
  let { error } = outcome;
  // `delayed` and `message` cleared by `undefined` (as absent to the storages), not deleted: a
  // deletion turns the record into a dictionary that V8 handles slowly from then on.
  const base: ProgressRecord = {
    ...t.record,
    // The stored text is kept (a Date cannot hold Kopf's microseconds), in Kopf's normal form.
    started: t.record.started ? normalizeTimestamp(t.record.started) : undefined,
    purpose: run.reason,
    retries: t.retries + 1,
    success: false,
    failure: false,
    delayed: undefined,
    message: undefined,
  };
  if (plan.subrefs.size) base.subrefs = [...plan.subrefs].sort();

  if (run.signal?.aborted && !(error instanceof HandlerTimeoutError)) {
    // Whatever the handler did once its signal aborted is not an outcome: nothing is written while
    // the stream stops, and the attempt is made again when the object is handled next.
    const reason = run.signal.reason instanceof Error ? run.signal.reason.message : String(run.signal.reason);
    run.logger.info(`Handler '${id}' was interrupted: ${reason}. It will run again when the object is handled next.`);
    return;
  }
  // Asked only of an error: `instanceof` a class shared across the library's copies runs its own check
  // (`shareInstances()`), a call per success otherwise.
  if (error !== undefined && error instanceof HandlerChildrenRetry) {
    // Not a failure: the parent waits for its children, and is called again when one is due.
    run.logger.debug(`Handler '${id}' has unfinished sub-handlers. Will retry soon.`);
    const delayed = formatTimestamp(new Date(Date.now() + error.delay * 1000));
    store(run, t, { ...base, started: startedText(base, plan.started), delayed });
    return;
  }
  if (error === undefined && outcome.result !== undefined && outcome.result !== null) {
    // Delivered only now: a parent's result waits until all its children are done.
    try {
      storeResult(run.patch, id, outcome.result);
    } catch (caught) {
      error = caught; // e.g. a result that is not JSON
    }
  }
  if (error === undefined) {
    recordHandlerRun(id, run.resource.plural, run.reason, "success", t.retries, seconds);
    run.logger.info(`Handler '${id}' succeeded.`);
    // What `remember()` does, without its call: this is every success's path.
    t.record = { ...base, success: true };
    t.retries = t.retries + 1;
    t.succeeded = { started: plan.started, stopped: new Date() };
    level.unstored.push(t);
    return;
  }
  recordFailure(t, run, plan, { ...base, started: startedText(base, plan.started) }, error, seconds);
}

/** Calls the handler within its deadline, its span and its sub-handlers' scope. */
async function call(t: Tracked, run: CauseRun, level: Level, plan: AttemptPlan): Promise<CallOutcome> {
  const { handler } = t;
  const { options, started, runtime } = plan;
  const view = handler.field ? narrow(level.view, handler.field) : level.view;
  // Sub-handlers are checked and matched as handlers of their top-level ancestor's kind; their
  // level is made only for a handler that has some.
  const kind = level.kind ?? handler.reason ?? "field";
  const scope = new SubhandlingScope(
    handler,
    kind,
    level.lifecycle,
    (found, lifecycle) =>
      runChildren(found, run, {
        view,
        lifecycle,
        kind,
        ancestors: [...level.ancestors, plan.subrefs],
        unstored: level.unstored,
      }),
  );
  // Armed only where it would have something to write: not before a cycle's first handler (nearly always).
  const checkpoint = run.checkpoint && (level.unstored.length || !run.patch.empty)
    ? armCheckpoint(run, level.unstored)
    : undefined;
  // The handler's signal follows the operator's alone, linked when first read (most handlers never
  // read it) and detached once the attempt is over; an attempt with a deadline puts its own maker in.
  let linked: LinkedSignal | undefined;
  let ended = false;
  const { patch, logger, memo, indices, resource } = run;
  // The signal's getter added here, not by a helper: each function an object's path runs costs at a
  // LocalCluster's pace (docs/performance/cpu.md, "Fewer functions, a second pass").
  const context = Object.defineProperty(
    {
      ...resourceContext(run.body, { patch, logger, memo, indices, resource, param: options.param }),
      reason: run.reason,
      retry: t.retries,
      started,
      runtime,
      old: view.old,
      new: view.new,
      diff: view.diff,
      subhandler: scope.subhandler,
      execute: scope.execute,
      [SIGNAL_MAKER]: () =>
        ended ? linked?.signal ?? new AbortController().signal : (linked ??= linkSignals(run.signal)).signal,
    },
    "signal",
    SIGNAL,
  ) as unknown as SignalledContext;
  const { timeout } = options;
  try {
    // The common case -- no deadline, no span -- without wrappers: the handler called in the object's
    // frame, its children (if it left them to run) after it.
    if (timeout === undefined && !tracingEnabled) {
      const result = await runWithObject(run.body, handler.fn, scope, context);
      if (scope.unsettled) await scope.finish();
      return { result };
    }
    return { result: await callWrapped(t, run, plan, scope, context) };
  } catch (error) {
    return { error };
  } finally {
    ended = true;
    linked?.[Symbol.dispose]();
    if (checkpoint !== undefined) clearTimeout(checkpoint);
    scope.closed = true;
  }
}

/** A change context, with what makes its signal (replaced by a deadline's). */
type SignalledContext = ChangeContext & { [SIGNAL_MAKER]: () => AbortSignal };

/** {@linkcode call}'s less common cases: the handler within its deadline, its span, or both. */
function callWrapped(
  t: Tracked,
  run: CauseRun,
  plan: AttemptPlan,
  scope: SubhandlingScope,
  context: SignalledContext,
): Promise<unknown> {
  const { handler, id } = t;
  // The children run within the handler's deadline and span, as its own work.
  const work = () =>
    runWithObject(run.body, async () => {
      const returned = tracingEnabled
        ? await traceHandler(
          id,
          run.resource.plural,
          run.body,
          run.reason,
          t.retries,
          async () => await handler.fn(context),
          (thrown) => thrown instanceof HandlerChildrenRetry,
        )
        : await handler.fn(context);
      if (scope.unsettled) await scope.finish();
      return returned;
    }, scope);
  const { timeout } = plan.options;
  if (timeout === undefined) return work();
  const deadline = plan.started.getTime() + timeout * 1000;
  const limits = { label: `Handler '${id}'`, deadline, timeout, signal: run.signal, logger: run.logger };
  return runWithDeadline((signal) => {
    context[SIGNAL_MAKER] = signal;
    return work();
  }, limits);
}

/** Where a change context keeps what makes its signal, for the getter that all contexts share. */
const SIGNAL_MAKER = Symbol("signal maker");

/**
 * The contexts' `signal`, made when a handler first reads it (most never do). One getter for all: a
 * getter written in each context's literal is a new function per context, which gives every
 * context a hidden class of its own, turned into a dictionary (2 KiB, and more than twice the time to make).
 */
const SIGNAL: PropertyDescriptor = {
  get(this: { [SIGNAL_MAKER]: () => AbortSignal }): AbortSignal {
    return this[SIGNAL_MAKER]();
  },
  enumerable: true,
  configurable: true,
};
