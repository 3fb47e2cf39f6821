/**
 * A change handler's progress as a cause's cycle tracks and records it: what the cycle knows of the
 * handler (`Tracked`), what one attempt knows before its call, the limits that end it without a
 * call, what a failed attempt means, and its progress record in the patch -- a success's kept
 * aside until something reads it (`execution.ts` says when), or written early by a checkpoint.
 *
 * @module
 */

import type { ProgressRecord } from "../state/progress.ts";
import { formatTimestamp } from "../state/timestamps.ts";
import { recordHandlerRun } from "../observability/metrics.ts";
import { HandlerRetriesError, HandlerTimeoutError } from "./errors.ts";
import { judgeFailure } from "./failures.ts";
import type { ChangeHandler } from "./handlers.ts";
import type { CauseRun } from "./cause_run.ts";

/** A handler of a cause as this cycle knows it: its record (what decides whether it is finished) and retries. */
export interface Tracked {
  handler: ChangeHandler;
  id: string;
  record: ProgressRecord;
  retries: number;
  /**
   * A success's times, until its record is stored (`started` and `stopped` are left out of the record until then):
   * formatted only if something reads the record, which a cause finished in one cycle never does.
   */
  succeeded?: { readonly started: Date; readonly stopped: Date };
}

/** What one attempt knows before it calls the handler. */
export interface AttemptPlan {
  readonly options: ChangeHandler["options"];
  /** When the handler's first attempt started (its deadline counts from it). */
  readonly started: Date;
  /** Milliseconds since then. */
  readonly runtime: number;
  /** The ids of all descendants: those known from earlier cycles and those met in this attempt. */
  readonly subrefs: Set<string>;
}

/** How a call ended: its result, or what it threw. */
export interface CallOutcome {
  readonly result?: unknown;
  readonly error?: unknown;
}

/** The error that ends a handler without calling it again: its timeout or its retries are used up. */
export function exhausted(t: Tracked, { options, runtime }: AttemptPlan): CallOutcome | undefined {
  if (options.timeout !== undefined && runtime >= options.timeout * 1000) {
    const seconds = (runtime / 1000).toFixed(1);
    return { error: new HandlerTimeoutError(`Handler '${t.id}' has timed out after ${seconds} s.`) };
  }
  if (options.retries !== undefined && t.retries >= options.retries) {
    return { error: new HandlerRetriesError(`Handler '${t.id}' has exceeded ${options.retries} retries.`) };
  }
  return undefined;
}

/** Records a failed attempt: a retry when due, a failure for good, or a success when errors are ignored. */
export function recordFailure(
  t: Tracked,
  run: CauseRun,
  plan: AttemptPlan,
  base: ProgressRecord,
  error: unknown,
  seconds: number,
): void {
  const { id } = t;
  const verdict = judgeFailure(error, {
    label: `Handler '${id}'`,
    options: plan.options,
    logger: run.logger,
    defaultBackoff: run.defaultBackoff,
    retries: t.retries,
    elapsed: Date.now() - plan.started.getTime(),
  });
  const kind = verdict.kind === "retry"
    ? "temporary"
    : error instanceof HandlerTimeoutError || (verdict.kind === "failed" && verdict.timedOut)
    ? "timeout"
    : "permanent";
  recordHandlerRun(id, run.resource.plural, run.reason, kind, t.retries, seconds);
  const stopped = formatTimestamp(new Date());
  if (verdict.kind === "retry") {
    const delayed = formatTimestamp(new Date(Date.now() + verdict.delay * 1000));
    store(run, t, { ...base, delayed, message: verdict.message });
  } else if (verdict.kind === "failed") {
    store(run, t, { ...base, failure: true, message: verdict.message, stopped });
  } else {
    store(run, t, { ...base, success: true, stopped });
  }
}

/**
 * Sends a copy of what the cycle has recorded so far if the attempt about to start is still running when the
 * checkpoint is due (the cause run has one).
 */
export function armCheckpoint(run: CauseRun, unstored: Tracked[]): ReturnType<typeof setTimeout> | undefined {
  const checkpoint = run.checkpoint!;
  // A checkpoint writes the successes so far: a crash then re-runs only the handler still running.
  if (unstored.length) storeAll(run, unstored);
  if (run.patch.empty) return undefined;
  const sofar = run.patch.clone();
  const due = checkpoint.at;
  return setTimeout(() => checkpoint.send(sofar, due), Math.max(0, due - Date.now()));
}

/** Records a handler's progress: in the patch, and as this cycle knows it. */
export function store(run: CauseRun, t: Tracked, record: ProgressRecord): void {
  remember(t, record);
  run.storage.store(t.id, record, run.body, run.patch);
}

/** The handler's record as this cycle knows it: what decides whether it is finished. */
function remember(t: Tracked, record: ProgressRecord): void {
  t.record = record;
  t.retries = record.retries ?? 0;
}

/** A record's `started` as stored: the text it has (from an earlier attempt), else the first attempt's start. */
export function startedText(record: ProgressRecord, started: Date): string {
  return record.started ?? formatTimestamp(started);
}

/** Puts the records kept aside into the patch, with their times. */
export function storeAll(run: CauseRun, unstored: Tracked[]): void {
  for (const t of unstored) {
    if (t.succeeded) {
      const { started, stopped } = t.succeeded;
      t.record = {
        ...t.record,
        started: startedText(t.record, started),
        stopped: formatTimestamp(stopped),
      };
      t.succeeded = undefined;
    }
    run.storage.store(t.id, t.record, run.body, run.patch);
  }
  unstored.length = 0;
}
