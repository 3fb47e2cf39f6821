/**
 * The Leases of a shard group as its members read and write them: a member's Lease is labelled
 * with the group, names its holder, and records in an annotation the ranges its holder handles now;
 * a peer counts as alive while its Lease keeps changing within its duration, as the reader observes
 * it by its own clock.
 *
 * @module
 */

import { getLogger } from "@logtape/logtape";
import type { ApiClient } from "../api/client.ts";
import { ApiConflictError, ApiNotFoundError } from "../api/errors.ts";
import { LEASES } from "../api/leases.ts";
import { resourcePath } from "../api/paths.ts";
import { formatMicroTime, type Lease, LEASE_API_VERSION } from "../model/lease.ts";
import { SHARD_HASH_SPACE } from "../model/shard_hash.ts";
import { formatShardRanges, parseShardRanges, type ShardRange } from "../model/shard_range.ts";

const logger = getLogger(["kopf", "sharding"]);

/** The label that puts a Lease into a shard group. */
export const SHARD_GROUP_LABEL = "kopf.dev/shard-group";
/** The annotation with the ranges a member handles now (`formatShardRanges`). */
export const SHARD_RANGES_ANNOTATION = "kopf.dev/shard-ranges";

/** What a member knows of another member from its Lease. */
export interface Peer {
  readonly identity: string;
  /** The ranges it handles; everything if its record cannot be read (never overlap). */
  readonly ranges: ShardRange[];
  readonly renewTime: string;
  readonly duration: number;
  /** When (local clock, ms) its renewTime was last seen to change: it is alive for `duration` after. */
  readonly observedAt: number;
}

/** Where a member's Lease is and what it says of its holder. */
export interface ShardLeaseOptions {
  client: ApiClient;
  namespace: string;
  /** The Lease's name (`shardLeaseName`). */
  lease: string;
  group: string;
  identity: string;
  /** Seconds a claim lasts after its last renewal. */
  leaseDuration: number;
}

const EVERYTHING: ShardRange[] = [{ start: 0n, end: SHARD_HASH_SPACE }];

/**
 * A peer as its Lease shows it now; `previous` is what was known of it before, so that an
 * unchanged renewal keeps the moment it was first seen.
 */
export function peerOf(lease: Lease, previous: Peer | undefined, defaultDuration: number): Peer {
  const renewTime = lease.spec?.renewTime ?? "";
  return {
    identity: lease.spec?.holderIdentity ?? "",
    ranges: readRanges(lease),
    renewTime,
    duration: lease.spec?.leaseDurationSeconds ?? defaultDuration,
    observedAt: previous && previous.renewTime === renewTime ? previous.observedAt : Date.now(),
  };
}

/** Whether a peer's Lease has changed within its duration, as this member observed it. */
export function alive(peer: Peer, now: number): boolean {
  return peer.identity !== "" && now - peer.observedAt < peer.duration * 1000;
}

/** The ranges a peer's Lease records; all of them if unreadable (a broken record must not cause an overlap). */
function readRanges(lease: Lease): ShardRange[] {
  const text = lease.metadata.annotations?.[SHARD_RANGES_ANNOTATION] ?? "";
  try {
    return parseShardRanges(text);
  } catch (error) {
    logger.warning("The shard Lease {name} has an unreadable record of ranges ({error}); taken as holding all.", {
      name: lease.metadata.name ?? "",
      error,
    });
    return EVERYTHING;
  }
}

/** A consistent list of the group's Leases (not from a watch: it must show every claim made before now). */
export async function listShardLeases(
  client: ApiClient,
  namespace: string,
  group: string,
  signal: AbortSignal,
): Promise<Lease[]> {
  const list = await client.request<{ items: Lease[] }>({
    path: resourcePath(LEASES, { namespace }),
    query: { labelSelector: `${SHARD_GROUP_LABEL}=${group}` },
    resource: LEASES.plural,
    urgent: true,
    signal,
  });
  return list.items;
}

/** Writes a member's Lease: its record of the ranges handled, renewed at `now`; creates it if missing. */
export async function writeShardLease(
  options: ShardLeaseOptions,
  ranges: readonly ShardRange[],
  now: Date,
): Promise<void> {
  const { client, namespace, lease, group, identity, leaseDuration } = options;
  const renewTime = formatMicroTime(now);
  const metadata = {
    name: lease,
    labels: { [SHARD_GROUP_LABEL]: group },
    annotations: { [SHARD_RANGES_ANNOTATION]: formatShardRanges(ranges) },
  };
  const spec = { holderIdentity: identity, leaseDurationSeconds: Math.ceil(leaseDuration), renewTime };
  try {
    await client.request({
      method: "PATCH",
      path: resourcePath(LEASES, { namespace, name: lease }),
      body: { metadata, spec },
      contentType: "application/merge-patch+json",
      resource: LEASES.plural,
      urgent: true,
    });
  } catch (error) {
    if (!(error instanceof ApiNotFoundError)) throw error;
    await client.request({
      method: "POST",
      path: resourcePath(LEASES, { namespace }),
      body: { apiVersion: LEASE_API_VERSION, kind: "Lease", metadata, spec: { ...spec, acquireTime: renewTime } },
      resource: LEASES.plural,
      urgent: true,
    }).catch((conflict) => {
      // Created meanwhile by an earlier attempt of ours: the next renewal patches it.
      if (!(conflict instanceof ApiConflictError)) throw conflict;
    });
  }
}

/**
 * The Lease name of a member: `<group>-<identity>` made a valid object name (lowercase letters,
 * digits, `-` and `.`, at most 253 characters), with a digest of the original when that changed it.
 */
export function shardLeaseName(group: string, identity: string): string {
  const raw = `${group}-${identity}`;
  const clean = raw.toLowerCase().replace(/[^a-z0-9.-]+/g, "-").replace(/^[^a-z0-9]+|[^a-z0-9]+$/g, "");
  if (clean === raw && clean.length <= 253) return clean;
  let hash = 0x811c9dc5;
  for (const char of raw) hash = Math.imul(hash ^ char.codePointAt(0)!, 0x01000193) >>> 0;
  return `${clean.slice(0, 240)}-${hash.toString(16).padStart(8, "0")}`;
}
