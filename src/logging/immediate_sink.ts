/**
 * Sinks that LogTape may hand a record to without copying it first.
 *
 * Before each sink, LogTape copies a record's properties (its "snapshot"), so that a sink which
 * keeps the record for later sees them as they were -- unless the sink carries this registered
 * symbol, which LogTape's own stream sink sets on itself (the function that sets it is not
 * exported). For a sink that formats the record at once, the copy is pure cost (with the messages as
 * templates, handler_logger.ts, 4% of the operator's CPU per object at 250 objects/s:
 * docs/performance/cpu.md, "Log lines without copies").
 *
 * @module
 */

import type { Sink } from "@logtape/logtape";

/** The symbol by which LogTape (2.x) knows a sink that reads a record only during the call. */
const IMMEDIATE = Symbol.for("LogTape.sinkSnapshotPolicy.immediate");

/**
 * Marks a sink as reading each record only while it is called (formatting or copying what it
 * needs before it returns), so that LogTape does not copy the record for it. Returns the sink.
 */
export function immediateSink<S extends Sink>(sink: S): S {
  Object.defineProperty(sink, IMMEDIATE, { value: true });
  return sink;
}

/** Whether a sink is marked as reading each record only while it is called (see {@linkcode immediateSink}). */
export function isImmediateSink(sink: Sink): boolean {
  return (sink as unknown as Record<symbol, unknown>)[IMMEDIATE] === true;
}
