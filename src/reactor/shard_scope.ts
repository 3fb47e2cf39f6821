/**
 * The part of the objects this replica handles under sharding: the ranges its membership holds
 * now, and snapshots of them for the streams (taken when a stream starts and when the ranges
 * change) -- the server-side `shardSelector` (where the API server filters) and the same test done
 * client-side (always: with `--watch-cache=false` the server does not filter watches without a
 * label selector, and older servers do not filter at all).
 *
 * @module
 */

import { formatShardRanges, ownsObject, type ShardRange, shardSelector } from "../model/shard_range.ts";

/** What a stream filters by, from one snapshot of the ranges. */
export interface ShardFilter {
  /** The ranges. */
  readonly ranges: readonly ShardRange[];
  /** The `shardSelector` for its lists and watches; absent when the server does not filter. */
  readonly selector?: string;
  /** Whether an object (by its uid) is this replica's. */
  owns(uid: string): boolean;
}

/** The ranges this replica handles, as they change; streams take snapshots of them. */
export class ShardScope {
  #ranges: readonly ShardRange[] = [];

  /** @param serverSide Whether lists and watches carry the selector (the server applies it). */
  constructor(readonly serverSide: boolean) {}

  /** The ranges held now. */
  get ranges(): readonly ShardRange[] {
    return this.#ranges;
  }

  /** Takes new ranges (the streams take them separately). */
  set ranges(ranges: readonly ShardRange[]) {
    this.#ranges = ranges;
  }

  /** The ranges' text: the orchestrator's partition, so that the streams take the ranges when it changes. */
  get partition(): string {
    return formatShardRanges(this.#ranges);
  }

  /** The filter of the ranges held now. */
  filter(): ShardFilter {
    const ranges = this.#ranges;
    const selector = this.serverSide && ranges.length ? shardSelector(ranges) : undefined;
    return { ranges, selector, owns: (uid) => ownsObject(ranges, uid) };
  }
}
