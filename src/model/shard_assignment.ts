/**
 * Which member of a shard group owns which part of the hash space: a pure function of the set of live members,
 * so that every member computes the same map from the same Leases, with no coordinator and no history.
 *
 * The space `[0, 2^64)` is cut into a fixed number of equal buckets (128 by default). Each bucket goes to the
 * member with the highest weight for it (rendezvous hashing): the weight is a hash of the member's identity and
 * the bucket's index. When a member leaves, only its buckets move, each to its runner-up; when one joins, only
 * the buckets it now wins move, to it. Either way about 1/N of the objects move, not half of them.
 *
 * Rendezvous hashing alone balances only on average: with 128 buckets and two members, a share is 50% ± 4.4
 * points (one standard deviation), and the member with the most objects sets the pace of the group. A repair
 * evens the shares out: every member ends with `floor(B/N)` or `ceil(B/N)` buckets. A member above `ceil(B/N)` gives away
 * the buckets it loses least weight by to members below it; then a member below `floor(B/N)` takes, from members
 * above that, the buckets it loses least by. The price is a few more moves when the group changes: measured
 * over 5,000 random joins (N = 1..5 to N + 1), 33.8% of the buckets move on average against 32.4% with
 * rendezvous hashing alone, 2.2 buckets on average (at most 14) between members that stayed; a tolerance of
 * ±8 points instead moved 0.2 buckets between them but left shares up to 8 points apart.
 *
 * Why 128 buckets: the count trades the fineness of the shares (one bucket is 0.8% of the objects) and the
 * moves of the repair (fewer with a smaller spread under rendezvous hashing, `sqrt((N-1)/B)/N`: 4.4 points for
 * N = 2 with 128 buckets, 6.3 with 64) against the selector's length, which doubles with 256. A member with
 * `c` of `B` buckets has at most `min(c, B - c + 1)` ranges once adjacent buckets are merged, about
 * `B·(N-1)/N²` on average: 32 ranges for N = 2 (about 2.5 KB of selector, at most 41 ranges seen), 21 for
 * N = 5; never more than `ceil(B/2)` = 64 ranges, 5,053 characters (79 per range).
 * More members than buckets leave some members without any.
 *
 * @module
 */

import { SHARD_HASH_SPACE, shardHash } from "./shard_hash.ts";
import type { ShardRange } from "./shard_range.ts";

/** The number of equal buckets the hash space is cut into unless told otherwise. */
export const DEFAULT_SHARD_BUCKETS = 128;

const MAX_BUCKETS = 4096;
const GOLDEN_GAMMA = 0x9e3779b97f4a7c15n;

/**
 * The assignment of the hash space to the members of a shard group, as {@linkcode assignShards} computes it.
 */
export interface ShardMap {
  /** The members, unique and sorted. */
  readonly members: readonly string[];
  /** The number of equal buckets the hash space is cut into. */
  readonly buckets: number;
  /**
   * The ranges a member owns: its buckets, adjacent ones merged, in ascending order.
   *
   * @param member A member's identity.
   * @returns The ranges; `[]` for an identity that is not a member (or, with more members than buckets, owns
   *   none).
   */
  rangesOf(member: string): ShardRange[];
  /**
   * The member that owns a hash.
   *
   * @param hash A shard hash in `[0, 2^64)`, e.g. from `shardHash(uid)`.
   * @returns The owner's identity.
   * @throws {RangeError} When the hash is outside the space.
   */
  ownerOf(hash: bigint): string;
  /**
   * The fraction of the buckets a member owns.
   *
   * @param member A member's identity.
   * @returns A number in `[0, 1]`; `0` for an identity that is not a member.
   */
  shareOf(member: string): number;
}

/**
 * Assigns the hash space to a shard group's members: the same map for the same set of identities, whatever
 * their order or repetitions, on every machine.
 *
 * @example
 * ```ts
 * import { assignShards } from "./shard_assignment.ts";
 * import { shardSelector } from "./shard_range.ts";
 * const map = assignShards(["op-7d9f8b6c4-x2kqz", "op-7d9f8b6c4-m8wtp"]);
 * const selector = shardSelector(map.rangesOf("op-7d9f8b6c4-x2kqz"));
 * ```
 *
 * @param members The live members' identities; at least one.
 * @param buckets How many equal buckets to cut the space into: a power of two up to 4096. Every member of a
 *   group must use the same number.
 * @returns The assignment.
 * @throws {RangeError} When there are no members or the bucket count is not a power of two in `[1, 4096]`.
 */
export function assignShards(members: readonly string[], buckets: number = DEFAULT_SHARD_BUCKETS): ShardMap {
  if (!Number.isInteger(buckets) || buckets < 1 || buckets > MAX_BUCKETS || (buckets & (buckets - 1)) !== 0) {
    throw new RangeError(`The shard bucket count must be a power of two from 1 to ${MAX_BUCKETS}; got ${buckets}.`);
  }
  const unique = [...new Set(members)].sort(compareText);
  if (unique.length === 0) {
    throw new RangeError("A shard group needs at least one member to assign the hash space to.");
  }
  const weights = unique.map((member) => bucketWeights(member, buckets));
  const owners = highestWeightOwners(weights, buckets);
  repairBalance(owners, weights, buckets);
  return new BucketShardMap(unique, owners.map((index) => unique[index]));
}

class BucketShardMap implements ShardMap {
  readonly members: readonly string[];
  readonly buckets: number;
  readonly #owners: readonly string[];
  readonly #shift: bigint;

  constructor(members: readonly string[], owners: readonly string[]) {
    this.members = members;
    this.buckets = owners.length;
    this.#owners = owners;
    this.#shift = BigInt(64 - Math.log2(owners.length));
  }

  rangesOf(member: string): ShardRange[] {
    const ranges: ShardRange[] = [];
    for (let bucket = 0; bucket < this.buckets; bucket++) {
      if (this.#owners[bucket] !== member) continue;
      const start = BigInt(bucket) << this.#shift;
      const end = BigInt(bucket + 1) << this.#shift;
      const last = ranges.at(-1);
      if (last && last.end === start) ranges[ranges.length - 1] = { start: last.start, end };
      else ranges.push({ start, end });
    }
    return ranges;
  }

  ownerOf(hash: bigint): string {
    if (hash < 0n || hash >= SHARD_HASH_SPACE) {
      throw new RangeError(`A shard hash must be within [0, 2^64); got ${hash}.`);
    }
    return this.#owners[Number(hash >> this.#shift)];
  }

  shareOf(member: string): number {
    return this.#owners.filter((owner) => owner === member).length / this.buckets;
  }
}

/** A member's weight for every bucket: a well-mixed 64-bit hash of (identity, bucket index). */
function bucketWeights(member: string, buckets: number): bigint[] {
  const seed = mix64(shardHash(member));
  const weights: bigint[] = [];
  for (let bucket = 0; bucket < buckets; bucket++) {
    weights.push(mix64(seed ^ BigInt.asUintN(64, BigInt(bucket + 1) * GOLDEN_GAMMA)));
  }
  return weights;
}

/**
 * A 64-bit finalizer (the one of SplitMix64): FNV-1a of similar names ("host-1", "host-2") differs mostly in
 * low bits, and rendezvous hashing needs weights that look independent across members and buckets.
 */
function mix64(value: bigint): bigint {
  let z = BigInt.asUintN(64, (value ^ (value >> 30n)) * 0xbf58476d1ce4e5b9n);
  z = BigInt.asUintN(64, (z ^ (z >> 27n)) * 0x94d049bb133111ebn);
  return z ^ (z >> 31n);
}

/** Every bucket to the member with the highest weight for it (member indices into the sorted members). */
function highestWeightOwners(weights: readonly bigint[][], buckets: number): number[] {
  const owners: number[] = [];
  for (let bucket = 0; bucket < buckets; bucket++) {
    let best = 0;
    // Members are sorted, so on an (improbable) tie of weights the first name wins on every machine.
    for (let member = 1; member < weights.length; member++) {
      if (weights[member][bucket] > weights[best][bucket]) best = member;
    }
    owners.push(best);
  }
  return owners;
}

/**
 * Moves buckets, in place, until every member holds `lo = floor(B/N)` to `hi = ceil(B/N)` of them: first away from members
 * above `hi`, then to members below `lo`, each time the one move that loses the least weight (ties: the lower
 * bucket, then the earlier member). Neither phase undoes the other: moves away never fill a member above `hi`,
 * moves to a member never take from one at or below `lo`. While a bound is broken a move exists, as the counts
 * sum to the bucket count and `lo <= B/N <= hi`; the checks of `move`'s result only guard that reasoning.
 */
function repairBalance(owners: number[], weights: readonly bigint[][], buckets: number): void {
  const members = weights.length;
  const fair = buckets / members;
  const [lo, hi] = [Math.floor(fair), Math.ceil(fair)];
  const counts = new Array<number>(members).fill(0);
  for (const owner of owners) counts[owner]++;

  const move = (isSource: (owner: number) => boolean, isTarget: (member: number) => boolean): boolean => {
    let chosen: { bucket: number; target: number; loss: bigint } | null = null;
    for (let bucket = 0; bucket < buckets; bucket++) {
      const owner = owners[bucket];
      if (!isSource(owner)) continue;
      for (let target = 0; target < members; target++) {
        if (target === owner || !isTarget(target)) continue;
        const loss = weights[owner][bucket] - weights[target][bucket];
        if (chosen === null || loss < chosen.loss) chosen = { bucket, target, loss };
      }
    }
    if (chosen === null) return false;
    counts[owners[chosen.bucket]]--;
    counts[chosen.target]++;
    owners[chosen.bucket] = chosen.target;
    return true;
  };

  while (counts.some((count) => count > hi)) {
    if (!move((owner) => counts[owner] > hi, (target) => counts[target] < hi)) return;
  }
  while (counts.some((count) => count < lo)) {
    if (!move((owner) => counts[owner] > lo, (target) => counts[target] < lo)) return;
  }
}

function compareText(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
