/**
 * Running the change handlers of one cause in one cycle: picking the due ones by the lifecycle,
 * giving up those past their timeout or retries, calling them, and recording their outcomes —
 * results in `status[id]`, progress in the storage — all in the cycle's one patch.
 *
 * @module
 */

import type { JsonObject, KubernetesObject } from "../model/body.ts";
import { type Diff, reduceDiff, resolveField } from "../model/diff.ts";
import type { Patch, PatchValue } from "../model/patch.ts";
import type { Resource } from "../model/resource.ts";
import type { ObjectLogger } from "../logging/object_logger.ts";
import type { ProgressRecord } from "../state/progress.ts";
import type { ProgressStorage } from "../state/progress_storage.ts";
import type { Reason } from "./causes.ts";
import { type ChangeContext, type Memo, resourceContext } from "./context.ts";
import { HandlerRetriesError, HandlerTimeoutError, PermanentError, TemporaryError } from "./errors.ts";
import { runWithObject } from "./current_object.ts";
import type { ChangeHandler } from "./handlers.ts";
import type { Lifecycle } from "./lifecycles.ts";
import { formatTimestamp, normalizeTimestamp, parseTimestamp } from "../state/timestamps.ts";

/** What the handlers of a cause see and where their outcomes go. */
export interface CauseRun {
  reason: Reason;
  body: KubernetesObject;
  old: JsonObject | null;
  new: JsonObject;
  diff: Diff;
  patch: Patch;
  logger: ObjectLogger;
  memo: Memo;
  resource: Resource;
  storage: ProgressStorage;
  lifecycle: Lifecycle;
  defaultBackoff: number;
}

/** How far the handlers of a cause got in this cycle. */
export interface CauseOutcome {
  /** All handlers finished (succeeded, or failed permanently). */
  done: boolean;
  /** Seconds until the next handler is due, when not done (0: at once). */
  delay?: number;
  succeeded: number;
  failed: number;
}

interface Tracked {
  handler: ChangeHandler;
  id: string;
  record: ProgressRecord;
  retries: number;
}

/** Runs the due handlers of a cause and records everything in the patch. */
export async function runCause(handlers: readonly ChangeHandler[], run: CauseRun): Promise<CauseOutcome> {
  const now = Date.now();
  const tracked: Tracked[] = handlers.map((handler) => {
    const stored = run.storage.fetch(handler.id, run.body);
    // A record of another purpose belongs to a superseded cause: start afresh.
    const record = stored && stored.purpose === run.reason ? stored : {};
    return { handler, id: handler.id, record, retries: record.retries ?? 0 };
  });

  const finished = (t: Tracked) => t.record.success === true || t.record.failure === true;
  const dueAt = (t: Tracked) => (t.record.delayed ? parseTimestamp(t.record.delayed).getTime() : 0);
  const due = tracked.filter((t) => !finished(t) && dueAt(t) <= now);
  const picked = new Set(run.lifecycle(due));

  for (const t of tracked) {
    if (finished(t) || !picked.has(t)) {
      // Every handler of the cause gets a record on the first cycle, as Kopf does, so that a
      // restart sees which handlers were pending.
      if (!finished(t) && !t.record.purpose) {
        store(run, t, {
          started: formatTimestamp(new Date(now)),
          purpose: run.reason,
          retries: 0,
          success: false,
          failure: false,
        });
      }
      continue;
    }
    await attempt(t, run, now);
  }

  const succeeded = tracked.filter((t) => t.record.success).length;
  const failed = tracked.filter((t) => t.record.failure).length;
  const pending = tracked.filter((t) => !finished(t));
  if (pending.length === 0) return { done: true, succeeded, failed };
  const delay = Math.max(0, Math.min(...pending.map((t) => (dueAt(t) - Date.now()) / 1000)));
  return { done: false, delay, succeeded, failed };
}

/** One attempt of one handler, unless its timeout or retries are used up. */
async function attempt(t: Tracked, run: CauseRun, now: number): Promise<void> {
  const { handler, id } = t;
  const started = t.record.started ? parseTimestamp(t.record.started) : new Date(now);
  const base: ProgressRecord = {
    ...t.record,
    // The stored text is kept (a Date cannot hold Kopf's microseconds), in Kopf's normal form.
    started: t.record.started ? normalizeTimestamp(t.record.started) : formatTimestamp(started),
    purpose: run.reason,
    retries: t.retries + 1,
    success: false,
    failure: false,
  };
  delete base.delayed;
  delete base.message;

  const options = handler.options;
  const runtime = now - started.getTime();
  let error: unknown;
  let result: unknown;
  if (options.timeout !== undefined && runtime >= options.timeout * 1000) {
    error = new HandlerTimeoutError(`Handler '${id}' has timed out after ${(runtime / 1000).toFixed(1)} s.`);
  } else if (options.retries !== undefined && t.retries >= options.retries) {
    error = new HandlerRetriesError(`Handler '${id}' has exceeded ${options.retries} retries.`);
  } else {
    const field = handler.field;
    const context: ChangeContext = {
      ...resourceContext(run.body, { ...run, param: options.param }),
      reason: run.reason,
      retry: t.retries,
      started,
      runtime,
      old: (field ? resolveField(run.old, field) ?? null : run.old) as ChangeContext["old"],
      new: (field ? resolveField(run.new, field) ?? null : run.new) as ChangeContext["new"],
      diff: field ? reduceDiff(run.diff, field) : run.diff,
    };
    try {
      result = await runWithObject(run.body, () => handler.fn(context));
      if (result !== undefined && result !== null) storeResult(run.patch, id, result);
    } catch (caught) {
      error = caught;
    }
  }

  if (error === undefined) {
    run.logger.info(`Handler '${id}' succeeded.`);
    store(run, t, { ...base, success: true, stopped: formatTimestamp(new Date()) });
    return;
  }
  const message = error instanceof Error ? error.message : String(error);
  const mode = error instanceof TemporaryError
    ? "temporary"
    : error instanceof PermanentError
    ? "permanent"
    : options.errors ?? "temporary";
  if (mode === "temporary") {
    const delay = error instanceof TemporaryError ? error.delay : options.backoff ?? run.defaultBackoff;
    if (error instanceof TemporaryError) run.logger.error(`Handler '${id}' failed temporarily: ${message}`);
    else run.logger.exception(`Handler '${id}' failed with an exception. Will retry.`, error);
    const delayed = new Date(Date.now() + delay * 1000);
    // Give up now rather than sleep until an attempt that the timeout or retries would forbid.
    const outOfTime = options.timeout !== undefined && delayed.getTime() - started.getTime() >= options.timeout * 1000;
    const outOfRetries = options.retries !== undefined && t.retries + 1 >= options.retries;
    if (outOfTime || outOfRetries) {
      run.logger.error(
        outOfTime
          ? `Handler '${id}' has timed out after ${options.timeout} s.`
          : `Handler '${id}' has exceeded ${options.retries} retries.`,
      );
      store(run, t, { ...base, failure: true, message, stopped: formatTimestamp(new Date()) });
      return;
    }
    store(run, t, { ...base, delayed: formatTimestamp(delayed), message });
  } else if (mode === "permanent") {
    if (error instanceof PermanentError) run.logger.error(`Handler '${id}' failed permanently: ${message}`);
    else run.logger.exception(`Handler '${id}' failed with an exception. Will stop.`, error);
    store(run, t, { ...base, failure: true, message, stopped: formatTimestamp(new Date()) });
  } else {
    run.logger.exception(`Handler '${id}' failed with an exception. Will ignore.`, error);
    store(run, t, { ...base, success: true, stopped: formatTimestamp(new Date()) });
  }
}

function store(run: CauseRun, t: Tracked, record: ProgressRecord): void {
  t.record = record;
  t.retries = record.retries ?? 0;
  run.storage.store(t.id, record, run.body, run.patch);
}

/** Puts a handler's result at `status[id]`: mappings are merged into what is there, other values replace it. */
export function storeResult(patch: Patch, id: string, result: unknown): void {
  const value = JSON.parse(JSON.stringify(result)) as PatchValue;
  const existing = patch.status[id];
  if (isMapping(existing) && isMapping(value)) patch.status[id] = { ...existing, ...value };
  else patch.status[id] = value;
}

function isMapping(value: unknown): value is Record<string, PatchValue> {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}
