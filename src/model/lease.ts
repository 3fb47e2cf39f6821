/**
 * `coordination.k8s.io/v1` Leases as plain data, for leader election: the record's fields, its
 * MicroTime timestamps, the specs written to acquire, renew and release a Lease, and the decision
 * whether a replica may take it. Nothing here talks to the API (see `src/api/leases.ts`) or keeps
 * time (see `src/engines/leader_election.ts`).
 *
 * Expiry is judged by the local clock of the observer, as client-go does: clocks of different
 * machines disagree, but each machine measures durations well. The holder's `renewTime` may only
 * start the countdown a little earlier than the observation (a bounded trust, see
 * {@linkcode renewalAge}): a renewal is seen some time after it is sent, and without that the
 * wait after a crash would exceed the lease duration by the API server's delay.
 *
 * @module
 */

import type { ObjectMeta } from "./body.ts";

/** The `spec` of a Lease: who holds it, for how long, and since when. */
export interface LeaseSpec {
  /** The holder's identity; `""` or absent when nobody holds it (released). */
  holderIdentity?: string | null;
  /** Seconds the holder's claim lasts after each renewal. */
  leaseDurationSeconds?: number | null;
  /** When the current holder acquired it (MicroTime). */
  acquireTime?: string | null;
  /** When the holder last renewed it (MicroTime). */
  renewTime?: string | null;
  /** How many times the holder has changed. */
  leaseTransitions?: number | null;
}

/** A Lease object as it travels as JSON. */
export interface Lease {
  /** `coordination.k8s.io/v1`. */
  apiVersion?: string;
  /** `Lease`. */
  kind?: string;
  /** Name, namespace, resourceVersion (which every write must carry). */
  metadata: ObjectMeta;
  /** The record. */
  spec?: LeaseSpec;
}

/** The `apiVersion` of Leases. */
export const LEASE_API_VERSION = "coordination.k8s.io/v1";

/**
 * Formats a moment as a Kubernetes MicroTime: UTC with six fractional digits, e.g.
 * `2024-05-01T12:00:00.123000Z` (JavaScript dates have milliseconds; the rest is zeros).
 *
 * @example
 * ```ts
 * import { formatMicroTime } from "./lease.ts";
 * formatMicroTime(new Date("2024-05-01T12:00:00.123Z")); // "2024-05-01T12:00:00.123000Z"
 * ```
 *
 * @param date The moment.
 * @returns The MicroTime text.
 */
export function formatMicroTime(date: Date): string {
  return date.toISOString().replace(/\.(\d{3})Z$/, ".$1000Z");
}

const RFC3339 = /^(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2})(?:\.(\d+))?(Z|[+-]\d{2}:\d{2})$/i;

/**
 * Parses a MicroTime (or any RFC 3339 time, with or without fractions or an offset); digits
 * beyond milliseconds are dropped.
 *
 * @example
 * ```ts
 * import { parseMicroTime } from "./lease.ts";
 * parseMicroTime("2024-05-01T12:00:00.123456Z")?.toISOString(); // "2024-05-01T12:00:00.123Z"
 * parseMicroTime("yesterday"); // null
 * ```
 *
 * @param text The time as written in a Lease.
 * @returns The moment, or `null` if the text is absent or not a time.
 */
export function parseMicroTime(text: string | null | undefined): Date | null {
  const match = text ? RFC3339.exec(text.trim()) : null;
  if (!match) return null;
  const [, seconds, fraction, zone] = match;
  const millis = (fraction ?? "").padEnd(3, "0").slice(0, 3);
  const date = new Date(`${seconds}.${millis}${zone.toUpperCase()}`);
  return Number.isNaN(date.getTime()) ? null : date;
}

/** The holder of a Lease record, `""` when nobody holds it. */
export function leaseHolder(spec: LeaseSpec | null | undefined): string {
  return spec?.holderIdentity ?? "";
}

/**
 * Whether two records are the same for leader election: same holder, duration, times and
 * transitions. Observers restart their expiry countdown whenever the record changes.
 */
export function sameLeaseRecord(a: LeaseSpec | null | undefined, b: LeaseSpec | null | undefined): boolean {
  if (!a || !b) return !a && !b;
  return leaseHolder(a) === leaseHolder(b) &&
    (a.leaseDurationSeconds ?? null) === (b.leaseDurationSeconds ?? null) &&
    (a.acquireTime ?? null) === (b.acquireTime ?? null) &&
    (a.renewTime ?? null) === (b.renewTime ?? null) &&
    (a.leaseTransitions ?? 0) === (b.leaseTransitions ?? 0);
}

/**
 * The spec that claims a Lease for `identity`. Taking it back from oneself (e.g. a restart with the
 * same `POD_ID`) keeps `acquireTime` and `leaseTransitions`; taking it from another holder, or
 * after a release, counts one more transition. A new Lease starts with 0 transitions.
 *
 * @param previous The record being replaced; `null` when creating the Lease.
 * @param identity Who acquires it.
 * @param durationSeconds `leaseDurationSeconds` to announce.
 * @param now The moment of acquisition.
 */
export function acquiredLeaseSpec(
  previous: LeaseSpec | null,
  identity: string,
  durationSeconds: number,
  now: Date,
): LeaseSpec {
  const time = formatMicroTime(now);
  const own = previous !== null && leaseHolder(previous) === identity;
  const transitions = previous?.leaseTransitions ?? 0;
  return {
    holderIdentity: identity,
    leaseDurationSeconds: wholeSeconds(durationSeconds),
    acquireTime: own ? previous.acquireTime ?? time : time,
    renewTime: time,
    leaseTransitions: previous === null ? 0 : own ? transitions : transitions + 1,
  };
}

/** The spec that renews the holder's claim: only `renewTime` (and the announced duration) change. */
export function renewedLeaseSpec(current: LeaseSpec, durationSeconds: number, now: Date): LeaseSpec {
  return { ...current, leaseDurationSeconds: wholeSeconds(durationSeconds), renewTime: formatMicroTime(now) };
}

/**
 * The spec that gives a Lease up: no holder and a 1-second duration, so that any observer may
 * take it at once (as client-go's release does); the transitions are kept.
 */
export function releasedLeaseSpec(current: LeaseSpec, now: Date): LeaseSpec {
  const time = formatMicroTime(now);
  return {
    holderIdentity: "",
    leaseDurationSeconds: 1,
    acquireTime: time,
    renewTime: time,
    leaseTransitions: current.leaseTransitions ?? 0,
  };
}

/** Why a replica may take a Lease now. */
export type LeaseTakeReason =
  /** There is no Lease: create it. */
  | "missing"
  /** The Lease has no holder (released, or never held). */
  | "released"
  /** The holder has not renewed within its duration, by the observer's clock. */
  | "expired"
  /** The replica holds it already (e.g. it restarted with the same identity). */
  | "own";

/** Whether a replica may take a Lease, and if not, until when it is held. */
export type LeaseVerdict =
  | { take: true; reason: LeaseTakeReason }
  | {
    take: false;
    /** The current holder. */
    holder: string;
    /** When (on the observer's clock, ms) the claim expires unless renewed before. */
    expiresAt: number;
  };

/**
 * Decides whether `identity` may take a Lease: when it is missing, released, its own, or when
 * `leaseDurationSeconds` have passed on the observer's clock since the record last changed (an
 * observation that may be back-dated by {@linkcode renewalAge}).
 *
 * @example
 * ```ts
 * import { leaseVerdict } from "./lease.ts";
 * const spec = { holderIdentity: "other", leaseDurationSeconds: 15 };
 * leaseVerdict(spec, "me", 1_000, 10_000, 15); // { take: false, holder: "other", expiresAt: 16000 }
 * leaseVerdict(spec, "me", 1_000, 16_000, 15); // { take: true, reason: "expired" }
 * ```
 *
 * @param spec The record as last observed; `null` if the Lease does not exist.
 * @param identity Who asks.
 * @param observedAt When (observer's clock, ms) the record was seen to change last.
 * @param now The observer's clock now (ms).
 * @param defaultDurationSeconds The duration to assume if the record does not say.
 */
export function leaseVerdict(
  spec: LeaseSpec | null,
  identity: string,
  observedAt: number,
  now: number,
  defaultDurationSeconds: number,
): LeaseVerdict {
  if (spec === null) return { take: true, reason: "missing" };
  const holder = leaseHolder(spec);
  if (holder === "") return { take: true, reason: "released" };
  if (holder === identity) return { take: true, reason: "own" };
  const duration = spec.leaseDurationSeconds ?? defaultDurationSeconds;
  const expiresAt = observedAt + duration * 1000;
  if (now >= expiresAt) return { take: true, reason: "expired" };
  return { take: false, holder, expiresAt };
}

/**
 * How long ago the holder says it renewed the Lease (`renewTime`, by the observer's wall clock),
 * at most `trust` ms and never negative: the observer back-dates its observation by that much, so
 * that the delay between a renewal and its sight does not lengthen the wait after a crash. A
 * trust below `leaseDuration - renewDeadline` keeps two leaders apart even if the clocks disagree
 * by that much: the holder stops leading `renewDeadline` after its last successful renewal.
 *
 * @example
 * ```ts
 * import { renewalAge } from "./lease.ts";
 * const now = Date.parse("2026-01-01T00:00:10.000Z");
 * renewalAge({ renewTime: "2026-01-01T00:00:09.800000Z" }, now, 2_500); // 200
 * renewalAge({ renewTime: "2025-12-31T00:00:00.000000Z" }, now, 2_500); // 2500
 * ```
 *
 * @param spec The record as observed.
 * @param wallNow The observer's wall clock now (ms since the epoch).
 * @param trust The most it may be (ms).
 */
export function renewalAge(spec: LeaseSpec | null | undefined, wallNow: number, trust: number): number {
  const renewed = parseMicroTime(spec?.renewTime)?.getTime();
  if (renewed === undefined) return 0;
  return Math.min(trust, Math.max(0, wallNow - renewed));
}

/** `leaseDurationSeconds` is an integer field; fractions of a second round up (at least 1). */
function wholeSeconds(seconds: number): number {
  return Math.max(1, Math.ceil(seconds));
}
