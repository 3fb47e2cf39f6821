/**
 * What the peers of one peering object mean for an operator: which records are dead (to be
 * removed), which live peers outrank it or tie with it (so that it pauses), and when the earliest
 * of those blocking peers expires (so that it looks again then). Pure logic: no API, no clock.
 *
 * @module
 */

import { isExpired, type Peer } from "./peering.ts";

/** The verdict on the peers of one peering object, from one operator's point of view. */
export interface PeeringConflicts {
  /** Expired records of other peers: to be removed from the peering object. */
  dead: Peer[];
  /** Live peers of a higher priority: the operator pauses in their favour. */
  higher: Peer[];
  /** Live peers of the same priority (self excluded): all of them pause, self included. */
  same: Peer[];
  /** Whether the operator must pause: any live peer of a higher or the same priority. */
  paused: boolean;
  /** The earliest deadline among the blocking peers (higher and same): evaluate again then. */
  recheckAt: Date | undefined;
}

/** What {@linkcode findConflicts} looks at. */
export interface ConflictsInput {
  /** The peers of one peering object, as read from its `status` (own record included or not). */
  peers: readonly Peer[];
  /** The operator's own identity: its record never counts as a conflict nor as dead. */
  identity: string;
  /** The operator's own priority. */
  priority: number;
  /** The moment of the evaluation. */
  now: Date;
}

/**
 * Sorts the peers of one peering object into dead ones, higher and same priority ones, and says
 * whether the operator pauses and when to look again.
 *
 * @example
 * ```ts
 * import { findConflicts } from "./peering_conflicts.ts";
 * import { parsePeers } from "./peering.ts";
 * const now = new Date("2024-05-01T12:00:30Z");
 * const peers = parsePeers({ other: { priority: 10, lifetime: 60, lastseen: "2024-05-01T12:00:00Z" } }, now);
 * const verdict = findConflicts({ peers, identity: "me", priority: 0, now });
 * // verdict.paused === true; verdict.recheckAt is 2024-05-01T12:01:00Z
 * ```
 *
 * @param input The peers, own identity and priority, and the moment.
 * @returns The verdict.
 */
export function findConflicts(input: ConflictsInput): PeeringConflicts {
  const dead: Peer[] = [];
  const higher: Peer[] = [];
  const same: Peer[] = [];
  for (const peer of input.peers) {
    if (peer.identity === input.identity) continue;
    if (isExpired(peer, input.now)) dead.push(peer);
    else if (peer.priority > input.priority) higher.push(peer);
    else if (peer.priority === input.priority) same.push(peer);
  }
  let recheckAt: Date | undefined;
  for (const peer of [...higher, ...same]) {
    if (!recheckAt || peer.deadline.getTime() < recheckAt.getTime()) recheckAt = peer.deadline;
  }
  return { dead, higher, same, paused: higher.length > 0 || same.length > 0, recheckAt };
}
