import assert from "node:assert/strict";
import { assignShards } from "./shard_assignment.ts";
import { SHARD_HASH_SPACE, shardHash } from "./shard_hash.ts";
import {
  formatShardBound,
  inShardRanges,
  movedRanges,
  normalizeShardRanges,
  ownsObject,
  type ShardRange,
  shardRangesShare,
  shardSelector,
} from "./shard_range.ts";

// The grammar `Parse` in k8s.io/apiserver v0.36.3 (pkg/sharding/parser.go) accepts, narrowed to what we send:
// one field, bounds of exactly 16 lowercase hex digits or 2^64 as the end, ranges joined by " || ".
const BOUND = "'0x[0-9a-f]{16}'";
const END = "'(?:0x[0-9a-f]{16}|0x10000000000000000)'";
const RANGE = `shardRange\\(object\\.metadata\\.uid, ${BOUND}, ${END}\\)`;
const GRAMMAR = new RegExp(`^${RANGE}(?: \\|\\| ${RANGE})*$`);
const BOUNDS = /'(0x[0-9a-f]+)', '(0x[0-9a-f]+)'/g;

const Q = 1n << 62n; // A quarter of the space.

/** Every selector must parse and have start < end, ranges ascending and apart: what the server requires. */
function assertValidSelector(selector: string): void {
  assert.match(selector, GRAMMAR);
  let previousEnd = -1n;
  for (const [, start, end] of selector.matchAll(BOUNDS)) {
    assert.ok(BigInt(start) < BigInt(end), `${start} must be below ${end}`);
    assert.ok(BigInt(start) > previousEnd, `ranges must be ascending and merged: ${selector}`);
    assert.ok(BigInt(end) <= SHARD_HASH_SPACE);
    previousEnd = BigInt(end);
  }
}

Deno.test("formatShardBound: 0x and 16 lowercase hex digits, or 0x10000000000000000 for 2^64", () => {
  assert.equal(formatShardBound(0n), "0x0000000000000000");
  assert.equal(formatShardBound(Q), "0x4000000000000000");
  assert.equal(formatShardBound(0xabcn), "0x0000000000000abc");
  assert.equal(formatShardBound(SHARD_HASH_SPACE - 1n), "0xffffffffffffffff");
  assert.equal(formatShardBound(SHARD_HASH_SPACE), "0x10000000000000000");
  assert.throws(() => formatShardBound(-1n), RangeError);
  assert.throws(() => formatShardBound(SHARD_HASH_SPACE + 1n), /within \[0, 2\^64\]/);
});

Deno.test("shardSelector: the exact text the API server accepts", () => {
  assert.equal(
    shardSelector([{ start: 0n, end: Q }]),
    "shardRange(object.metadata.uid, '0x0000000000000000', '0x4000000000000000')",
  );
  assert.equal(
    shardSelector([{ start: 3n * Q, end: SHARD_HASH_SPACE }, { start: 0n, end: Q }]),
    "shardRange(object.metadata.uid, '0x0000000000000000', '0x4000000000000000') || " +
      "shardRange(object.metadata.uid, '0xc000000000000000', '0x10000000000000000')",
  );
  assert.equal(
    shardSelector([{ start: 0n, end: SHARD_HASH_SPACE }]),
    "shardRange(object.metadata.uid, '0x0000000000000000', '0x10000000000000000')",
  );
});

Deno.test("shardSelector: touching ranges are merged, nothing invalid is ever rendered", () => {
  assert.equal(
    shardSelector([{ start: Q, end: 2n * Q }, { start: 0n, end: Q }, { start: Q / 2n, end: Q + 1n }]),
    "shardRange(object.metadata.uid, '0x0000000000000000', '0x8000000000000000')",
  );
  assert.throws(() => shardSelector([]), /at least one range/);
  assert.throws(() => shardSelector([{ start: Q, end: Q }]), /0 <= start < end <= 2\^64/);
  assert.throws(() => shardSelector([{ start: 2n * Q, end: Q }]), RangeError);
  assert.throws(() => shardSelector([{ start: -1n, end: Q }]), RangeError);
  assert.throws(() => shardSelector([{ start: 0n, end: SHARD_HASH_SPACE + 1n }]), RangeError);
});

Deno.test("shardSelector: the selectors of real assignments follow the server's grammar and stay short", () => {
  const groups = [
    ["op-7d9f8b6c4-x2kqz"],
    ["op-7d9f8b6c4-x2kqz", "op-7d9f8b6c4-m8wtp"],
    ["host-1234", "host-1235", "host-1236"],
    ["replica-0", "replica-1", "replica-2", "replica-3", "replica-4"],
  ];
  for (const members of groups) {
    for (const buckets of [1, 2, 64, 128, 1024]) {
      const map = assignShards(members, buckets);
      for (const member of members) {
        const ranges = map.rangesOf(member);
        if (ranges.length === 0) continue;
        const selector = shardSelector(ranges);
        assertValidSelector(selector);
        const toTheEnd = ranges.at(-1)!.end === SHARD_HASH_SPACE ? 1 : 0; // 17 digits for 2^64.
        assert.equal(selector.length, 79 * ranges.length - 4 + toTheEnd);
        assert.ok(ranges.length <= Math.ceil(buckets / 2), `${ranges.length} ranges of ${buckets} buckets`);
      }
    }
  }
});

Deno.test("inShardRanges: start inclusive, end exclusive, up to 2^64", () => {
  const ranges: ShardRange[] = [{ start: Q, end: 2n * Q }, { start: 3n * Q, end: SHARD_HASH_SPACE }];
  assert.equal(inShardRanges(ranges, Q - 1n), false);
  assert.equal(inShardRanges(ranges, Q), true);
  assert.equal(inShardRanges(ranges, 2n * Q - 1n), true);
  assert.equal(inShardRanges(ranges, 2n * Q), false);
  assert.equal(inShardRanges(ranges, 3n * Q), true);
  assert.equal(inShardRanges(ranges, SHARD_HASH_SPACE - 1n), true);
  assert.equal(inShardRanges([], 0n), false);
});

Deno.test("ownsObject: the uid's FNV-1a hash against the ranges, with the server's bounds", () => {
  const uid = "d2b0a9f3-6c1e-4c52-9f7e-3b8a1e5d4c21"; // Hashes to 0x7a93b07c59d19825.
  const hash = 0x7a93b07c59d19825n;
  assert.equal(ownsObject([{ start: hash, end: hash + 1n }], uid), true);
  assert.equal(ownsObject([{ start: 0n, end: hash }], uid), false);
  assert.equal(ownsObject([{ start: hash + 1n, end: SHARD_HASH_SPACE }], uid), false);
  assert.equal(ownsObject([{ start: 0n, end: 2n * Q }], uid), true);
  assert.equal(
    ownsObject([{ start: 0n, end: 2n * Q }], uid),
    inShardRanges([{ start: 0n, end: 2n * Q }], shardHash(uid)),
  );
});

Deno.test("normalizeShardRanges: sorted, overlaps and neighbours merged, gaps kept", () => {
  assert.deepEqual(
    normalizeShardRanges([{ start: 5n, end: 9n }, { start: 0n, end: 2n }, { start: 2n, end: 3n }, {
      start: 6n,
      end: 7n,
    }]),
    [{ start: 0n, end: 3n }, { start: 5n, end: 9n }],
  );
  assert.deepEqual(normalizeShardRanges([]), []);
});

Deno.test("movedRanges: what a member gained and lost between two assignments", () => {
  const before: ShardRange[] = [{ start: 0n, end: 2n * Q }];
  const after: ShardRange[] = [{ start: Q, end: 3n * Q }];
  assert.deepEqual(movedRanges(before, after), {
    gained: [{ start: 2n * Q, end: 3n * Q }],
    lost: [{ start: 0n, end: Q }],
  });
  assert.deepEqual(movedRanges([], after), { gained: [{ start: Q, end: 3n * Q }], lost: [] });
  assert.deepEqual(movedRanges(after, after), { gained: [], lost: [] });
  assert.deepEqual(
    movedRanges([{ start: 0n, end: SHARD_HASH_SPACE }], [{ start: Q, end: 2n * Q }, { start: 3n * Q, end: 4n * Q }]),
    { gained: [], lost: [{ start: 0n, end: Q }, { start: 2n * Q, end: 3n * Q }] },
  );
});

Deno.test("shardRangesShare: the covered fraction of the space, overlaps once", () => {
  assert.equal(shardRangesShare([]), 0);
  assert.equal(shardRangesShare([{ start: 0n, end: SHARD_HASH_SPACE }]), 1);
  assert.equal(shardRangesShare([{ start: 0n, end: Q }, { start: Q / 2n, end: 2n * Q }]), 0.5);
});
