/**
 * Progress records of handlers, kept in annotations in Kopf's format (`kopf.zalando.org/<id>`
 * holding compact JSON) so that operators written for Kopf and for us can take over each other's
 * objects, and a restarted operator continues where it stopped.
 *
 * @module
 */

import type { KubernetesObject } from "../model/body.ts";
import type { Patch } from "../model/patch.ts";

/** The progress of one handler for one change. */
export interface ProgressRecord {
  /** When the first attempt started (ISO 8601). */
  started?: string;
  /** When it finished (ISO 8601). */
  stopped?: string;
  /** Not to be retried before this moment (ISO 8601). */
  delayed?: string;
  /** The cause it runs for, e.g. `create`. */
  purpose?: string;
  /** Attempts made so far. */
  retries?: number;
  /** Finished successfully. */
  success?: boolean;
  /** Finished with a permanent failure. */
  failure?: boolean;
  /** The last error message. */
  message?: string;
  /** Ids of its sub-handlers. */
  subrefs?: string[];
}

/** The order and names of the record's keys, as Kopf writes them. */
const KEYS: (keyof ProgressRecord)[] = [
  "started",
  "stopped",
  "delayed",
  "purpose",
  "retries",
  "success",
  "failure",
  "message",
  "subrefs",
];

/**
 * The annotation key of a handler's record: `<prefix>/<id>`, with `/` turned into `.` and `<`, `>`
 * into `_`, as Kopf does. Ids longer than a label allows are not supported yet.
 */
export function progressKey(prefix: string, id: string): string {
  const name = id.replaceAll("/", ".").replaceAll("<", "_").replaceAll(">", "_");
  if (name.length > 63) {
    throw new RangeError(`The handler id "${id}" is longer than 63 characters; use a shorter id.`);
  }
  return `${prefix}/${name}`;
}

/** Reads a handler's record from the object; absent or unreadable records count as empty. */
export function readProgress(body: KubernetesObject, prefix: string, id: string): ProgressRecord {
  const raw = body.metadata.annotations?.[progressKey(prefix, id)];
  if (!raw) return {};
  try {
    const parsed = JSON.parse(raw);
    return parsed && typeof parsed === "object" ? parsed as ProgressRecord : {};
  } catch {
    return {};
  }
}

/** Writes a record into the patch as compact JSON, keys in Kopf's order, empty values left out. */
export function writeProgress(patch: Patch, prefix: string, id: string, record: ProgressRecord): void {
  const ordered: Record<string, unknown> = {};
  for (const key of KEYS) if (record[key] !== undefined && record[key] !== null) ordered[key] = record[key];
  patch.metadata.annotations[progressKey(prefix, id)] = JSON.stringify(ordered);
}

/** Removes a record: deleted on the server if the object has it, dropped from the patch otherwise. */
export function purgeProgress(patch: Patch, body: KubernetesObject, prefix: string, id: string): void {
  const key = progressKey(prefix, id);
  if (body.metadata.annotations?.[key] !== undefined) patch.metadata.annotations[key] = null;
  else delete patch.metadata.annotations[key];
}

/** A timestamp as Kopf writes it: ISO 8601 with microseconds and `+00:00`. */
export function isoTimestamp(date: Date): string {
  return date.toISOString().replace(/\.(\d{3})Z$/, ".$1000+00:00");
}
