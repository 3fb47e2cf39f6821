/**
 * Which handlers concern an object: the change handlers of a cause (by reason, resume rules and
 * filters, each id once), the handlers that make an object "ours" at all, and the finalizer need.
 *
 * @module
 */

import type { JsonObject, KubernetesObject } from "../model/body.ts";
import type { Reason } from "./causes.ts";
import {
  type FilterContext,
  matchesFilters,
  type MatchInput,
  matchModeOf,
  prematchesFilters,
  unfiltered,
} from "./filters.ts";
import type { BackgroundHandler, ChangeHandler, EventHandler } from "./handlers.ts";

/** What the filters of change handlers look at. */
export interface ChangeMatch {
  body: KubernetesObject;
  old: JsonObject | null;
  new: JsonObject;
  /** The context given to filter callbacks, built only if a callback needs it. */
  context: () => FilterContext;
}

function modeOf(handler: ChangeHandler) {
  return matchModeOf(handler.reason ?? "field");
}

function input(match: ChangeMatch): MatchInput {
  return { body: match.body, old: match.old, new: match.new, context: match.context };
}

/**
 * The handlers to run for a cause, in registration order, each id once: those of the reason;
 * `on.field` handlers whose field changed; resume handlers when the object is seen for the first
 * time since the start (never for creation, for deletion only with `deleted`).
 */
export function handlersForCause(
  handlers: readonly ChangeHandler[],
  reason: Reason,
  initial: boolean,
  match: ChangeMatch,
): ChangeHandler[] {
  const selected = new Map<string, ChangeHandler>();
  for (const handler of handlers) {
    if (selected.has(handler.id)) continue;
    const serves = handler.reason === reason ||
      handler.reason === null ||
      (handler.initial && initial && reason !== "create" && (reason !== "delete" || handler.deleted));
    if (!serves) continue;
    // Unfiltered handlers (most) match without their mode and input made: one fewer step each per cycle.
    if (!unfiltered(handler.options) && !matchesFilters(handler.options, modeOf(handler), input(match))) continue;
    selected.set(handler.id, handler);
  }
  return [...selected.values()];
}

/**
 * Whether any change handler could ever take an update (`on.update`, `on.field`, or a resume
 * handler, which joins the update of an object changed while the operator was away).
 */
export function anyTakesUpdates(handlers: readonly ChangeHandler[]): boolean {
  return handlers.some((handler) => handler.reason === "update" || handler.reason === null || handler.initial);
}

/**
 * Whether any change handler could ever concern the object as it is (filters without the
 * change requirements): objects that none concerns get no state, no finalizer, no log lines.
 */
export function anyPrematches(handlers: readonly ChangeHandler[], match: ChangeMatch): boolean {
  // Loops, not `some()` with a callback, here and below: every cycle asks (docs/performance/cpu.md,
  // "Fewer functions, a second pass").
  for (const handler of handlers) {
    if (unfiltered(handler.options) || prematchesFilters(handler.options, modeOf(handler), input(match))) return true;
  }
  return false;
}

/** Whether a handler that needs the finalizer (a mandatory delete handler) concerns the object. */
export function needsFinalizer(handlers: readonly ChangeHandler[], match: ChangeMatch): boolean {
  for (const handler of handlers) {
    if (!handler.requiresFinalizer) continue;
    if (unfiltered(handler.options) || prematchesFilters(handler.options, modeOf(handler), input(match))) return true;
  }
  return false;
}

/** The event handlers whose filters match the object as it is now. */
export function eventHandlersFor(
  handlers: readonly EventHandler[],
  body: KubernetesObject,
  context: () => FilterContext,
): EventHandler[] {
  return handlers.filter((handler) => matchesFilters(handler.options, "current", { body, context }));
}

/** The daemons and timers whose filters match the object as it is now, each id once. */
export function backgroundHandlersFor(
  handlers: readonly BackgroundHandler[],
  body: KubernetesObject,
  context: () => FilterContext,
): BackgroundHandler[] {
  const selected = new Map<string, BackgroundHandler>();
  for (const handler of handlers) {
    if (selected.has(handler.id)) continue;
    if (matchesFilters(handler.options, "current", { body, context })) selected.set(handler.id, handler);
  }
  return [...selected.values()];
}
