/**
 * The progress record of one handler for one cause, in Kopf's format: the fields, their order,
 * and the compact JSON kept in annotations (`kopf.zalando.org/<id>`), byte for byte as Kopf 1.44
 * writes it, so that Kopf and this framework continue each other's handling.
 *
 * @module
 */

import type { JsonObject, JsonValue } from "../model/body.ts";
import { dumpPythonJson } from "./python_json.ts";

/**
 * The progress of one handler: when it started and stopped, when it may be retried, for which
 * cause, how many attempts were made, and how they ended. Timestamps are ISO 8601 text as Kopf
 * writes them (see `formatTimestamp()`); absent and `null` fields mean the same.
 */
export interface ProgressRecord {
  /** When the first attempt started. */
  started?: string | null;
  /** When the handler finished (succeeded or failed for good). */
  stopped?: string | null;
  /** Not to be retried before this moment. */
  delayed?: string | null;
  /** The cause it runs for: `create`, `update`, `delete`, `resume`. */
  purpose?: string | null;
  /** Attempts made so far (1 after a first-time success). */
  retries?: number | null;
  /** Finished successfully. */
  success?: boolean | null;
  /** Finished with a permanent failure. */
  failure?: boolean | null;
  /** The message of the last error. */
  message?: string | null;
  /** Ids of all its sub-handlers at any depth, sorted. */
  subrefs?: readonly string[] | null;
}

/** The fields of a record in the order Kopf writes them. */
export const PROGRESS_RECORD_FIELDS: readonly (keyof ProgressRecord)[] = [
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
 * All nine fields in Kopf's order, `null` where absent, with `subrefs` sorted and an empty list as
 * `null`: the record as Kopf hands it to its storages.
 */
export function completeProgressRecord(record: ProgressRecord): JsonObject {
  const complete: JsonObject = {};
  for (const field of PROGRESS_RECORD_FIELDS) {
    const value = record[field];
    if (field === "subrefs") {
      const subrefs = value as readonly string[] | null | undefined;
      complete.subrefs = subrefs?.length ? [...subrefs].sort() : null;
    } else {
      complete[field] = (value ?? null) as JsonValue;
    }
  }
  return complete;
}

/** Options of {@linkcode encodeProgressRecord}. */
export interface EncodeProgressOptions {
  /** Keep `null` fields (Kopf's `verbose=True`); by default they are left out. */
  verbose?: boolean;
}

/**
 * The record as the compact JSON Kopf keeps in an annotation: fields in Kopf's order, `null`s left
 * out unless verbose, non-ASCII escaped.
 *
 * @example
 * ```ts
 * encodeProgressRecord({ started: "2024-01-02T03:04:05.123456+00:00", purpose: "create", retries: 0, success: false, failure: false });
 * // '{"started":"2024-01-02T03:04:05.123456+00:00","purpose":"create","retries":0,"success":false,"failure":false}'
 * ```
 */
export function encodeProgressRecord(record: ProgressRecord, options: EncodeProgressOptions = {}): string {
  const complete = completeProgressRecord(record);
  const kept: JsonObject = {};
  for (const field in complete) if (options.verbose || complete[field] !== null) kept[field] = complete[field];
  return dumpPythonJson(kept);
}

/**
 * Reads a record from its stored JSON; `null` if the text holds JSON `null` (as if absent). Throws
 * a `SyntaxError` naming `source` for text that is not JSON or not an object: guessing would risk
 * running handlers twice.
 */
export function decodeProgressRecord(text: string, source = "the progress record"): ProgressRecord | null {
  let decoded: unknown;
  try {
    decoded = JSON.parse(text);
  } catch (error) {
    throw new SyntaxError(`${source} holds no valid JSON: ${(error as Error).message}`, { cause: error });
  }
  if (decoded === null) return null;
  if (typeof decoded !== "object" || Array.isArray(decoded)) {
    throw new SyntaxError(`${source} holds ${text}, not a progress record (a JSON object).`);
  }
  return decoded as ProgressRecord;
}

/**
 * Whether storing the record would change what is stored: `false` if `stored` (as fetched from the
 * object) holds the same values. Absent and `null` fields are the same; values compare as Python
 * compares them (so `1` equals `true`), because Kopf decides with Python's `!=` whether to write.
 */
export function sameProgressRecord(record: ProgressRecord, stored: unknown): boolean {
  if (stored === null || typeof stored !== "object" || Array.isArray(stored)) return false;
  return pythonEquals(withoutNulls(completeProgressRecord(record)), withoutNulls(stored as JsonObject));
}

function withoutNulls(object: JsonObject): JsonObject {
  const result: JsonObject = {};
  for (const [key, value] of Object.entries(object)) if (value !== null && value !== undefined) result[key] = value;
  return result;
}

/** Python's `==` on JSON values: numbers and booleans compare numerically, containers deeply. */
function pythonEquals(a: unknown, b: unknown): boolean {
  const numeric = (value: unknown): value is number | boolean =>
    typeof value === "number" || typeof value === "boolean";
  if (numeric(a) && numeric(b)) return Number(a) === Number(b);
  if (Array.isArray(a) || Array.isArray(b)) {
    return Array.isArray(a) && Array.isArray(b) && a.length === b.length &&
      a.every((item, i) => pythonEquals(item, b[i]));
  }
  if (a !== null && b !== null && typeof a === "object" && typeof b === "object") {
    const aKeys = Object.keys(a);
    const bRecord = b as Record<string, unknown>;
    const aRecord = a as Record<string, unknown>;
    return aKeys.length === Object.keys(b).length &&
      aKeys.every((key) => Object.hasOwn(bRecord, key) && pythonEquals(aRecord[key], bRecord[key]));
  }
  return a === b;
}
