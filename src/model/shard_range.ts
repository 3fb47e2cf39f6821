/**
 * Ranges of the 64-bit shard hash space and the `shardSelector` text that asks the API server for the objects
 * whose `metadata.uid` hashes into them, plus the same test done client-side, so that a replica filters
 * identically whether or not the server does.
 *
 * Checked against Kubernetes v1.36.3 (KEP-5866, feature gate `ShardedListAndWatch`):
 * - `Parse` in `k8s.io/apiserver/pkg/sharding/parser.go`: the selector is a CEL expression of
 *   `shardRange(FIELD, 'START', 'END')` calls joined by `||`, nothing else; FIELD is `object.metadata.uid` or
 *   `object.metadata.namespace` (the same in every call); each bound is a single-quoted `0x` followed by exactly
 *   16 lowercase hex digits, or the literal `0x10000000000000000` (2^64); START must be below END; an empty
 *   selector is refused. A refused selector is an HTTP 500 on v1.36.3, so {@linkcode shardSelector} only ever
 *   renders bounds of that form. (The API reference's own examples use `'0x0'`, which this parser refuses.)
 * - `shardSelector.Matches` and `HexLess` in `k8s.io/apimachinery/pkg/sharding/selector.go`: an object matches
 *   when its hash `h` satisfies `START <= h < END` for any one of the ranges (start inclusive, end exclusive).
 * - The CEL parser's default limit is 100,000 code points per expression; one range renders as 75 characters (76 when
 *   it ends at 2^64), 79 with its ` || `.
 *
 * @module
 */

import { SHARD_HASH_SPACE, shardHash } from "./shard_hash.ts";

/**
 * A half-open range `[start, end)` of the shard hash space: `0 <= start < end <= 2^64`.
 */
export interface ShardRange {
  /** The smallest hash in the range (inclusive). */
  readonly start: bigint;
  /** The first hash after the range (exclusive); `2^64` for a range that runs to the end of the space. */
  readonly end: bigint;
}

/** What a member gained and lost between two assignments, for handover and logging. */
export interface ShardMove {
  /** Hashes owned after but not before, as normalized ranges. */
  readonly gained: ShardRange[];
  /** Hashes owned before but not after, as normalized ranges. */
  readonly lost: ShardRange[];
}

const SHARD_FIELD = "object.metadata.uid";

/**
 * Renders a range bound as the API server accepts it: `0x` and 16 lowercase hex digits, or
 * `0x10000000000000000` for 2^64.
 *
 * @example
 * ```ts
 * import { formatShardBound } from "./shard_range.ts";
 * formatShardBound(0x40n << 56n); // "0x4000000000000000"
 * ```
 *
 * @param value A bound in `[0, 2^64]`.
 * @returns The bound's text, without quotes.
 * @throws {RangeError} When the value is outside `[0, 2^64]`.
 */
export function formatShardBound(value: bigint): string {
  if (value < 0n || value > SHARD_HASH_SPACE) {
    throw new RangeError(`A shard range bound must be within [0, 2^64]; got ${value}.`);
  }
  return value === SHARD_HASH_SPACE ? "0x10000000000000000" : `0x${value.toString(16).padStart(16, "0")}`;
}

/**
 * Sorts ranges and merges those that overlap or touch, after checking each one.
 *
 * @param ranges Ranges in any order.
 * @returns Disjoint, non-adjacent ranges in ascending order, covering the same hashes.
 * @throws {RangeError} When a range is not `0 <= start < end <= 2^64`.
 */
export function normalizeShardRanges(ranges: readonly ShardRange[]): ShardRange[] {
  for (const range of ranges) {
    if (!(0n <= range.start && range.start < range.end && range.end <= SHARD_HASH_SPACE)) {
      throw new RangeError(
        `A shard range must satisfy 0 <= start < end <= 2^64; got [${range.start}, ${range.end}).`,
      );
    }
  }
  const sorted = [...ranges].sort((a, b) => (a.start < b.start ? -1 : a.start > b.start ? 1 : 0));
  const merged: ShardRange[] = [];
  for (const range of sorted) {
    const last = merged.at(-1);
    if (last && range.start <= last.end) {
      if (range.end > last.end) merged[merged.length - 1] = { start: last.start, end: range.end };
    } else {
      merged.push({ start: range.start, end: range.end });
    }
  }
  return merged;
}

/**
 * The `shardSelector` query parameter that makes the API server list and watch only the objects whose
 * `metadata.uid` hashes into the given ranges. Touching ranges are merged first, so the text is as short as
 * the ranges allow: 79 characters per merged range, less 3.
 *
 * @example
 * ```ts
 * import { shardSelector } from "./shard_range.ts";
 * shardSelector([{ start: 0n, end: 1n << 62n }, { start: 3n << 62n, end: 1n << 64n }]);
 * // "shardRange(object.metadata.uid, '0x0000000000000000', '0x4000000000000000') ||
 * //  shardRange(object.metadata.uid, '0xc000000000000000', '0x10000000000000000')" (one line)
 * ```
 *
 * @param ranges The ranges to select, at least one.
 * @returns The selector text (not URL-encoded).
 * @throws {RangeError} When there are no ranges (the server refuses an empty selector; a replica that owns
 *   nothing should not list at all) or a range is invalid.
 */
export function shardSelector(ranges: readonly ShardRange[]): string {
  const normalized = normalizeShardRanges(ranges);
  if (normalized.length === 0) {
    throw new RangeError("A shard selector needs at least one range; with none, do not list or watch at all.");
  }
  return normalized
    .map((r) => `shardRange(${SHARD_FIELD}, '${formatShardBound(r.start)}', '${formatShardBound(r.end)}')`)
    .join(" || ");
}

/**
 * Whether a hash falls into any of the ranges, with the server's bounds: start inclusive, end exclusive.
 *
 * @param ranges The ranges, in any order.
 * @param hash A shard hash.
 * @returns `true` when some range holds the hash.
 */
export function inShardRanges(ranges: readonly ShardRange[], hash: bigint): boolean {
  return ranges.some((range) => range.start <= hash && hash < range.end);
}

/**
 * Whether an object belongs to the ranges: the client-side twin of the server's `shardSelector` filter.
 *
 * @example
 * ```ts
 * import { ownsObject } from "./shard_range.ts";
 * ownsObject([{ start: 0n, end: 1n << 63n }], "d2b0a9f3-6c1e-4c52-9f7e-3b8a1e5d4c21"); // true (0x7a93...)
 * ```
 *
 * @param ranges The ranges, in any order.
 * @param uid The object's `metadata.uid`.
 * @returns `true` when the uid's hash falls into some range.
 */
export function ownsObject(ranges: readonly ShardRange[], uid: string): boolean {
  return inShardRanges(ranges, shardHash(uid));
}

/**
 * The hashes gained and lost from one set of ranges to another, e.g. a member's ranges in the assignment
 * before and after a member joined.
 *
 * @param before The ranges owned before (`[]` when none).
 * @param after The ranges owned after.
 * @returns The normalized differences both ways.
 * @throws {RangeError} When a range is invalid.
 */
export function movedRanges(before: readonly ShardRange[], after: readonly ShardRange[]): ShardMove {
  const old = normalizeShardRanges(before);
  const now = normalizeShardRanges(after);
  return { gained: subtract(now, old), lost: subtract(old, now) };
}

/**
 * The fraction of the hash space the ranges cover, e.g. `0.25` for a quarter.
 *
 * @param ranges The ranges, in any order; overlaps are counted once.
 * @returns A number in `[0, 1]`.
 */
export function shardRangesShare(ranges: readonly ShardRange[]): number {
  const covered = normalizeShardRanges(ranges).reduce((sum, r) => sum + (r.end - r.start), 0n);
  return Number(covered) / Number(SHARD_HASH_SPACE);
}

/** The parts of normalized `from` not in normalized `minus`. */
function subtract(from: readonly ShardRange[], minus: readonly ShardRange[]): ShardRange[] {
  const rest: ShardRange[] = [];
  for (const range of from) {
    let cursor = range.start;
    for (const cut of minus) {
      if (cut.end <= cursor || cut.start >= range.end) continue;
      if (cut.start > cursor) rest.push({ start: cursor, end: cut.start });
      cursor = cut.end;
    }
    if (cursor < range.end) rest.push({ start: cursor, end: range.end });
  }
  return rest;
}

/**
 * The compact text of ranges as a member records them (in its Lease): `0x...-0x...` pairs joined by commas, in the
 * bounds' own form; `""` for none.
 *
 * @example
 * ```ts
 * import { formatShardRanges } from "./shard_range.ts";
 * formatShardRanges([{ start: 0n, end: 1n << 63n }]); // "0x0000000000000000-0x8000000000000000"
 * ```
 */
export function formatShardRanges(ranges: readonly ShardRange[]): string {
  return normalizeShardRanges(ranges).map((r) => `${formatShardBound(r.start)}-${formatShardBound(r.end)}`).join(",");
}

/**
 * Reads the text of {@linkcode formatShardRanges}.
 *
 * @throws {RangeError} When the text is not of that form or a range is invalid.
 */
export function parseShardRanges(text: string): ShardRange[] {
  if (text.trim() === "") return [];
  return normalizeShardRanges(
    text.split(",").map((pair) => {
      const match = pair.trim().match(/^(0x[0-9a-f]{16}|0x10000000000000000)-(0x[0-9a-f]{16}|0x10000000000000000)$/);
      if (!match) throw new RangeError(`Not a shard range: ${JSON.stringify(pair)}; expected 0x<16 hex>-0x<16 hex>.`);
      return { start: BigInt(match[1]), end: BigInt(match[2]) };
    }),
  );
}

/** Whether two sets of ranges share any hash. */
export function shardRangesOverlap(a: readonly ShardRange[], b: readonly ShardRange[]): boolean {
  return a.some((x) => b.some((y) => x.start < y.end && y.start < x.end));
}
