/**
 * The explicit Events API: `kopf.event()`, `kopf.info()`, `kopf.warn()`, `kopf.exception()`.
 * They queue Events on the poster of the operator that runs the caller and return at once.
 *
 * @module
 */

import { compareLogLevel, type LogLevel } from "@logtape/logtape";
import { buildObjectReference, type ReferencedObject } from "../model/references.ts";
import { type OneOrMany, walk } from "../utils/walk.ts";
import { currentPoster } from "./posting_context.ts";

/** The objects an Event is about: one body, or a (nested) array or iterable of bodies. */
export type EventObjects = OneOrMany<ReferencedObject>;

/**
 * Options of {@linkcode event}: the Kubernetes Event to post (not to be confused with
 * `on.EventOptions`, the options of handlers of watch events).
 */
export interface PostEventOptions {
  /** The type: usually `Normal` or `Warning`; any string is accepted. */
  type: string;
  /** A short CamelCase reason (1 to 128 characters), e.g. `Created`. */
  reason: string;
  /** A human-readable message; empty by default. */
  message?: string;
}

/** Options of {@linkcode info} and {@linkcode warn}. */
export interface InfoOptions {
  /** A short CamelCase reason (1 to 128 characters). */
  reason: string;
  /** A human-readable message; empty by default. */
  message?: string;
}

/** Options of {@linkcode exception}. */
export interface ExceptionOptions {
  /** The reason; by default, the error's class name. */
  reason?: string;
  /** A message, followed by the error's message if there is an error. */
  message?: string;
  /** The error being reported. */
  error?: unknown;
}

/** The levels at which `settings.posting.level` lets Events of the usual types through. */
const LEVEL_OF_TYPE: Record<string, LogLevel> = {
  Debug: "debug",
  Normal: "info",
  Warning: "warning",
  Error: "error",
  Fatal: "fatal",
};

/**
 * Posts an Event of any type about one or more objects (e.g. the handled body, or a child
 * created by the handler). Works inside handlers and in anything they call; returns at once
 * (posting happens in the background). Disabled by `settings.posting.enabled = false`; the usual
 * types (`Debug`, `Normal`, `Warning`, `Error`, `Fatal`) are filtered by `settings.posting.level`.
 *
 * @throws {Error} named `LookupError` when no operator runs the caller (as Kopf does).
 *
 * @example
 * ```ts ignore
 * import * as kopf from "@kopf/kopf";
 * kopf.on.create("kopfexamples", function createFn({ body }) {
 *   kopf.event(body, { type: "SomeType", reason: "SomeReason", message: "Some message" });
 * });
 * ```
 */
export function event(objs: EventObjects, options: PostEventOptions): void {
  post("event", objs, options.type, options.reason, options.message ?? "", LEVEL_OF_TYPE[options.type]);
}

/**
 * Posts a `Normal` Event (unless `settings.posting.level` is above `info`).
 *
 * @example
 * ```ts ignore
 * kopf.info(body, { reason: "Resized", message: "The volume is resized to 10Gi." });
 * ```
 */
export function info(objs: EventObjects, options: InfoOptions): void {
  post("info", objs, "Normal", options.reason, options.message ?? "", "info");
}

/**
 * Posts a `Warning` Event (unless `settings.posting.level` is above `warning`).
 *
 * @example
 * ```ts ignore
 * kopf.warn(body, { reason: "SlowStart", message: "The pod takes long to start." });
 * ```
 */
export function warn(objs: EventObjects, options: InfoOptions): void {
  post("warn", objs, "Warning", options.reason, options.message ?? "", "warning");
}

/**
 * Posts an `Error` Event about an error (unless `settings.posting.level` is above `error`): the
 * reason defaults to the error's class name, the message is `"<message> <error message>"`.
 *
 * @example
 * ```ts ignore
 * try {
 *   await provision();
 * } catch (error) {
 *   kopf.exception(body, { message: "Provisioning failed:", error });
 * }
 * ```
 */
export function exception(objs: EventObjects, options: ExceptionOptions = {}): void {
  const { error } = options;
  const reason = options.reason || errorClassName(error);
  const details = error === undefined || error === null ? "" : error instanceof Error ? error.message : String(error);
  const message = [options.message, details].filter(Boolean).join(" ");
  post("exception", objs, "Error", reason, message, "error");
}

function errorClassName(error: unknown): string {
  if (error instanceof Error) {
    if (error.name && error.name !== "Error") return error.name;
    return error.constructor?.name || "Error";
  }
  return "Error";
}

function post(
  fn: string,
  objs: EventObjects,
  type: string,
  reason: string,
  message: string,
  level: LogLevel | undefined,
): void {
  const poster = currentPoster();
  if (poster === undefined) {
    // As Kopf's LookupError: an Event silently dropped would hide a mistake in the operator's code.
    const error = new Error(
      `kopf.${fn}() needs a running operator: call it from a handler or from code that a handler runs ` +
        "(an Event cannot be posted when no operator runs the caller).",
    );
    error.name = "LookupError";
    throw error;
  }
  const settings = poster.settings;
  if (!settings.enabled) return;
  if (level !== undefined && compareLogLevel(level, settings.level) < 0) return;
  for (const obj of walk(objs)) {
    poster.enqueue(buildObjectReference(obj), { type, reason, message });
  }
}
