/**
 * Running change handlers for a cause: every due handler in one cycle, their results and
 * progress written into the cycle's one patch, and the diff-base stored once all are finished.
 *
 * @module
 */

import type { JsonObject, KubernetesObject } from "../model/body.ts";
import { essenceOf, serializeEssence } from "../model/essence.ts";
import type { Patch, PatchValue } from "../model/patch.ts";
import type { Resource } from "../model/resource.ts";
import type { ObjectLogger } from "../logging/object_logger.ts";
import type { Settings } from "../settings/settings.ts";
import { type ChangeContext, type Memo, resourceContext } from "./context.ts";
import { PermanentError, TemporaryError } from "./errors.ts";
import type { ChangeHandler } from "./handlers.ts";
import { isoTimestamp, type ProgressRecord, purgeProgress, readProgress, writeProgress } from "./progress.ts";

/** The annotation (below the persistence prefix) that holds the diff-base. */
export const DIFFBASE_NAME = "last-handled-configuration";

/** What a cycle of change handling left to do. */
export interface ChangeOutcome {
  /** Seconds until the earliest delayed handler is due; `undefined` when nothing waits. */
  delay?: number;
}

/** The stored diff-base of an object, or `null` if it was never handled. */
export function readDiffBase(body: KubernetesObject, settings: Settings): JsonObject | null {
  const raw = body.metadata.annotations?.[`${settings.persistence.prefix}/${DIFFBASE_NAME}`];
  if (!raw) return null;
  try {
    return JSON.parse(raw) as JsonObject;
  } catch {
    return null;
  }
}

/**
 * Handles the creation of an object: runs the create handlers that are due, records results and
 * progress in the patch, and when all are finished, stores the diff-base and purges the progress.
 */
export async function handleCreation(
  handlers: readonly ChangeHandler[],
  body: KubernetesObject,
  extra: { patch: Patch; logger: ObjectLogger; memo: Memo; resource: Resource; settings: Settings },
): Promise<ChangeOutcome> {
  const { patch, logger, settings } = extra;
  const prefix = settings.persistence.prefix;
  const now = new Date();
  const essence = essenceOf(body);
  let succeeded = 0;
  let failed = 0;
  let delay: number | undefined;

  for (const handler of handlers) {
    const record: ProgressRecord = readProgress(body, prefix, handler.id);
    if (record.success) {
      succeeded++;
      continue;
    }
    if (record.failure) {
      failed++;
      continue;
    }
    const due = record.delayed ? Date.parse(record.delayed) : NaN;
    if (due > now.getTime()) {
      delay = Math.min(delay ?? Infinity, (due - now.getTime()) / 1000);
      continue;
    }

    const started = record.started ? new Date(record.started) : now;
    const retry = record.retries ?? 0;
    const context: ChangeContext = {
      ...resourceContext(body, { ...extra, param: handler.options.param }),
      reason: "create",
      retry,
      started,
      runtime: now.getTime() - started.getTime(),
      old: null,
      new: essence,
      diff: Object.entries(essence).map(([key, value]) => ["add", [key], null, value] as const),
    };
    const next: ProgressRecord = { ...record, started: isoTimestamp(started), purpose: "create", retries: retry + 1 };
    delete next.delayed;
    try {
      const result = await handler.fn(context);
      if (result !== undefined && result !== null) storeResult(patch, handler.id, result);
      logger.info(`Handler '${handler.id}' succeeded.`);
      Object.assign(next, { success: true, failure: false, stopped: isoTimestamp(new Date()) });
      succeeded++;
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      const mode = error instanceof TemporaryError
        ? "temporary"
        : error instanceof PermanentError
        ? "permanent"
        : handler.options.errors ?? "temporary";
      if (mode === "temporary") {
        const seconds = error instanceof TemporaryError
          ? error.delay
          : handler.options.backoff ?? settings.execution.defaultBackoff;
        if (error instanceof TemporaryError) logger.error(`Handler '${handler.id}' failed temporarily: ${message}`);
        else logger.exception(`Handler '${handler.id}' failed with an exception. Will retry.`, error);
        Object.assign(next, {
          success: false,
          failure: false,
          message,
          delayed: isoTimestamp(new Date(Date.now() + seconds * 1000)),
        });
        delay = Math.min(delay ?? Infinity, seconds);
      } else if (mode === "permanent") {
        if (error instanceof PermanentError) logger.error(`Handler '${handler.id}' failed permanently: ${message}`);
        else logger.exception(`Handler '${handler.id}' failed with an exception. Will stop.`, error);
        Object.assign(next, { success: false, failure: true, message, stopped: isoTimestamp(new Date()) });
        failed++;
      } else {
        logger.exception(`Handler '${handler.id}' failed with an exception. Will ignore.`, error);
        Object.assign(next, { success: true, failure: false, stopped: isoTimestamp(new Date()) });
        succeeded++;
      }
    }
    writeProgress(patch, prefix, handler.id, next);
  }

  if (delay !== undefined) return { delay };
  for (const handler of handlers) purgeProgress(patch, body, prefix, handler.id);
  patch.metadata.annotations[`${prefix}/${DIFFBASE_NAME}`] = serializeEssence(essence);
  logger.info(`Creation is processed: ${succeeded} succeeded; ${failed} failed.`);
  return {};
}

/** Puts a handler's result at `status[id]`: mappings are merged into what is there, other values replace it. */
function storeResult(patch: Patch, id: string, result: unknown): void {
  const value = JSON.parse(JSON.stringify(result)) as PatchValue;
  const existing = patch.status[id];
  if (isMapping(existing) && isMapping(value)) patch.status[id] = { ...existing, ...value };
  else patch.status[id] = value;
}

function isMapping(value: unknown): value is Record<string, PatchValue> {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}
