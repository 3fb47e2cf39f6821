/**
 * Membership of a shard group: each member holds a `coordination.k8s.io/v1` Lease labelled with
 * the group, renews it, and watches the group's Leases. The live members decide the assignment of
 * the hash space (`assignShards`: every member computes the same map), and each member records in
 * its Lease the ranges it handles now, so that a handover never overlaps:
 *
 * - ranges a member loses are released first -- the operator stops handling their objects (their
 *   daemons and timers exit) -- and only then removed from its Lease;
 * - ranges a member gains are taken only when no other live member's Lease holds them: claimed in
 *   its own Lease first, then checked with a fresh list of the group's Leases; a claim that meets
 *   another's is withdrawn and tried again (of two members that claim at once, the later one always
 *   sees the earlier one, so at most one goes on);
 * - a member that cannot renew for 80% of the lease duration (since its last renewal was sent) stops
 *   handling everything, before the others may take its ranges at the full duration (measured from
 *   when they saw that renewal, which is later); a timer holds it to that even when nothing else
 *   happens;
 * - a member that finds nobody handling anything (a group forming) waits a moment for the others
 *   started with it before its first claim: until none has joined for half a second, two seconds
 *   at most;
 * - a member that dies holds its ranges until its Lease has not changed for its duration, as this
 *   member observes it (by its own clock, so clock skew between nodes does not matter).
 *
 * @module
 */

import { getLogger } from "@logtape/logtape";
import type { ApiClient } from "../api/client.ts";
import { ApiNotFoundError } from "../api/errors.ts";
import { LEASES } from "../api/leases.ts";
import { resourcePath } from "../api/paths.ts";
import { Watcher } from "../api/watching.ts";
import type { Lease } from "../model/lease.ts";
import { assignShards } from "../model/shard_assignment.ts";
import {
  formatShardRanges,
  movedRanges,
  normalizeShardRanges,
  type ShardRange,
  shardRangesOverlap,
  shardRangesShare,
} from "../model/shard_range.ts";
import { kopfMetrics } from "../observability/metrics.ts";
import type { WatchingSettings } from "../settings/watching.ts";
import { sleep } from "../utils/sleep.ts";
import {
  alive,
  listShardLeases,
  type Peer,
  peerOf,
  SHARD_GROUP_LABEL,
  shardLeaseName,
  writeShardLease,
} from "./shard_leases.ts";

const logger = getLogger(["kopf", "sharding"]);

/** What a member needs. */
export interface ShardMembershipOptions {
  client: ApiClient;
  /** The group's name. */
  group: string;
  /** The namespace of the group's Leases. */
  namespace: string;
  /** This member's identity (unique in the group). */
  identity: string;
  /** Seconds a claim lasts after its last renewal. */
  leaseDuration: number;
  watching: WatchingSettings;
  /**
   * Makes the operator handle exactly these ranges; resolves once it does -- for ranges lost,
   * once their objects' handlers, daemons and timers have stopped.
   */
  apply: (ranges: readonly ShardRange[]) => Promise<void>;
  signal?: AbortSignal;
}

/**
 * The part of the lease duration after the last renewal was sent within which a member must
 * renew again or stop handling. Renewals come every quarter, so three in a row may be slow (a busy
 * API server, handlers keeping the process busy) before it stops: two thirds stopped and restarted
 * every member of a busy group every ~15 s (measured with CPU-bound handlers).
 */
const RENEW_DEADLINE = 0.8;

/**
 * How long (s, at most; a fifth of the lease duration if shorter) a member that finds no member
 * handling anything waits before it claims: replicas started together (a new Deployment) then
 * split the objects from the start, instead of the first one listing all of them and handing most
 * over moments later. A member that joins a working group claims at once.
 */
const FORMING = 2;

/**
 * How long (s) a forming group's member waits after the last member it saw join (itself at first)
 * before it claims, within {@linkcode FORMING}: replicas started together join within a fraction
 * of a second of each other, and waiting the whole of `FORMING` delayed every new group's first
 * handler by it.
 */
const SETTLING = 0.5;

/** One member of a shard group: see the module's description. */
export class ShardMembership {
  readonly #options: ShardMembershipOptions;
  readonly #lease: string;
  readonly #stop = new AbortController();
  readonly #peers = new Map<string, Peer>();
  #held: ShardRange[] = [];
  #renewedAt = 0;
  #members: string[] = [];
  #evaluation: Promise<void> = Promise.resolve();
  #evaluationQueued = false;
  #tasks: Promise<unknown>[] = [];
  #expiry?: ReturnType<typeof setTimeout>;
  #deadline?: ReturnType<typeof setTimeout>;
  #listed = Promise.withResolvers<void>();
  /** Until when (local clock, ms) a forming group's member only watches who else joins. */
  #formingUntil = 0;
  /** The latest end of the forming wait (local clock, ms), however many members join. */
  #formingEnds = 0;

  private constructor(options: ShardMembershipOptions) {
    this.#options = options;
    this.#lease = shardLeaseName(options.group, options.identity);
  }

  /**
   * Joins the group: creates (or takes back) this member's Lease, starts renewing it and watching
   * the group, and resolves once the group is known and the first assignment is applied.
   */
  static async start(options: ShardMembershipOptions): Promise<ShardMembership> {
    const member = new ShardMembership(options);
    options.signal?.addEventListener("abort", () => member.#stop.abort(), { once: true });
    await member.#write(member.#held);
    // Nothing is claimed before the group has been looked at.
    member.#formingUntil = Infinity;
    member.#tasks.push(member.#watch(), member.#renewals());
    await Promise.race([member.#listed.promise, sleep(options.leaseDuration, member.#stop.signal)]);
    const now = Date.now();
    const working = [...member.#peers.values()].some((peer) => alive(peer, now) && peer.ranges.length);
    const forming = working ? 0 : Math.min(FORMING, options.leaseDuration / 5);
    member.#formingEnds = now + forming * 1000;
    member.#formingUntil = Math.min(member.#formingEnds, now + SETTLING * 1000);
    // Each member that joins meanwhile moves the end (#observe), never past #formingEnds.
    while (Date.now() < member.#formingUntil) {
      if (await sleep((member.#formingUntil - Date.now()) / 1000, member.#stop.signal)) break;
    }
    member.#evaluate();
    await member.#evaluation;
    return member;
  }

  /** The ranges this member handles now. */
  get ranges(): readonly ShardRange[] {
    return this.#held;
  }

  /** The live members, this one included, sorted. */
  get members(): readonly string[] {
    return this.#members;
  }

  /** The name of this member's Lease. */
  get lease(): string {
    return this.#lease;
  }

  /**
   * Leaves the group: stops handling (the operator's streams stop anyway when it exits), then
   * removes the Lease, so that the others take the ranges at once instead of after its duration.
   */
  async close(): Promise<void> {
    this.#stop.abort();
    clearTimeout(this.#expiry);
    clearTimeout(this.#deadline);
    await Promise.allSettled(this.#tasks);
    await this.#evaluation;
    await this.#options.apply([]).catch((error) =>
      logger.error("Stopping the sharded streams failed: {error}", { error })
    );
    this.#held = [];
    const { client, namespace } = this.#options;
    await client.request({
      method: "DELETE",
      path: resourcePath(LEASES, { namespace, name: this.#lease }),
      resource: LEASES.plural,
      urgent: true,
    }).catch((error) => {
      if (!(error instanceof ApiNotFoundError)) {
        logger.warning("The shard Lease {lease} was not removed ({error}); the others take over after its duration.", {
          lease: this.#lease,
          error,
        });
      }
    });
    kopfMetrics.shardMembers.set([this.#options.group], 0);
    kopfMetrics.shardOwnedRatio.set([this.#options.group], 0);
  }

  /** Follows the group's Leases; every change is a reason to look at the assignment again. */
  async #watch(): Promise<void> {
    const { client, namespace, group, watching } = this.#options;
    const watcher = new Watcher(client, LEASES, {
      namespace,
      labelSelector: `${SHARD_GROUP_LABEL}=${group}`,
      settings: watching,
      signal: this.#stop.signal,
    });
    for await (const event of watcher) {
      if (event.type === "LISTED") {
        this.#listed.resolve();
      } else if (event.type === "DELETED") {
        this.#peers.delete(event.object.metadata.name ?? "");
      } else {
        this.#observe(event.object as unknown as Lease);
      }
      this.#evaluate();
    }
  }

  /** Records a peer's Lease as seen now. */
  #observe(lease: Lease): Peer | undefined {
    const name = lease.metadata.name ?? "";
    if (name === this.#lease) return undefined;
    const previous = this.#peers.get(name);
    const peer = peerOf(lease, previous, this.#options.leaseDuration);
    this.#peers.set(name, peer);
    const now = Date.now();
    if (now < this.#formingUntil && this.#formingUntil !== Infinity && alive(peer, now)) {
      if (!previous || !alive(previous, now)) {
        this.#formingUntil = Math.min(this.#formingEnds, now + SETTLING * 1000);
      }
    }
    return peer;
  }

  /** Renews this member's Lease every quarter of its duration. */
  async #renewals(): Promise<void> {
    const interval = this.#options.leaseDuration / 4;
    while (!await sleep(interval, this.#stop.signal)) {
      await this.#write(this.#held).catch((error) => {
        logger.warning("Renewing the shard Lease {lease} failed: {error}", { lease: this.#lease, error });
      });
      this.#evaluate();
    }
  }

  /** Runs one evaluation after another; a request during one runs once after it. */
  #evaluate(): void {
    if (this.#evaluationQueued || this.#stop.signal.aborted) return;
    this.#evaluationQueued = true;
    this.#evaluation = this.#evaluation.then(async () => {
      this.#evaluationQueued = false;
      if (this.#stop.signal.aborted) return;
      try {
        await this.#reassign();
      } catch (error) {
        logger.error("Reassigning the shards failed; retrying soon: {error}", { error });
        setTimeout(() => this.#evaluate(), 1000);
      }
    });
  }

  /** Brings the ranges handled in line with the assignment: releases first, then claims. */
  async #reassign(): Promise<void> {
    const { identity, leaseDuration, group } = this.#options;
    const now = Date.now();
    if (now - this.#renewedAt > leaseDuration * 1000 * RENEW_DEADLINE) {
      // Out of touch: the others may take our ranges once our Lease lapses; stop before that.
      if (this.#held.length) {
        logger.warning("The shard Lease {lease} could not be renewed: stopping all handling until it is.", {
          lease: this.#lease,
        });
        await this.#handle([]);
      }
      return;
    }
    const live = [...this.#peers.values()].filter((peer) => alive(peer, now));
    this.#members = [...new Set([identity, ...live.map((peer) => peer.identity)])].sort();
    this.#scheduleExpiry(live);
    kopfMetrics.shardMembers.set([group], this.#members.length);
    if (now < this.#formingUntil) return;
    const target = assignShards(this.#members).rangesOf(identity);
    const { gained, lost } = movedRanges(this.#held, target);
    if (lost.length) {
      await this.#handle(movedRanges(lost, this.#held).gained);
      await this.#write(this.#held);
    }
    const taken = normalizeShardRanges(live.flatMap((peer) => peer.ranges));
    const free = movedRanges(taken, gained).gained;
    if (free.length) await this.#claim(free);
  }

  /** Claims free ranges in the Lease, checks nobody else did, and starts handling them. */
  async #claim(free: ShardRange[]): Promise<void> {
    const claimed = normalizeShardRanges([...this.#held, ...free]);
    await this.#write(claimed);
    const { client, namespace, group } = this.#options;
    const leases = await listShardLeases(client, namespace, group, this.#stop.signal);
    const now = Date.now();
    const rival = leases
      .map((lease) => this.#observe(lease))
      .find((peer) => peer && alive(peer, now) && shardRangesOverlap(peer.ranges, free));
    if (rival) {
      // Both claimed at once; the later claim sees the earlier one and steps back (jittered, so that
      // two that both step back do not meet again).
      logger.info("Member {rival} claims ranges at the same time; trying again shortly.", { rival: rival.identity });
      await this.#write(this.#held);
      setTimeout(() => this.#evaluate(), 200 + Math.random() * 800);
      return;
    }
    await this.#handle(claimed);
  }

  /** Applies new ranges to the operator and reports the change. */
  async #handle(ranges: ShardRange[]): Promise<void> {
    const { gained, lost } = movedRanges(this.#held, ranges);
    if (!gained.length && !lost.length) return;
    await this.#options.apply(ranges);
    this.#held = ranges;
    const { group } = this.#options;
    kopfMetrics.shardHandovers.inc([group]);
    kopfMetrics.shardOwnedRatio.set([group], shardRangesShare(ranges));
    logger.info(
      "Shard ranges of {group} changed: {share}% of the objects now ({members} members); gained {gained}; lost {lost}.",
      {
        group,
        share: (shardRangesShare(ranges) * 100).toFixed(1),
        members: this.#members.length,
        gained: formatShardRanges(gained) || "none",
        lost: formatShardRanges(lost) || "none",
      },
    );
  }

  /** Looks again when the first live peer's Lease would lapse. */
  #scheduleExpiry(live: readonly Peer[]): void {
    clearTimeout(this.#expiry);
    if (!live.length) return;
    const due = Math.min(...live.map((peer) => peer.observedAt + peer.duration * 1000)) - Date.now();
    this.#expiry = setTimeout(() => this.#evaluate(), Math.max(0, due) + 100);
  }

  /** Writes this member's Lease: its record of the ranges handled, and a renewal. */
  async #write(ranges: readonly ShardRange[]): Promise<void> {
    const { leaseDuration } = this.#options;
    const sent = Date.now();
    await writeShardLease({ ...this.#options, lease: this.#lease }, ranges, new Date(sent));
    this.#renewedAt = sent;
    // Looked at again when this renewal's deadline passes, in case no other renewal succeeds by then.
    clearTimeout(this.#deadline);
    if (!this.#stop.signal.aborted) {
      const due = sent + leaseDuration * 1000 * RENEW_DEADLINE - Date.now();
      this.#deadline = setTimeout(() => this.#evaluate(), Math.max(0, due) + 50);
    }
  }
}
