/**
 * The body of a core v1 Event as the operator posts it: Kopf's fields, a message cut to what the
 * API server accepts, and timestamps in the formats it parses.
 *
 * @module
 */

import type { KubernetesObject } from "../model/body.ts";
import type { ObjectReference } from "../model/references.ts";
import type { PostingSettings } from "../settings/posting.ts";

/** The longest message the API server accepts, in bytes of UTF-8 (it reports them as "characters"). */
export const MAX_MESSAGE_LENGTH = 1024;
/** What replaces the middle of a message that is too long. */
export const CUT_MESSAGE_INFIX = "...";

const encoder = new TextEncoder();

/**
 * Cuts a message that is too long in the middle, as Kopf does: the first 511 and the last 510
 * characters around `...`, 1024 in total. The limit is applied to UTF-8 bytes, which is what
 * the API server counts, so multi-byte text is cut too (on character boundaries); for ASCII it is
 * exactly Kopf's cut.
 *
 * @example
 * ```ts
 * import { truncateMessage } from "./event_body.ts";
 * const cut = truncateMessage("a".repeat(600) + "b".repeat(600));
 * console.assert(cut === "a".repeat(511) + "..." + "b".repeat(510));
 * ```
 */
export function truncateMessage(message: string): string {
  if (encoder.encode(message).length <= MAX_MESSAGE_LENGTH) return message;
  const infix = CUT_MESSAGE_INFIX;
  const headBudget = Math.floor(MAX_MESSAGE_LENGTH / 2) - Math.floor(infix.length / 2);
  const tailBudget = MAX_MESSAGE_LENGTH - headBudget - infix.length;
  const chars = Array.from(message); // code points, never half a surrogate pair
  let head = "", headBytes = 0;
  for (const char of chars) {
    const size = encoder.encode(char).length;
    if (headBytes + size > headBudget) break;
    head += char;
    headBytes += size;
  }
  let tail = "", tailBytes = 0;
  for (let index = chars.length - 1; index >= 0; index--) {
    const size = encoder.encode(chars[index]).length;
    if (tailBytes + size > tailBudget) break;
    tail = chars[index] + tail;
    tailBytes += size;
  }
  return head + infix + tail;
}

/**
 * The namespace an Event about an object goes to: the object's own, or for cluster-scoped
 * objects, the credentials' default namespace, else `default`.
 */
export function eventNamespace(ref: ObjectReference, defaultNamespace?: string): string {
  return ref.namespace || defaultNamespace || "default";
}

/** `2026-01-02T03:04:05Z`: the format of `firstTimestamp`/`lastTimestamp` (seconds). */
export function formatTime(ms: number): string {
  return new Date(ms).toISOString().replace(/\.\d+Z$/, "Z");
}

/**
 * `2026-01-02T03:04:05.678000Z`: the format of `eventTime`. The API server requires exactly six
 * fractional digits there and rejects JavaScript's three.
 */
export function formatMicroTime(ms: number): string {
  return new Date(ms).toISOString().replace(/\.(\d{3})Z$/, ".$1000Z");
}

/** What one Event says and about what; `count` and times cover the repeats it stands for. */
export interface EventFields {
  /** The object it is about; its namespace is set to the Event's namespace. */
  ref: ObjectReference;
  /** The namespace the Event goes to (see {@linkcode eventNamespace}). */
  namespace: string;
  /** `Normal`, `Warning`, `Error`, ... */
  type: string;
  /** A short CamelCase reason, e.g. `Logging`. */
  reason: string;
  /** The message, already truncated. */
  message: string;
  /** How many occurrences it stands for. */
  count: number;
  /** When it first happened (ms since the epoch). */
  first: number;
  /** When it last happened (ms since the epoch). */
  last: number;
}

/** The body to POST for an Event: Kopf's fields, `count` and the timestamps of its occurrences. */
export function buildEventBody(fields: EventFields, settings: PostingSettings): KubernetesObject {
  return {
    apiVersion: "v1",
    kind: "Event",
    metadata: { namespace: fields.namespace, generateName: settings.eventNamePrefix },
    action: "Action?",
    type: fields.type,
    reason: fields.reason,
    message: fields.message,
    reportingComponent: settings.reportingComponent,
    reportingInstance: settings.reportingInstance,
    source: { component: settings.reportingComponent },
    involvedObject: { ...fields.ref, namespace: fields.namespace },
    firstTimestamp: formatTime(fields.first),
    lastTimestamp: formatTime(fields.last),
    eventTime: formatMicroTime(fields.first),
    count: fields.count,
  };
}
