/**
 * One processing cycle of one object: event handlers; then the finalizer decision; then, once the
 * operator's own last patch has been seen, the change handlers of the cause; then one patch for
 * everything the cycle changed (plus a guarded JSON-patch when the finalizer changes).
 *
 * @module
 */

import { getLogger } from "@logtape/logtape";
import type { ApiClient } from "../api/client.ts";
import { ApiUnprocessableError } from "../api/errors.ts";
import { applyMergePatch, changeFinalizers } from "../api/patching.ts";
import type { KubernetesObject } from "../model/body.ts";
import { diff as diffOf } from "../model/diff.ts";
import { patchInconsistencies } from "../model/inconsistencies.ts";
import type { Indices } from "../model/index_store.ts";
import { Patch } from "../model/patch.ts";
import type { Resource } from "../model/resource.ts";
import { ObjectLogger, objectRef } from "../logging/object_logger.ts";
import { detectCause, type Reason, REASON_TITLES } from "../handling/causes.ts";
import { type Memo, resourceContext } from "../handling/context.ts";
import { runEventHandlers } from "../handling/event_handling.ts";
import { runCause } from "../handling/execution.ts";
import type { FilterContext } from "../handling/filters.ts";
import type { BackgroundHandler, ChangeHandler, EventHandler } from "../handling/handlers.ts";
import type { Lifecycle } from "../handling/lifecycles.ts";
import {
  anyPrematches,
  backgroundHandlersFor,
  type ChangeMatch,
  eventHandlersFor,
  handlersForCause,
  needsFinalizer,
} from "../handling/selection.ts";
import type { ObjectBackground } from "../engines/background.ts";
import { title } from "../engines/background_attempt.ts";
import type { Settings } from "../settings/settings.ts";
import type { ProgressRecord } from "../state/progress.ts";
import type { ProgressStorage } from "../state/progress_storage.ts";
import { resolveDiffBase } from "../state/essence_digest.ts";
import { maskDiff, maskSensitive, type SensitiveFields } from "../state/sensitive.ts";
import { CycleCheckpoints } from "./checkpoints.ts";

const objectsLogger = getLogger(["kopf", "objects"]);

/** What the operator remembers about one object between its events. */
export interface ObjectMemory {
  /** The handlers' per-object memo. */
  memo: Memo;
  /** The object was first seen by the initial listing (so it may be resumed). */
  noticedByListing: boolean;
  /** A cycle has finished all handlers of a cause for it in this process (no resuming after that). */
  fullyHandledOnce: boolean;
  /** The resourceVersion of the operator's own last patch, until the watch has delivered it. */
  expectedVersion?: string;
  /** Until when (ms since the epoch) to wait for `expectedVersion` before handling anyway. */
  consistencyDeadline?: number;
  /** The object's daemons and timers, if its resource has any. */
  background?: ObjectBackground;
}

/** Creates the memory of an object seen for the first time. */
export function newMemory(memo: Memo, listed: boolean): ObjectMemory {
  return { memo: { ...memo }, noticedByListing: listed, fullyHandledOnce: false };
}

/** Something for an object's queue: a watch event, or a wake-up to re-check delayed handlers. */
export type ObjectWork =
  | { kind: "event"; type: string | null; object: KubernetesObject; left?: boolean }
  | { kind: "wakeup"; object: KubernetesObject };

/** What a cycle needs besides the object. */
export interface CycleDeps {
  client: ApiClient;
  resource: Resource;
  settings: Settings;
  lifecycle: Lifecycle;
  eventHandlers: readonly EventHandler[];
  changeHandlers: readonly ChangeHandler[];
  /** The daemons and timers of the resource; an object's `memory.background` runs them. */
  backgroundHandlers: readonly BackgroundHandler[];
  /** The operator's indexes, for the handlers' contexts. */
  indices: Indices;
  /** The resource's fields whose values are masked in the diff-base, `old`/`new`/`diff` and logs. */
  sensitive: SensitiveFields;
  signal: AbortSignal;
}

/** What a cycle asks its caller to do afterwards. */
export interface CycleOutcome {
  /** Re-check the object after so many seconds (delayed handlers, or a consistency wait). */
  wakeupAfter?: number;
}

/** A resourceVersion that never arrives: after the last finalizer is gone, only DELETED may follow. */
const NEVER = "~never~arrives";

/**
 * Processes one piece of work for one object. With `superseded`, newer events of the object are
 * already queued: event handlers still see this one, but state-dependent handling is left to the
 * newest, so a burst of events costs one handling cycle.
 */
export async function processObject(
  work: ObjectWork,
  memory: ObjectMemory,
  deps: CycleDeps,
  superseded = false,
): Promise<CycleOutcome> {
  const body = work.object;
  if (memory.expectedVersion !== undefined && body.metadata.resourceVersion === memory.expectedVersion) {
    memory.expectedVersion = memory.consistencyDeadline = undefined;
  }
  const logger = new ObjectLogger(body);
  const patch = new Patch();
  const extra = { patch, logger, memo: memory.memo, resource: deps.resource, indices: deps.indices };
  const { settings } = deps;
  const { progressStorage, diffbaseStorage, finalizer } = settings.persistence;
  memory.background?.update(body, idleTimers(deps) ? essenceOf(body, deps) : undefined);

  if (work.kind === "event") {
    // Without event handlers, no event, context or logger of their own is made (once per cycle each).
    if (deps.eventHandlers.length) {
      const event = { type: work.type, object: body };
      const context = () => ({ ...resourceContext(body, { ...extra, param: undefined }), event, type: work.type });
      const handlers = eventHandlersFor(deps.eventHandlers, body, context);
      // Event handlers' lines are never posted as Kubernetes Events: they run for every event.
      await runEventHandlers(handlers, event, { ...extra, logger: new ObjectLogger(body, { local: true }) });
    }
    if (work.type === "DELETED") return {};
  }
  const changing = deps.changeHandlers.length > 0;
  if ((!changing && !memory.background) || superseded) {
    await send(patch, null, body, memory, deps);
    return {};
  }

  // The progress storage's own fields never count as changes (as in Kopf).
  const salt = body.metadata.uid ?? "";
  const built = progressStorage.clear(diffbaseStorage.build(body, extraFields(deps.changeHandlers)));
  const now = maskSensitive(built, deps.sensitive, salt);
  const stored = diffbaseStorage.fetch(body);
  const masked = maskSensitive(stored, deps.sensitive, salt);
  // A diff-base with sensitive values in clear (written by Kopf, or before they were masked) is
  // replaced in this cycle's patch, whatever else the cycle does; its meaning stays the same.
  if (masked !== stored) diffbaseStorage.store(body, patch, masked!);
  const old = resolveDiffBase(masked, now);
  const diff = diffOf(old, now);
  // Known once the cause is detected; filters of the cause's handlers see it (Kopf passes it too).
  const known: { reason?: Reason } = {};
  const filterContext = (): FilterContext => ({
    ...resourceContext(body, { ...extra, param: undefined }),
    reason: known.reason,
    old,
    new: now,
    diff,
  });
  const match: ChangeMatch = { body, old, new: now, context: filterContext };
  const deleting = Boolean(body.metadata.deletionTimestamp);
  const finalized = body.metadata.finalizers?.includes(finalizer) ?? false;

  const { background } = memory;
  // Daemons and timers that ended on their own for this object neither restart nor hold it.
  const spawning = background
    ? backgroundHandlersFor(deps.backgroundHandlers, body, filterContext).filter((h) => !background.finished(h.id))
    : [];

  // The finalizer first: it must be in place before handlers do anything that deletion must undo.
  const blocking = spawning.length > 0 || needsFinalizer(deps.changeHandlers, match);
  if (blocking && !finalized && !deleting) {
    logger.debug("Adding the finalizer, thus preventing the actual deletion.");
    await send(patch, "add", body, memory, deps);
    return {};
  }
  if (!blocking && finalized && !deleting) {
    background?.adjust([]);
    logger.debug("Removing the finalizer, as there are no handlers requiring it.");
    await send(patch, "remove", body, memory, deps);
    return {};
  }

  if (background && deleting) {
    // Deletion handling starts once the daemons and timers have exited (or been left orphaned).
    if (!await background.stop("resourceDeleted")) {
      const polling = stillExiting(background, deps, logger);
      await send(patch, null, body, memory, deps);
      return { wakeupAfter: polling };
    }
  } else {
    background?.adjust(spawning);
  }
  if (!changing) {
    await send(patch, deleting && finalized ? "remove" : null, body, memory, deps);
    return {};
  }

  const cause = detectCause({
    type: work.kind === "event" ? work.type : "MODIFIED",
    deleting,
    finalized,
    handledBefore: old !== null,
    changed: diff.length > 0,
    initial: memory.noticedByListing && !memory.fullyHandledOnce,
  });
  if (cause === "gone" || cause === "free" || cause === "noop") {
    if (cause === "free") logger.debug("Deletion is not ours to handle: our finalizer is not on the object.");
    await send(patch, null, body, memory, deps);
    return {};
  }
  // Stealth: objects that no change handler could concern get no state, no finalizer, no logs.
  if (!finalized && !anyPrematches(deps.changeHandlers, match)) {
    await send(patch, null, body, memory, deps);
    return {};
  }

  // State-dependent handling waits until the watch has delivered our own last patch.
  if (memory.expectedVersion !== undefined && Date.now() < (memory.consistencyDeadline ?? 0)) {
    logger.debug(`Waiting for resourceVersion ${memory.expectedVersion} before handling.`);
    await send(patch, null, body, memory, deps);
    return { wakeupAfter: ((memory.consistencyDeadline ?? 0) - Date.now()) / 1000 };
  }
  memory.expectedVersion = memory.consistencyDeadline = undefined;

  const reason = known.reason = cause;
  const handlers = handlersForCause(
    deps.changeHandlers,
    reason,
    memory.noticedByListing && !memory.fullyHandledOnce,
    match,
  );
  supersede(deps.changeHandlers, reason, body, patch, logger, progressStorage);
  const title = REASON_TITLES[reason];
  let done = true;
  let wakeupAfter: number | undefined;
  // The object as the operator last wrote it: checkpoints of a slow cycle change what is on it.
  let current = body;
  if (handlers.length) {
    if (reason === "update") logger.debug(`Updating diff: ${JSON.stringify(diff)}`);
    const checkpoints = new CycleCheckpoints(body, settings.persistence.checkpointDelay, deps);
    const outcome = await runCause(handlers, {
      reason,
      body,
      old,
      new: now,
      diff,
      patch,
      logger,
      memo: memory.memo,
      indices: deps.indices,
      resource: deps.resource,
      storage: progressStorage,
      lifecycle: deps.lifecycle,
      defaultBackoff: settings.execution.defaultBackoff,
      handlerTimeout: settings.execution.handlerTimeout,
      signal: deps.signal,
      checkpoint: checkpoints.checkpoint,
    });
    await checkpoints.settled();
    if (checkpoints.written?.metadata.resourceVersion) {
      current = checkpoints.written;
      expect(memory, current.metadata.resourceVersion!, deps);
    }
    done = outcome.done;
    if (done) {
      // The records of sub-handlers (any depth) go with their parents' (`subrefs`).
      for (const id of [...handlers.map((h) => h.id), ...outcome.subrefs]) progressStorage.purge(id, current, patch);
      logger.info(`${title.noun} is processed: ${outcome.succeeded} succeeded; ${outcome.failed} failed.`);
    } else {
      wakeupAfter = outcome.delay;
    }
  }
  if (done) {
    memory.fullyHandledOnce = true;
    if (reason === "delete") {
      // The object goes away with our finalizer: its bookkeeping would be written for nobody.
      await send(new Patch(), "remove", current, memory, deps);
      return {};
    }
    if (diff.length > 0) diffbaseStorage.store(current, patch, now);
  }
  await send(patch, null, current, memory, deps);
  return { wakeupAfter };
}

/** Whether any timer waits for its object to be idle (only then are changes tracked). */
function idleTimers(deps: CycleDeps): boolean {
  return deps.backgroundHandlers.some((handler) => handler.kind === "timer" && handler.options.idle !== undefined);
}

/** What counts as a change of the object for idle timers: its essence, as the diff-base has it. */
function essenceOf(body: KubernetesObject, deps: CycleDeps): string {
  const { progressStorage, diffbaseStorage } = deps.settings.persistence;
  return JSON.stringify(progressStorage.clear(diffbaseStorage.build(body, extraFields(deps.changeHandlers))));
}

/**
 * Logs the daemons and timers that a deletion still waits for; returns the seconds until the
 * next look (sooner if they exit: their exit wakes the object).
 */
function stillExiting(background: ObjectBackground, deps: CycleDeps, logger: ObjectLogger): number {
  const byId = new Map(deps.backgroundHandlers.map((handler) => [handler.id, handler]));
  const fallback = deps.settings.background.cancellationPolling;
  let next = fallback;
  for (const id of background.stopping) {
    const handler = byId.get(id);
    const polling = handler?.kind === "daemon" ? handler.options.cancellationPolling ?? fallback : fallback;
    next = Math.min(next, polling);
    logger.info(
      `${handler ? title(handler) : "Daemon"} '${id}' is still exiting. The next check is in ${polling} seconds.`,
    );
  }
  return next;
}

/** The fields outside the essence that handlers filter on (e.g. `status.phase`): kept in the diff-base. */
function extraFields(handlers: readonly ChangeHandler[]): string[][] {
  return handlers.flatMap((handler) => handler.field && handler.field[0] === "status" ? [[...handler.field]] : []);
}

/**
 * Sends the cycle's merge-patch, and the finalizer change as a JSON-patch guarded by the
 * resourceVersion; remembers the resourceVersion to wait for before the next stateful cycle.
 */
async function send(
  patch: Patch,
  finalizer: "add" | "remove" | null,
  body: KubernetesObject,
  memory: ObjectMemory,
  deps: CycleDeps,
): Promise<void> {
  let result: KubernetesObject | null = null;
  // Rendered once: each rendering is a deep copy of the patch (it was made five times per cycle).
  const wanted = patch.toMergePatch();
  // A patch that would set only what the object already has is not sent.
  if (Object.keys(wanted).length > 0 && patchInconsistencies(wanted, body).length > 0) {
    // The patch is a property, rendered only where a sink prints debug lines (not a JSON string per cycle).
    objectsLogger.debug("Patching with: {patch}", {
      object: objectRef(body),
      local: true,
      patch: maskSensitive(wanted, deps.sensitive, body.metadata.uid ?? ""),
    });
    result = await applyMergePatch(deps.client, deps.resource, body, wanted, deps.signal).catch((error) => {
      throw error instanceof ApiUnprocessableError ? refused(error) : error;
    });
    const inconsistencies = result ? patchInconsistencies(wanted, result) : [];
    if (inconsistencies.length) {
      // Usually a schema pruning what handlers return: the CRD's status needs x-kubernetes-preserve-unknown-fields.
      new ObjectLogger(body, { local: true }).warning(
        `Patching failed with inconsistencies: ${
          JSON.stringify(maskDiff(inconsistencies, deps.sensitive, body.metadata.uid ?? ""))
        }`,
      );
    }
  }
  if (finalizer) {
    result = await changeFinalizers(
      deps.client,
      deps.resource,
      result ?? body,
      deps.settings.persistence.finalizer,
      finalizer,
      deps.signal,
    );
  }
  if (!result?.metadata.resourceVersion) return;
  const gone = result.metadata.deletionTimestamp && !result.metadata.finalizers?.length;
  expect(memory, gone ? NEVER : result.metadata.resourceVersion, deps);
}

/** Remembers the resourceVersion of the operator's own write, to wait for before the next stateful cycle. */
function expect(memory: ObjectMemory, resourceVersion: string, deps: CycleDeps): void {
  const timeout = deps.settings.persistence.consistencyTimeout;
  if (timeout <= 0) return;
  memory.expectedVersion = resourceVersion;
  memory.consistencyDeadline = Date.now() + timeout * 1000;
}

/** Says what a refused patch means for the handlers, and what to change when the annotations are too big. */
function refused(error: ApiUnprocessableError): Error {
  const tooBig = /annotations/i.test(error.message) && /too long|262144/i.test(error.message);
  const advice = tooBig
    ? " The object's annotations would exceed the API server's limit of 256 KiB (262144 bytes) in total:" +
      " keep the handlers' state in the status instead (settings.persistence.progressStorage =" +
      " new kopf.StatusProgressStorage(), settings.persistence.diffbaseStorage = new kopf.StatusDiffBaseStorage())," +
      " or make the object's other annotations smaller."
    : "";
  return new Error(
    `The API server refused the patch with this cycle's handler outcomes: they are not stored, ` +
      `and the handlers will run again. ${error.message}.${advice}`,
    { cause: error },
  );
}

/**
 * Progress left by a cause that a newer one replaced (an update still retrying when the object
 * is deleted): reported with its counts, and purged, so the new cause starts clean.
 */
function supersede(
  handlers: readonly ChangeHandler[],
  reason: Reason,
  body: KubernetesObject,
  patch: Patch,
  logger: ObjectLogger,
  storage: ProgressStorage,
): void {
  const stale = new Map<Reason, ProgressRecord[]>();
  const ids = new Set<string>();
  for (const id of new Set(handlers.map((handler) => handler.id))) {
    const record = storage.fetch(id, body);
    const purpose = record?.purpose as Reason | undefined;
    if (!record || !purpose || purpose === reason || !(purpose in REASON_TITLES)) continue;
    stale.set(purpose, [...stale.get(purpose) ?? [], record]);
    ids.add(id);
    for (const subref of record.subrefs ?? []) ids.add(subref);
  }
  for (const [purpose, records] of stale) {
    const succeeded = records.filter((record) => record.success).length;
    const failed = records.filter((record) => record.failure).length;
    const left = records.length - succeeded - failed;
    logger.info(
      `${REASON_TITLES[purpose].noun} is superseded by ${REASON_TITLES[reason].gerund}: ` +
        `${succeeded} succeeded; ${failed} failed; ${left} left to the moment.`,
    );
  }
  for (const id of ids) storage.purge(id, body, patch);
}
