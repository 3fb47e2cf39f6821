/**
 * The echoes of the operator's own writes that a cycle would only read to do nothing. After a
 * cycle that settled its object -- its handlers done or not concerned, no finalizer changed, no
 * wake-up asked for -- with a patch that leaves the essence as it was (results and progress in
 * `status`, the storages' own annotations), the watch brings back each write as a `MODIFIED`
 * event. Such an event shows the object the cycle left, plus only what the cycle wrote: the same
 * essence, the same labels and annotations for the filters, the same finalizers, so a cycle of it
 * decides exactly nothing. It is taken off the queue instead: one cycle fewer per write (a
 * created object handled at once: one cycle in all, where it took two, or three with a status
 * subresource and the default storages).
 *
 * Skipped only where that is certain: never for an object with event handlers (they see every
 * event), daemons or timers (they follow each state), or for handlers whose filters are callbacks
 * (a callback may read `status`); never for an event that stands for other ones than the writes'
 * own (`replaced`), or for a relisting's event (the events between are not known).
 *
 * An echo with newer work behind it is taken too: the work behind it is processed as it comes.
 * Both echoes of the default storages' two writes often wait one behind the other (the queue merges
 * an event only into one waiting behind the key's first item, and the first counts as in progress
 * while its worker waits for its turn). A cycle of the first echo, superseded, decided nothing but
 * forgot the echoes, and the second then took a full cycle: up to three cycles per object where
 * one does (docs/performance/cpu.md, "Two echoes, one behind the other").
 *
 * @module
 */

import type { JsonObject } from "../model/body.ts";
import type { FilterOptions } from "../handling/filters.ts";
import type { ChangeHandler } from "../handling/handlers.ts";
import { holdsEssentialAnnotations } from "../state/essence.ts";
import { leavesStatusOut } from "../state/multi_diffbase.ts";
import type { Cycle, ObjectMemory, ObjectWork } from "./cycle.ts";
import type { Verdict } from "./cycle_steps.ts";

/**
 * Whether the echoes of a cycle's writes would change nothing: the cycle evaluated the object in
 * full and settled it, and its merge-patch does not touch the essence or what the filters read.
 *
 * @param patch The merge-patch the cycle sent.
 */
export function settlingWrite(cycle: Cycle, verdict: Verdict, patch: JsonObject): boolean {
  const { deps, memory } = cycle;
  if (verdict.finalizer || verdict.wakeupAfter !== undefined || (verdict.body ?? cycle.body) !== cycle.body) {
    return false;
  }
  // The answer looked up here, worked out by `readsNoStatus()` only the first time: every cycle that writes asks.
  const handlers = deps.changeHandlers;
  if (deps.eventHandlers.length || memory.background || !(statusBlind.get(handlers) ?? readsNoStatus(handlers))) {
    return false;
  }
  const { diffbaseStorage, progressStorage } = deps.settings.persistence;
  // The patch seen as an object: what of it is essence (labels, annotations that are nobody's
  // bookkeeping, fields outside metadata and status, the status fields that handlers watch).
  // Most cycles write their results and state into status alone, or with the storages'
  // annotations: none of it is essence then. Whether the patch writes nothing else is seen by
  // loops here, not by building the patch's essence -- every write of the default storages.
  const metadata = patch.metadata as JsonObject | undefined;
  let bookkeeping = true;
  for (const key in patch) if (key !== "status" && key !== "metadata") bookkeeping = false;
  for (const key in metadata) if (key !== "annotations") bookkeeping = false;
  const annotations = metadata?.annotations as JsonObject | null | undefined;
  if (bookkeeping && annotations !== undefined && annotations !== null) {
    bookkeeping = typeof annotations === "object" && !Array.isArray(annotations) &&
      !holdsEssentialAnnotations(annotations);
  }
  if (!bookkeeping || cycle.extraFields.length > 0 || !leavesStatusOut(diffbaseStorage)) {
    const touched = progressStorage.clear(diffbaseStorage.build({ metadata: {}, ...patch }, cycle.extraFields));
    if (Object.keys(touched).length) return false;
  }
  // Loops, not `some()` with callbacks: every write of the default storages has annotations.
  for (const key in annotations) {
    for (const handler of handlers) if (handler.options.annotations && key in handler.options.annotations) return false;
  }
  return true;
}

/**
 * Whether a piece of work is the echo of the last cycle's settling writes (then forgotten, and the
 * consistency wait for it ended); any other work makes the echoes unknown from then on.
 */
export function takeOwnEcho(work: ObjectWork, memory: ObjectMemory): boolean {
  const echoes = memory.ownEchoes;
  if (!echoes) return false;
  const version = work.object.metadata.resourceVersion;
  const echo = work.kind === "event" && work.type === "MODIFIED" && !work.left && !work.relisted &&
    version !== undefined && echoes.includes(version) && (work.replaced ?? []).every((v) => echoes.includes(v));
  if (!echo) {
    memory.ownEchoes = undefined;
    return false;
  }
  // A loop, not `filter()` with a callback: this runs for nearly every object (docs/performance/cpu.md,
  // "Fewer functions, a second pass").
  const left: string[] = [];
  for (const v of echoes) if (v !== version && !work.replaced?.includes(v)) left.push(v);
  memory.ownEchoes = left;
  if (memory.expectedVersion === version) memory.expectedVersion = memory.consistencyDeadline = undefined;
  return true;
}

/** Per list of change handlers (one per resource): whether none of their filters is a callback. */
const statusBlind = new WeakMap<readonly ChangeHandler[], boolean>();

/** Whether the handlers' filters read only labels, annotations and the essence: no callbacks. */
function readsNoStatus(handlers: readonly ChangeHandler[]): boolean {
  const known = handlers.every((handler) => !hasCallback(handler.options));
  statusBlind.set(handlers, known);
  return known;
}

function hasCallback(options: FilterOptions): boolean {
  if (options.when) return true;
  const values = [
    ...Object.values(options.labels ?? {}),
    ...Object.values(options.annotations ?? {}),
    options.value,
    options.old,
    options.new,
  ];
  return values.some((value) => typeof value === "function");
}
