/**
 * Operator activities: handlers of the operator itself rather than of objects -- startup (before
 * anything touches the API), cleanup (after everything else has stopped) and probes (the
 * liveness endpoint) -- what they receive, and how they are run and retried.
 *
 * An activity runs all its handlers, in registration order, round after round: handlers that
 * fail temporarily are retried in a later round, when their delay has passed, until each has
 * succeeded or failed for good. Nothing is stored anywhere: retries live in memory only.
 *
 * @module
 */

import type { KubeApi } from "../api/kube_api.ts";
import { ActivityLogger } from "../logging/activity_logger.ts";
import type { HandlerLogger } from "../logging/object_logger.ts";
import type { Indices } from "../model/index_store.ts";
import type { Settings } from "../settings/settings.ts";
import { sleep } from "../utils/sleep.ts";
import { type ContextMemo, contextMemo, type Memo } from "./context.ts";
import { currentApi } from "./current_api.ts";
import { HandlerRetriesError, HandlerTimeoutError, PermanentError, TemporaryError } from "./errors.ts";
import type { RetryOptions } from "./handlers.ts";

/** The activities: `startup`, `cleanup`, `probe`, `login`. */
export type Activity = "startup" | "cleanup" | "probe" | "login";

/** What activity handlers (`on.startup`, `on.cleanup`, `on.probe`) receive. */
export interface ActivityContext {
  /** Which activity runs the handler. */
  readonly activity: Activity;
  /**
   * The operator's live settings. Startup handlers may change them: what starts afterwards (the
   * API client, the watch streams, the liveness endpoint, event posting) uses the new values.
   */
  readonly settings: Settings;
  /** The operator's memo (`operator({ memo })`); each object's memo starts as a shallow copy of it. */
  readonly memo: ContextMemo;
  /** The operator's in-memory indexes by id (`kopf.index`): they exist, empty, from the start. */
  readonly indices: Indices;
  /** A logger of the category `kopf.activities.<activity>`; its lines are never posted as Events. */
  readonly logger: HandlerLogger;
  /** The handler's `param` option. */
  readonly param: unknown;
  /** How many times the handler ran before in this activity (0 on the first attempt). */
  readonly retry: number;
  /** When the first attempt started. */
  readonly started: Date;
  /** Milliseconds since `started`. */
  readonly runtime: number;
  /**
   * The operator's API client. It connects after the startup and login handlers (they prepare the
   * credentials), so there it throws; cleanup and probe handlers use it as resource handlers do.
   */
  readonly api: KubeApi;
}

/** A function run by an activity; what it returns is its result (for probes: the liveness JSON). */
export type ActivityFn = (context: ActivityContext) => unknown;

/** Options of activity handlers. */
export interface ActivityHandlerOptions extends RetryOptions {
  /** The handler id; the function's name by default. Probe results are keyed by it. */
  id?: string;
  /** Any value, passed to the handler as `param`. */
  param?: unknown;
}

/** A registered activity handler (`on.startup`, `on.cleanup`, `on.probe`). */
export interface ActivityHandler {
  /** What kind of handler this is: the registry and the engines tell them apart by it. */
  readonly kind: "activity";
  /** The activity it serves. */
  readonly activity: Activity;
  /** The handler id: the key of its progress on the object and of its result in `status`. */
  readonly id: string;
  /** The function. */
  readonly fn: ActivityFn;
  /** The options as given (without `registry`). */
  readonly options: ActivityHandlerOptions;
}

/**
 * Some handlers of an activity failed for good (or were not finished when it had to stop);
 * `errors` holds each one's error by handler id. A failed startup stops the operator with it.
 *
 * @example
 * ```ts ignore
 * try {
 *   await kopf.operator({ clusterwide: true });
 * } catch (error) {
 *   if (error instanceof kopf.ActivityError) console.error([...error.errors.keys()]);
 * }
 * ```
 */
export class ActivityError extends Error {
  /** The activity that failed. */
  readonly activity: Activity;
  /** The errors of the failed handlers, by id. */
  readonly errors: ReadonlyMap<string, unknown>;

  /**
   * Makes the error with a message naming the failed handlers and their errors.
   *
   * @param activity the activity.
   * @param errors the failed handlers' errors, by id.
   */
  constructor(activity: Activity, errors: ReadonlyMap<string, unknown>) {
    const title = activity[0].toUpperCase() + activity.slice(1);
    const explain = (error: unknown) => error instanceof Error ? error.message : String(error);
    const failures = [...errors];
    super(
      failures.length === 1
        ? `${title} handler '${failures[0][0]}' failed: ${explain(failures[0][1])}`
        : `${title} handlers failed: ${failures.map(([id, error]) => `'${id}': ${explain(error)}`).join("; ")}`,
      { cause: failures[0]?.[1] },
    );
    this.name = "ActivityError";
    this.activity = activity;
    this.errors = errors;
  }
}

// A user may declare the indexes of their operator on `Indices` (declaration merging): none exist here.
const NO_INDICES: Indices = Object.freeze({}) as Indices;

/** How an activity runs. */
export interface ActivityRun {
  activity: Activity;
  settings: Settings;
  memo: Memo;
  /** The operator's indexes; none by default. */
  indices?: Indices;
  /** Stops the activity: no more attempts, no more waiting for a running handler. */
  signal?: AbortSignal;
  /**
   * Seconds the whole activity may take: a retry that would start later is not made (the
   * handler gives up at once), and a handler still running then is no longer waited for.
   */
  timeout?: number | null;
}

interface Tracked {
  handler: ActivityHandler;
  started?: Date;
  retries: number;
  dueAt: number;
  done: boolean;
  result?: unknown;
  error?: unknown;
}

/**
 * Runs the handlers of an activity until each has succeeded or failed for good, and returns
 * the results by handler id (handlers returning `undefined` or `null` are left out). Throws an
 * {@linkcode ActivityError} naming the failed handlers if any failed -- or were left unfinished
 * because the signal aborted or the activity's timeout passed.
 */
export async function runActivity(
  handlers: readonly ActivityHandler[],
  run: ActivityRun,
): Promise<Record<string, unknown>> {
  const logger = new ActivityLogger(run.activity);
  const deadline = run.timeout === undefined || run.timeout === null ? undefined : Date.now() + run.timeout * 1000;
  const expiry = new AbortController();
  const timer = deadline === undefined ? undefined : setTimeout(() => expiry.abort(), deadline - Date.now());
  const stop = run.signal ? AbortSignal.any([run.signal, expiry.signal]) : expiry.signal;
  const tracked: Tracked[] = handlers.map((handler) => ({ handler, retries: 0, dueAt: 0, done: false }));
  try {
    for (;;) {
      for (const t of tracked) {
        if (stop.aborted) break;
        if (t.done || t.dueAt > Date.now()) continue;
        await attempt(t, run, logger, stop, deadline);
      }
      const pending = tracked.filter((t) => !t.done);
      if (pending.length === 0 || stop.aborted) break;
      const delay = Math.min(...pending.map((t) => t.dueAt)) - Date.now();
      await sleep(delay / 1000, stop);
    }
  } finally {
    clearTimeout(timer);
  }

  const errors = new Map<string, unknown>();
  for (const t of tracked) {
    if (t.done && t.error === undefined) continue;
    const id = t.handler.id;
    if (!t.done) {
      const why = run.signal?.aborted
        ? "the operator is stopping"
        : `the ${run.activity} activity has run out of time (${run.timeout} s)`;
      logger.error(`Activity '${id}' is abandoned unfinished: ${why}.`);
      errors.set(id, new HandlerTimeoutError(`Activity '${id}' is abandoned unfinished: ${why}.`));
    } else {
      errors.set(id, t.error);
    }
  }
  if (errors.size) throw new ActivityError(run.activity, errors);
  const results: Record<string, unknown> = {};
  for (const t of tracked) if (t.result !== undefined && t.result !== null) results[t.handler.id] = t.result;
  return results;
}

/** One attempt of one handler, unless its timeout or retries are used up; updates its tracking. */
async function attempt(
  t: Tracked,
  run: ActivityRun,
  logger: ActivityLogger,
  stop: AbortSignal,
  deadline: number | undefined,
): Promise<void> {
  const { handler } = t;
  const { id, options } = handler;
  const now = Date.now();
  const started = t.started ??= new Date(now);
  const runtime = now - started.getTime();
  let error: unknown;
  let result: unknown;
  if (options.timeout !== undefined && runtime >= options.timeout * 1000) {
    error = new HandlerTimeoutError(`Activity '${id}' has timed out after ${(runtime / 1000).toFixed(1)} s.`);
  } else if (options.retries !== undefined && t.retries >= options.retries) {
    error = new HandlerRetriesError(`Activity '${id}' has exceeded ${options.retries} retries.`);
  } else {
    const context: ActivityContext = {
      activity: run.activity,
      settings: run.settings,
      memo: contextMemo(run.memo),
      indices: run.indices ?? NO_INDICES,
      logger,
      param: options.param,
      retry: t.retries,
      started,
      runtime,
      api: currentApi(),
    };
    try {
      const outcome = await untilAborted(Promise.resolve().then(() => handler.fn(context)), stop);
      if (outcome.aborted) return; // Left unfinished: reported as abandoned.
      result = outcome.value;
    } catch (caught) {
      error = caught;
    }
  }
  t.retries++;

  if (error === undefined) {
    logger.info(`Activity '${id}' succeeded.`);
    Object.assign(t, { done: true, result });
    return;
  }
  judgeActivityFailure(t, error, run, logger, deadline);
}

/** Decides what a failed attempt means: done for good (permanent, ignored, out of time) or due again later. */
function judgeActivityFailure(
  t: Tracked,
  error: unknown,
  run: ActivityRun,
  logger: ActivityLogger,
  deadline: number | undefined,
): void {
  const { id, options } = t.handler;
  const started = t.started!;
  const message = error instanceof Error ? error.message : String(error);
  if (error instanceof PermanentError) {
    // Also the handler's own timeout and retries, checked before the attempt.
    logger.error(`Activity '${id}' failed permanently: ${message}`);
    Object.assign(t, { done: true, error });
    return;
  }
  const mode = error instanceof TemporaryError ? "temporary" : options.errors ?? "temporary";
  if (mode === "ignored") {
    logger.exception(`Activity '${id}' failed with an exception. Will ignore.`, error);
    Object.assign(t, { done: true });
    return;
  }
  if (mode === "permanent") {
    logger.exception(`Activity '${id}' failed with an exception. Will stop.`, error);
    Object.assign(t, { done: true, error });
    return;
  }
  const delay = error instanceof TemporaryError
    ? error.delay
    : options.backoff ?? run.settings.execution.defaultBackoff;
  const next = Date.now() + delay * 1000;
  // Give up now rather than wait for an attempt that a timeout or the retries would forbid.
  const outOfTime = options.timeout !== undefined && next - started.getTime() >= options.timeout * 1000;
  const outOfRetries = options.retries !== undefined && t.retries >= options.retries;
  const outOfActivity = deadline !== undefined && next >= deadline;
  if (outOfTime || outOfRetries || outOfActivity) {
    const why = outOfTime
      ? `it would time out after ${options.timeout} s`
      : outOfRetries
      ? `it would exceed ${options.retries} retries`
      : `the ${run.activity} activity would run out of time (${run.timeout} s)`;
    const final = `Activity '${id}' failed and will stop now (${why}): ${message}`;
    if (error instanceof TemporaryError) logger.error(final);
    else logger.exception(final, error);
    const ending = outOfRetries && !outOfTime ? new HandlerRetriesError(final) : new HandlerTimeoutError(final);
    Object.assign(t, { done: true, error: ending });
    return;
  }
  if (error instanceof TemporaryError) logger.error(`Activity '${id}' failed temporarily: ${message}`);
  else logger.exception(`Activity '${id}' failed with an exception. Will retry in ${delay} s.`, error);
  t.dueAt = next;
}

/** Waits for a promise unless the signal aborts first (the promise itself cannot be stopped). */
function untilAborted<T>(
  promise: Promise<T>,
  signal: AbortSignal,
): Promise<{ aborted: true } | { aborted: false; value: T }> {
  if (signal.aborted) return Promise.resolve({ aborted: true });
  let onAbort = () => {};
  const aborted = new Promise<{ aborted: true }>((resolve) => {
    onAbort = () => resolve({ aborted: true });
    signal.addEventListener("abort", onAbort, { once: true });
  });
  return Promise.race([promise.then((value) => ({ aborted: false as const, value })), aborted]).finally(() =>
    signal.removeEventListener("abort", onAbort)
  );
}
