/**
 * Posting log lines as Events: a LogTape sink that turns object-related records (those with an
 * `object` reference, as the handlers' `logger` makes them) into Events with reason `Logging`,
 * when `settings.posting.loggers` is on. Records marked `local: true` are never posted.
 *
 * @module
 */

import { compareLogLevel, type LogLevel, type LogRecord } from "@logtape/logtape";
import { formatRecord } from "../logging/configure.ts";
import { immediateSink } from "../logging/immediate_sink.ts";
import type { ObjectReference } from "../model/references.ts";
import { currentPoster } from "./posting_context.ts";
import { type EventPoster, postsLogRecords } from "./posting.ts";

/** The sink id under which {@linkcode postingSink} is registered in a LogTape configuration. */
export const POSTING_SINK_ID = "kopfPosting";

/**
 * The Event type of a log level, as Kopf maps Python's levels: `Debug` (trace, debug), `Normal`
 * (info), `Warning`, `Error`, `Fatal`.
 */
export function eventTypeOfLevel(level: LogLevel): string {
  if (compareLogLevel(level, "debug") <= 0) return "Debug";
  if (compareLogLevel(level, "info") <= 0) return "Normal";
  if (compareLogLevel(level, "warning") <= 0) return "Warning";
  if (compareLogLevel(level, "error") <= 0) return "Error";
  return "Fatal";
}

/**
 * A LogTape sink posting object-related records as Events through the poster of the operator
 * that runs the logging code (see `runWithPoster`); outside operators it does nothing. Register
 * it for the `["kopf", "objects"]` category with `lowestLevel: "trace"` (the sink applies
 * `settings.posting.level` itself, so posting does not depend on the console's verbosity).
 *
 * @example
 * ```ts ignore
 * import { configure } from "@logtape/logtape";
 * await configure({
 *   sinks: { console: myConsoleSink, kopfPosting: postingSink },
 *   loggers: [
 *     { category: ["kopf"], lowestLevel: "info", sinks: ["console"] },
 *     { category: ["kopf", "objects"], lowestLevel: "trace", sinks: ["kopfPosting"] },
 *   ],
 * });
 * ```
 */
export function postingSink(record: LogRecord): void {
  if (!postsLogRecords()) return;
  const poster = currentPoster();
  if (poster !== undefined) postLogRecord(poster, record);
}
// It formats each record at once (see postLogRecord): LogTape need not copy records for it.
immediateSink(postingSink);

/**
 * Posts one log record as an Event if the poster's settings allow it: posting `enabled`,
 * `loggers` on, the level at least `level`, an `object` reference in the properties, and not
 * marked `local`. Returns whether it was queued.
 */
export function postLogRecord(poster: EventPoster, record: LogRecord): boolean {
  const settings = poster.settings;
  if (!settings.enabled || !settings.loggers) return false;
  if (compareLogLevel(record.level, settings.level) < 0) return false;
  if (record.properties.local === true) return false;
  const ref = objectReferenceOf(record.properties.object);
  if (ref === undefined) return false;
  const message = formatRecord(record, "plain", false);
  poster.enqueue(ref, { type: eventTypeOfLevel(record.level), reason: "Logging", message });
  return true;
}

function objectReferenceOf(value: unknown): ObjectReference | undefined {
  if (typeof value !== "object" || value === null) return undefined;
  const source = value as Record<string, unknown>;
  const ref: ObjectReference = {};
  for (const field of ["apiVersion", "kind", "name", "uid", "namespace"] as const) {
    const text = source[field];
    if (typeof text === "string" && text) ref[field] = text;
  }
  return ref.name || ref.uid ? ref : undefined;
}
