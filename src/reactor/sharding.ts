/**
 * Sharding as the operator runs it: the membership in the group decides the ranges, the streams
 * take them (the objects of ranges lost stop being handled, their daemons and timers with them,
 * before the membership tells the others; the objects of ranges gained are listed), and the scope
 * gives each stream its filter.
 *
 * @module
 */

import { getLogger } from "@logtape/logtape";
import type { ApiClient } from "../api/client.ts";
import { podNamespace } from "../api/service_account.ts";
import { serverFiltersShards } from "../api/sharded_listing.ts";
import { ShardMembership } from "../engines/shard_membership.ts";
import { formatShardRanges, shardRangesShare } from "../model/shard_range.ts";
import type { Settings } from "../settings/settings.ts";
import type { Orchestrator } from "./orchestration.ts";
import { ShardScope } from "./shard_scope.ts";

const logger = getLogger(["kopf", "sharding"]);

/** What {@linkcode Sharding.start} needs. */
export interface ShardingOptions {
  client: ApiClient;
  /** The settings; `sharding.group` is set. */
  settings: Settings;
  /** The streams that take the ranges when they change. */
  orchestrator: Orchestrator;
  signal: AbortSignal;
}

/** What the liveness endpoint shows of the sharding. */
export interface ShardingReport {
  readonly group: string;
  readonly identity: string;
  readonly members: readonly string[];
  /** The ranges handled, as `0x...-0x...` pairs. */
  readonly ranges: string;
  /** The fraction of the hash space they cover. */
  readonly share: number;
  /** Whether the API server filters the lists and watches. */
  readonly serverSide: boolean;
}

/** This replica's part in its shard group. */
export class Sharding {
  readonly scope: ShardScope;
  readonly #membership: ShardMembership;
  readonly #group: string;
  readonly #identity: string;

  private constructor(scope: ShardScope, membership: ShardMembership, group: string, identity: string) {
    this.scope = scope;
    this.#membership = membership;
    this.#group = group;
    this.#identity = identity;
  }

  /**
   * Detects whether the server filters (unless told), joins the group, and resolves once the
   * first ranges are applied. Until then no stream runs: an object is never handled unsharded.
   */
  static async start(options: ShardingOptions): Promise<Sharding> {
    const { client, settings, orchestrator, signal } = options;
    const { sharding } = settings;
    if (settings.leaderElection.enabled) {
      throw new Error(
        "settings.sharding.group and settings.leaderElection.enabled do not go together: choose one " +
          "(leader election: one replica works, the others stand by; sharding: every replica works on its share).",
      );
    }
    const group = sharding.group!;
    const namespace = sharding.namespace ?? podNamespace();
    const identity = sharding.identity ?? Deno.env.get("POD_NAME") ?? `${Deno.hostname()}-${Deno.pid}`;
    const serverSide = sharding.serverSide === "auto"
      ? await serverFiltersShards(client, namespace, signal)
      : sharding.serverSide === "always";
    const scope = new ShardScope(serverSide);
    await orchestrator.update({ partition: "" });
    logger.info("Joining the shard group {group} in {namespace} as {identity}; the API server {filters}.", {
      group,
      namespace,
      identity,
      filters: serverSide ? "filters the objects by shard" : "does not filter: this replica filters itself",
    });
    const membership = await ShardMembership.start({
      client,
      group,
      namespace,
      identity,
      leaseDuration: sharding.leaseDuration,
      watching: settings.watching,
      signal,
      apply: async (ranges) => {
        scope.ranges = ranges;
        await orchestrator.update({ partition: scope.partition });
      },
    });
    return new Sharding(scope, membership, group, identity);
  }

  /** Whether other members are alive (then the group's shared records stay when this one leaves). */
  get othersAlive(): boolean {
    return this.#membership.members.some((member) => member !== this.#identity);
  }

  /** The group's shared peering identity: one record for the group, whichever members run. */
  get peeringIdentity(): string {
    return `shard:${this.#group}`;
  }

  /** What the liveness endpoint shows. */
  report(): ShardingReport {
    const ranges = this.#membership.ranges;
    return {
      group: this.#group,
      identity: this.#identity,
      members: this.#membership.members,
      ranges: formatShardRanges(ranges),
      share: shardRangesShare(ranges),
      serverSide: this.scope.serverSide,
    };
  }

  /** Leaves the group (its streams have stopped already when the operator exits). */
  close(): Promise<void> {
    return this.#membership.close();
  }
}
