/**
 * The steps of an object's cycle, each deciding what it wants done -- a patch (filled into the
 * cycle's), a finalizer change, a wake-up -- as a {@linkcode Verdict}, or passing to the next step
 * with `undefined`. Nothing here writes to the API server: the cycle applies the verdict once,
 * at its end (`processing.ts`). The order of the steps is Kopf's: event handlers, the finalizer,
 * the daemons and timers, the cause, the consistency wait, the change handlers.
 *
 * @module
 */

import { detectCause, REASON_TITLES } from "../handling/causes.ts";
import { resourceContext } from "../handling/context.ts";
import { runEventHandlers } from "../handling/event_handling.ts";
import { runCause } from "../handling/execution.ts";
import {
  anyPrematches,
  anyTakesUpdates,
  eventHandlersFor,
  handlersForCause,
  needsFinalizer,
} from "../handling/selection.ts";
import type { ObjectBackground } from "../engines/background.ts";
import { title } from "../engines/background_attempt.ts";
import { localRecordShown } from "../logging/configure.ts";
import { ObjectLogger } from "../logging/object_logger.ts";
import type { KubernetesObject } from "../model/body.ts";
import { Patch } from "../model/patch.ts";
import { CycleCheckpoints } from "./checkpoints.ts";
import type { Cycle, CycleState } from "./cycle.ts";
import { supersede } from "./superseding.ts";

/** What a cycle decided to do at its end. */
export interface Verdict {
  /** Send the writes at all; not for an object that is gone. */
  readonly write: boolean;
  /** The finalizer change, sent as a JSON-patch guarded by the resourceVersion. */
  readonly finalizer?: "add" | "remove";
  /** The patch to send instead of the cycle's own. */
  readonly patch?: Patch;
  /** The object to patch, when newer than the cycle's (written by a checkpoint). */
  readonly body?: KubernetesObject;
  /** Look at the object again after so many seconds. */
  readonly wakeupAfter?: number;
}

/** Send what the cycle's patch holds, nothing more. */
export const SEND: Verdict = { write: true };

/** Write nothing: the object is gone. */
export const GONE: Verdict = { write: false };

/**
 * Runs the event handlers of a watch event; their lines are never posted as Kubernetes Events. Called only where
 * the resource has event handlers: without them, no event, context or logger of their own is made.
 */
export async function runEvents(cycle: Cycle, type: string | null): Promise<void> {
  const { body, deps } = cycle;
  const event = { type, object: body };
  const context = () => ({ ...resourceContext(body, { ...cycle.extra, param: undefined }), event, type });
  const handlers = eventHandlersFor(deps.eventHandlers, body, context);
  await runEventHandlers(handlers, event, { ...cycle.extra, logger: new ObjectLogger(body, { local: true }) });
}

/**
 * The finalizer first: it must be in place before handlers do anything that deletion must undo,
 * and it goes when nothing needs it any more (the daemons and timers are told to stop then).
 */
export function decideFinalizer(cycle: Cycle): Verdict | undefined {
  const { deleting, finalized, spawning, match } = cycle.state;
  if (deleting) return undefined;
  const blocking = spawning.length > 0 || needsFinalizer(cycle.deps.changeHandlers, match);
  if (blocking && !finalized) {
    cycle.logger.debug("Adding the finalizer, thus preventing the actual deletion.");
    return { write: true, finalizer: "add" };
  }
  if (!blocking && finalized) {
    cycle.memory.background?.adjust([]);
    cycle.logger.debug("Removing the finalizer, as there are no handlers requiring it.");
    return { write: true, finalizer: "remove" };
  }
  return undefined;
}

/**
 * The daemons and timers follow the object: started and stopped as their filters say; on a
 * deletion, handling waits until they have exited (or been left orphaned).
 */
export async function decideBackground(cycle: Cycle): Promise<Verdict | undefined> {
  const background = cycle.memory.background;
  if (!background) return undefined;
  const { deleting, spawning } = cycle.state;
  if (!deleting) {
    background.adjust(spawning);
    return undefined;
  }
  if (await background.stop("resourceDeleted")) return undefined;
  return { write: true, wakeupAfter: stillExiting(background, cycle) };
}

/** Without change handlers, a deleted object only waits for its daemons and timers to release it. */
export function withoutChangeHandlers(state: CycleState): Verdict {
  return state.deleting && state.finalized ? { write: true, finalizer: "remove" } : SEND;
}

/**
 * The cause of the change (Kopf's creation, update, deletion, resume); a verdict instead when
 * there is nothing to handle: no change, a deletion that is not ours, or an object that no change
 * handler could concern (stealth: no state, no finalizer, no logs for it).
 */
export function decideCause(cycle: Cycle): Verdict | undefined {
  const { work, memory, deps } = cycle;
  const { deleting, finalized, old, diff, match } = cycle.state;
  const cause = detectCause({
    type: work.kind === "event" ? work.type : "MODIFIED",
    deleting,
    finalized,
    handledBefore: old !== null,
    changed: diff.length > 0,
    initial: memory.noticedByListing && !memory.fullyHandledOnce,
  });
  if (cause === "gone" || cause === "free" || cause === "noop") {
    if (cause === "free") cycle.logger.debug("Deletion is not ours to handle: our finalizer is not on the object.");
    return SEND;
  }
  if (!finalized && !anyPrematches(deps.changeHandlers, match)) return SEND;
  cycle.reason = cause;
  return undefined;
}

/** State-dependent handling waits until the watch has delivered the operator's own last patch. */
export function decideConsistency(cycle: Cycle): Verdict | undefined {
  const { memory } = cycle;
  if (memory.expectedVersion !== undefined && Date.now() < (memory.consistencyDeadline ?? 0)) {
    // Said of most echoes of the default storages' first write: made only where it is shown.
    if (localRecordShown("debug")) {
      new ObjectLogger(cycle.body, { local: true }).debug(
        `Waiting for resourceVersion ${memory.expectedVersion} before handling.`,
      );
    }
    return { write: true, wakeupAfter: ((memory.consistencyDeadline ?? 0) - Date.now()) / 1000 };
  }
  memory.expectedVersion = memory.consistencyDeadline = undefined;
  return undefined;
}

/**
 * Runs the change handlers of the cause; once all are done, purges their progress and stores the
 * new essence as the last handled one -- or, for a deletion, releases the object.
 */
export async function handleCause(cycle: Cycle): Promise<Verdict> {
  const { memory, deps, logger, patch } = cycle;
  const reason = cycle.reason!;
  const { now, diff, match } = cycle.state;
  const { settings } = deps;
  const { progressStorage, diffbaseStorage } = settings.persistence;
  const initial = memory.noticedByListing && !memory.fullyHandledOnce;
  const handlers = handlersForCause(deps.changeHandlers, reason, initial, match);
  supersede(deps.changeHandlers, reason, cycle.body, patch, logger, progressStorage);
  let done = true;
  let wakeupAfter: number | undefined;
  // The object as the operator last wrote it: checkpoints of a slow cycle change what is on it.
  let current = cycle.body;
  if (handlers.length) {
    if (reason === "update") logger.debug(`Updating diff: ${JSON.stringify(diff)}`);
    const checkpoints = new CycleCheckpoints(cycle.body, settings.persistence.checkpointDelay, deps);
    const outcome = await runCause(handlers, {
      reason,
      body: cycle.body,
      old: cycle.state.old,
      new: now,
      diff,
      // What `cycle.extra` gives, named here: a getter's call less per handled cause.
      patch,
      logger,
      memo: memory.memo,
      resource: deps.resource,
      indices: deps.indices,
      storage: progressStorage,
      lifecycle: deps.lifecycle,
      defaultBackoff: settings.execution.defaultBackoff,
      handlerTimeout: settings.execution.handlerTimeout,
      signal: deps.signal,
      checkpoint: checkpoints.checkpoint,
    });
    if (checkpoints.sending) await checkpoints.sending;
    if (checkpoints.written?.metadata.resourceVersion) current = checkpoints.written;
    done = outcome.done;
    if (done) {
      // The records of sub-handlers (any depth) go with their parents' (`subrefs`).
      for (const handler of handlers) progressStorage.purge(handler.id, current, patch);
      for (const id of outcome.subrefs) progressStorage.purge(id, current, patch);
      logger.info(
        `${REASON_TITLES[reason].noun} is processed: ${outcome.succeeded} succeeded; ${outcome.failed} failed.`,
      );
    } else {
      wakeupAfter = outcome.delay;
    }
  }
  if (!done) return { write: true, body: current, wakeupAfter };
  memory.fullyHandledOnce = true;
  // The object goes away with our finalizer: its bookkeeping would be written for nobody.
  if (reason === "delete") return { write: true, patch: new Patch(), finalizer: "remove", body: current };
  // With nothing that takes updates, the diff-base of an update would be read by no one: the change
  // (e.g. the echo of a create handler's own annotations) costs no write.
  const unread = reason === "update" && !anyTakesUpdates(deps.changeHandlers);
  if (diff.length > 0 && !unread) diffbaseStorage.store(current, patch, now);
  return { write: true, body: current };
}

/**
 * Logs the daemons and timers that a deletion still waits for; returns the seconds until the
 * next look (sooner if they exit: their exit wakes the object).
 */
function stillExiting(background: ObjectBackground, cycle: Cycle): number {
  const { deps, logger } = cycle;
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
