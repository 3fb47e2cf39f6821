/**
 * An object's changes that wait in its queue behind a cycle in progress: only the newest state
 * is handled (a superseded event runs no change handler), so when nothing needs each event (no
 * event handlers), the newest replaces the one waiting and an object that keeps changing while
 * its handler runs long holds one waiting event, not one per change.
 *
 * @module
 */

import type { ObjectWork } from "./cycle.ts";

/**
 * How many replaced resourceVersions an event keeps. The one that matters is the echo of the
 * cycle in progress's own write, which arrives just before that cycle ends; should more changes
 * than this come in between, the consistency wait ends by its timeout instead.
 */
export const REPLACED_KEPT = 16;

/**
 * The event that stands for a waiting one and the next of the same object, or `undefined` to keep
 * both: only changes (`MODIFIED`) merge; an object's first sight, its deletion, its leaving the
 * selection and wake-ups are each processed.
 */
export function squashChanges(waiting: ObjectWork, next: ObjectWork): ObjectWork | undefined {
  if (waiting.kind !== "event" || next.kind !== "event") return undefined;
  if (waiting.type !== "MODIFIED" || next.type !== "MODIFIED" || waiting.left || next.left) return undefined;
  const version = waiting.object.metadata.resourceVersion;
  const replaced = version === undefined ? waiting.replaced ?? [] : [...(waiting.replaced ?? []), version];
  const relisted = waiting.relisted || next.relisted;
  return { ...next, replaced: replaced.slice(-REPLACED_KEPT), ...(relisted ? { relisted } : {}) };
}
