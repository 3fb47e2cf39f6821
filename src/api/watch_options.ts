/**
 * What a watch stream is for: the options it starts with ({@linkcode WatchOptions}: namespace,
 * selectors, the filter of objects, timing, an earlier stream's state) and the scope it may be
 * changed to while it runs ({@linkcode WatchScope}, for `Watcher.rescope` in `watching.ts`).
 *
 * @module
 */

import type { WatchingSettings } from "../settings/watching.ts";
import type { WatchState } from "./watch_state.ts";

/** Options of a watch stream. */
export interface WatchOptions {
  /** The namespace to watch; absent or `null` for all namespaces (and for cluster-scoped resources). */
  namespace?: string | null;
  /** A label selector passed to the server. */
  labelSelector?: string;
  /** A field selector passed to the server. */
  fieldSelector?: string;
  /**
   * A `shardSelector` passed to the server (Kubernetes 1.36's sharded list and watch, behind the
   * `ShardedListAndWatch` gate): only objects whose hash falls into its ranges are listed and watched.
   */
  shardSelector?: string;
  /**
   * Which objects (by uid) the stream is for: the others are dropped where they arrive, neither
   * delivered nor remembered, so that a filter applied here costs no memory per dropped object
   * (e.g. the shard ranges, where the server does not filter). `Watcher.rescope` changes it.
   */
  accepts?: (uid: string) => boolean;
  /** Timing and paging; Kopf's defaults when absent. */
  settings?: WatchingSettings;
  /** Ends the stream. */
  signal?: AbortSignal;
  /** Start from an earlier stream's state (its resume point and known objects) instead of listing. */
  state?: WatchState;
  /**
   * With a label selector: check each deletion with a GET, and report an object that still
   * exists (it stopped matching the selector, which the server reports as a deletion) as a
   * `MODIFIED` with its current state, and `left: true` unless it matches again.
   */
  confirmDeletions?: boolean;
}

/** What a stream is for after `Watcher.rescope`. */
export interface WatchScope {
  /** The new `shardSelector` (absent: none). */
  shardSelector?: string;
  /** The new filter of objects by uid (absent: all). */
  accepts?: (uid: string) => boolean;
  /** List again (e.g. objects were gained that the stream has not seen); otherwise the watch goes on from where it was. */
  relist?: boolean;
  /** Known objects that the listing delivers again as first seen, even unchanged (e.g. gained ones the stream only indexed). */
  revisit?: (uid: string) => boolean;
}
