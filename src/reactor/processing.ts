/**
 * One processing cycle of one object, as decide, then act: the steps (`cycle_steps.ts`) run in
 * Kopf's order -- event handlers; the finalizer; the daemons and timers; the cause; once the
 * operator's own last patch has been seen, the change handlers -- and the first that decides ends
 * the decision (without daemons and timers, the wait for that patch comes before the finalizer).
 * Then the verdict is applied once: one patch for everything the cycle changed, plus a guarded
 * JSON-patch when the finalizer changes, and the wake-up to ask for.
 *
 * @module
 */

import { getLogger } from "@logtape/logtape";
import { ApiUnprocessableError } from "../api/errors.ts";
import { applyMergePatch, changeFinalizers } from "../api/patching.ts";
import type { JsonObject, KubernetesObject } from "../model/body.ts";
import { patchHeld, patchInconsistencies } from "../model/inconsistencies.ts";
import { localRecordShown } from "../logging/configure.ts";
import { ObjectLogger } from "../logging/object_logger.ts";
import { objectRef } from "../logging/object_ref.ts";
import type { Memo } from "../handling/context.ts";
import { maskDiff, maskSensitive } from "../state/sensitive.ts";
import { Cycle, type CycleDeps, type ObjectMemory, type ObjectWork } from "./cycle.ts";
import { settlingWrite } from "./own_echoes.ts";
import {
  decideBackground,
  decideCause,
  decideConsistency,
  decideFinalizer,
  GONE,
  handleCause,
  runEvents,
  SEND,
  type Verdict,
  withoutChangeHandlers,
} from "./cycle_steps.ts";

export type { CycleDeps, ObjectMemory, ObjectWork } from "./cycle.ts";

const objectsLogger = getLogger(["kopf", "objects"]);

/** Creates the memory of an object seen for the first time. */
export function newMemory(memo: Memo, listed: boolean): ObjectMemory {
  return { memo: { ...memo }, noticedByListing: listed, fullyHandledOnce: false };
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
  const cycle = new Cycle(work, memory, deps);
  // A newer state is queued (and daemons and timers already see it): this one must not replace it.
  if (!superseded) {
    memory.background?.update(cycle.body, idleTimers(deps) ? JSON.stringify(cycle.essence()) : undefined);
  }
  memory.ownEchoes = undefined;
  const verdict = await decide(cycle, superseded);
  await act(cycle, verdict, !superseded);
  return verdict.wakeupAfter === undefined ? {} : { wakeupAfter: verdict.wakeupAfter };
}

/** Runs the steps until one decides; the change handlers' step always does. */
async function decide(cycle: Cycle, superseded: boolean): Promise<Verdict> {
  const { work, memory, deps } = cycle;
  if (work.kind === "event") {
    // Asked here, not only inside: an async step that does nothing still costs a promise and a wait per cycle.
    if (deps.eventHandlers.length) await runEvents(cycle, work.type);
    if (work.type === "DELETED") return GONE;
  }
  const changing = deps.changeHandlers.length > 0;
  if ((!changing && !memory.background) || superseded) return SEND;
  // Without daemons or timers, every step left depends on the state. An event that comes before
  // the echo of the operator's own last write is older than that write: the echo, or a newer event
  // (the watch delivers them in order), brings the state to decide on; the finalizer and the
  // essences are not worked out for one that would be superseded (Kopf's own writes echo twice).
  if (!memory.background) {
    const waiting = decideConsistency(cycle);
    if (waiting) return waiting;
  }
  return decideFinalizer(cycle) ??
    (memory.background ? await decideBackground(cycle) : undefined) ??
    (changing ? decideCause(cycle) ?? decideConsistency(cycle) ?? await handleCause(cycle) : undefined) ??
    withoutChangeHandlers(cycle.state);
}

/** Whether any timer waits for its object to be idle (only then are changes tracked). */
function idleTimers(deps: CycleDeps): boolean {
  return deps.backgroundHandlers.some((handler) => handler.kind === "timer" && handler.options.idle !== undefined);
}

/**
 * Applies a verdict: sends the merge-patch, and the finalizer change as a JSON-patch guarded by
 * the resourceVersion; remembers the resourceVersion to wait for before the next stateful cycle,
 * and -- after a cycle that evaluated the object (`evaluated`) and settled it -- the writes whose
 * echoes need no cycle.
 */
async function act(cycle: Cycle, verdict: Verdict, evaluated: boolean): Promise<void> {
  if (!verdict.write) return;
  const { memory, deps } = cycle;
  const body = verdict.body ?? cycle.body;
  // A checkpoint's write counts as the operator's own last patch, even if nothing else is sent.
  if (body !== cycle.body) expect(memory, body.metadata.resourceVersion!, deps);
  // Rendered once: each rendering is a deep copy of the patch (it was made five times per cycle).
  const wanted = (verdict.patch ?? cycle.patch).toMergePatch();
  const settling = evaluated && Object.keys(wanted).length > 0 && settlingWrite(cycle, verdict, wanted);
  const versions: string[] | undefined = settling ? [] : undefined;
  let result = await sendPatch(wanted, body, deps, versions);
  if (versions?.length) memory.ownEchoes = versions;
  if (verdict.finalizer) {
    const { client, resource, settings, signal } = deps;
    const finalizer = settings.persistence.finalizer;
    result = await changeFinalizers(client, resource, result ?? body, finalizer, verdict.finalizer, signal);
  }
  if (!result?.metadata.resourceVersion) return;
  const gone = result.metadata.deletionTimestamp && !result.metadata.finalizers?.length;
  expect(memory, gone ? NEVER : result.metadata.resourceVersion, deps);
}

/**
 * Sends the merge-patch (as a `Patch` renders it) unless the object already has
 * everything in it; returns the patched object. `versions` collects the resourceVersions of the writes.
 */
async function sendPatch(
  wanted: JsonObject,
  body: KubernetesObject,
  deps: CycleDeps,
  versions?: string[],
): Promise<KubernetesObject | null> {
  if (Object.keys(wanted).length === 0 || patchHeld(wanted, body)) return null;
  const salt = body.metadata.uid ?? "";
  // The patch is a property, rendered only where a sink prints debug lines (not a JSON string per cycle);
  // its masked copy is made only where one would.
  if (localRecordShown("debug")) {
    objectsLogger.debug("Patching with: {patch}", {
      object: objectRef(body),
      local: true,
      patch: maskSensitive(wanted, deps.sensitive, salt),
    });
  }
  const result = await applyMergePatch(deps.client, deps.resource, body, wanted, deps.signal, versions).catch(
    (error) => {
      throw error instanceof ApiUnprocessableError ? refused(error) : error;
    },
  );
  const inconsistencies = result && !patchHeld(wanted, result) ? patchInconsistencies(wanted, result) : [];
  if (inconsistencies.length) {
    // Usually a schema pruning what handlers return: the CRD's status needs x-kubernetes-preserve-unknown-fields.
    const shown = JSON.stringify(maskDiff(inconsistencies, deps.sensitive, salt));
    new ObjectLogger(body, { local: true }).warning(`Patching failed with inconsistencies: ${shown}`);
  }
  return result;
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
