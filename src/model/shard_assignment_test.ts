import assert from "node:assert/strict";
import { assignShards, DEFAULT_SHARD_BUCKETS, type ShardMap } from "./shard_assignment.ts";
import { SHARD_HASH_SPACE, shardHash } from "./shard_hash.ts";
import { normalizeShardRanges, ownsObject } from "./shard_range.ts";

/** A seeded generator (mulberry32), so that every run checks the same names and uids. */
function seeded(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

type Random = () => number;
const pick = (random: Random, alphabet: string, length: number): string =>
  Array.from({ length }, () => alphabet[Math.floor(random() * alphabet.length)]).join("");
const POD_CHARS = "bcdfghjklmnpqrstvwxz2456789"; // The alphabet of generated pod-name suffixes.
const HEX = "0123456789abcdef";

/** Member-name styles seen in real deployments: Deployment pods, host-and-pid, StatefulSet pods, plain. */
const NAME_STYLES: Record<string, (index: number, random: Random) => string> = {
  deployment: (_, random) => `op-${pick(random, POD_CHARS, 9)}-${pick(random, POD_CHARS, 5)}`,
  host: (_, random) => `host-${Math.floor(random() * 100_000)}`,
  statefulset: (index) => `kopf-operator-${index}`,
  letters: (index) => "abcde"[index],
};

const uidRandom = seeded(5866);
const UIDS = Array.from({ length: 5000 }, () => {
  const hex = (length: number) => pick(uidRandom, HEX, length);
  return `${hex(8)}-${hex(4)}-4${hex(3)}-${pick(uidRandom, "89ab", 1)}${hex(3)}-${hex(12)}`;
});
const HASHES = UIDS.map(shardHash);

/** Each test draws its names from its own seed, so that a filtered run checks the same names. */
function namesOf(style: string, count: number, random: Random = seeded(count)): string[] {
  return Array.from({ length: count }, (_, index) => NAME_STYLES[style](index, random));
}

/** Owners of every bucket, by probing each bucket's first hash. */
function bucketOwners(map: ShardMap): string[] {
  const width = SHARD_HASH_SPACE / BigInt(map.buckets);
  return Array.from({ length: map.buckets }, (_, bucket) => map.ownerOf(BigInt(bucket) * width));
}

Deno.test("assignShards: the same map whatever the order and repetitions of the members", () => {
  const members = namesOf("deployment", 5);
  const reference = assignShards(members);
  for (const variant of [[...members].reverse(), [members[2], ...members, members[0]], [...members].sort()]) {
    const map = assignShards(variant);
    assert.deepEqual(map.members, reference.members);
    for (const member of members) assert.deepEqual(map.rangesOf(member), reference.rangesOf(member));
  }
  assert.equal(reference.buckets, DEFAULT_SHARD_BUCKETS);
  assert.deepEqual(reference.members, [...members].sort());
});

Deno.test("assignShards: the members' ranges cover the space exactly once, adjacent buckets merged", () => {
  for (const style of Object.keys(NAME_STYLES)) {
    for (let count = 1; count <= 5; count++) {
      const map = assignShards(namesOf(style, count));
      const all = map.members.flatMap((member) => map.rangesOf(member));
      const total = all.reduce((sum, range) => sum + (range.end - range.start), 0n);
      assert.equal(total, SHARD_HASH_SPACE, "no overlap");
      assert.deepEqual(normalizeShardRanges(all), [{ start: 0n, end: SHARD_HASH_SPACE }], "no gap");
      for (const member of map.members) {
        const ranges = map.rangesOf(member);
        const owned = Math.round(map.shareOf(member) * map.buckets);
        assert.ok(ranges.length <= Math.min(owned, map.buckets - owned + 1), `${ranges.length} ranges`);
        for (let i = 1; i < ranges.length; i++) assert.ok(ranges[i - 1].end < ranges[i].start, "merged");
        for (const range of ranges) assert.equal(map.ownerOf(range.start), member);
      }
    }
  }
});

Deno.test("assignShards: one member owns the whole space in one range", () => {
  const map = assignShards(["op-7d9f8b6c4-x2kqz"]);
  assert.deepEqual(map.rangesOf("op-7d9f8b6c4-x2kqz"), [{ start: 0n, end: SHARD_HASH_SPACE }]);
  assert.deepEqual(map.rangesOf("someone-else"), []);
  assert.equal(map.shareOf("someone-else"), 0);
});

/** Whether a member's share of the buckets is ⌊B/N⌋ or ⌈B/N⌉ of them. */
function even(map: ShardMap, member: string): boolean {
  const owned = Math.round(map.shareOf(member) * map.buckets);
  const fair = map.buckets / map.members.length;
  return owned === Math.floor(fair) || owned === Math.ceil(fair);
}

Deno.test("assignShards: ⌊B/N⌋ or ⌈B/N⌉ buckets each, ±10 points of 1/N in objects, for N = 1..5", () => {
  for (const style of Object.keys(NAME_STYLES)) {
    for (let count = 1; count <= 5; count++) {
      const map = assignShards(namesOf(style, count));
      const objects = new Map<string, number>();
      for (const hash of HASHES) objects.set(map.ownerOf(hash), (objects.get(map.ownerOf(hash)) ?? 0) + 1);
      for (const member of map.members) {
        const where = `${style}, N=${count}, ${member}`;
        const buckets = map.shareOf(member);
        const share = (objects.get(member) ?? 0) / HASHES.length;
        assert.ok(even(map, member), `${where}: ${buckets} of the buckets`);
        assert.ok(Math.abs(share - 1 / count) <= 0.10, `${where}: ${share} of the objects`);
      }
    }
  }
});

Deno.test("assignShards: ⌊B/N⌋ or ⌈B/N⌉ buckets each, over 400 random member sets", () => {
  const random = seeded(400);
  for (let trial = 0; trial < 50; trial++) {
    for (const style of ["deployment", "host"]) {
      for (let count = 2; count <= 5; count++) {
        const map = assignShards(namesOf(style, count, random));
        for (const member of map.members) {
          const where = `${map.members}: ${member} has ${map.shareOf(member)}`;
          assert.ok(even(map, member), where);
        }
      }
    }
  }
});

Deno.test("assignShards: member sets that rendezvous hashing alone skews are evened out", () => {
  // Rendezvous hashing alone gives these 64.1% / 35.9% of the buckets, and 20.3% to the third one.
  const skewed = [["op-5c8d7f9b6-w55k0", "op-5c8d7f9b6-w55k1"], [
    "op-5c8d7f9b6-w153k0",
    "op-5c8d7f9b6-w153k1",
    "op-5c8d7f9b6-w153k2",
  ]];
  for (const members of skewed) {
    const map = assignShards(members);
    for (const member of members) {
      assert.ok(even(map, member), `${member}: ${map.shareOf(member)}`);
    }
  }
});

/** Groups of five to grow and shrink: ten of each random style, one of each fixed one. */
function groupsOfFive(random: Random): string[][] {
  return Object.keys(NAME_STYLES).flatMap((style) =>
    Array.from({ length: style === "deployment" || style === "host" ? 10 : 1 }, () => namesOf(style, 5, random))
  );
}

/** What changed between two assignments: buckets that went to or came from `changed`, and the others. */
function movement(before: string[], after: string[], changed: string): { withChanged: number; between: number } {
  let withChanged = 0;
  let between = 0;
  for (let bucket = 0; bucket < before.length; bucket++) {
    if (before[bucket] === after[bucket]) continue;
    if (before[bucket] === changed || after[bucket] === changed) withChanged++;
    else between++;
  }
  return { withChanged, between };
}

Deno.test("assignShards: a join moves about 1/(N+1) of the objects, nearly all to the joiner", () => {
  let [transitions, moved, fair] = [0, 0, 0];
  for (const names of groupsOfFive(seeded(1))) {
    for (let count = 1; count <= 4; count++) {
      const where = `${names.slice(0, count + 1)}`;
      const afterMap = assignShards(names.slice(0, count + 1));
      const before = bucketOwners(assignShards(names.slice(0, count)));
      const { withChanged, between } = movement(before, bucketOwners(afterMap), names[count]);
      assert.equal(withChanged / before.length, afterMap.shareOf(names[count]), `${where}: the joiner's buckets`);
      assert.ok(between <= 16, `${where}: ${between} buckets moved between members that stayed`);
      transitions++;
      moved += (withChanged + between) / before.length;
      fair += 1 / (count + 1);
    }
  }
  // The evening out costs a few moves between the members that stayed: on average, a little over 1/(N+1).
  assert.ok(moved / transitions <= fair / transitions + 0.03, `${moved / transitions} moved on average`);
});

Deno.test("assignShards: a leave moves about 1/N of the objects, nearly all the leaver's", () => {
  const random = seeded(2);
  let [transitions, moved, fair] = [0, 0, 0];
  for (const names of groupsOfFive(random)) {
    for (let count = 2; count <= 5; count++) {
      const group = names.slice(0, count);
      const leaver = group[Math.floor(random() * count)];
      const where = `${group} without ${leaver}`;
      const beforeMap = assignShards(group);
      const before = bucketOwners(beforeMap);
      const after = bucketOwners(assignShards(group.filter((name) => name !== leaver)));
      const { withChanged, between } = movement(before, after, leaver);
      assert.equal(withChanged / before.length, beforeMap.shareOf(leaver), `${where}: all the leaver's buckets`);
      assert.ok(between <= 16, `${where}: ${between} buckets moved between members that stayed`);
      transitions++;
      moved += (withChanged + between) / before.length;
      fair += 1 / count;
    }
  }
  assert.ok(moved / transitions <= fair / transitions + 0.03, `${moved / transitions} moved on average`);
});

Deno.test("ownsObject and ownerOf agree: every uid is owned by exactly one member", () => {
  for (const style of ["deployment", "host"]) {
    const map = assignShards(namesOf(style, 3));
    const ranges = new Map(map.members.map((member) => [member, map.rangesOf(member)]));
    for (const uid of UIDS.slice(0, 2000)) {
      const owners = map.members.filter((member) => ownsObject(ranges.get(member)!, uid));
      assert.deepEqual(owners, [map.ownerOf(shardHash(uid))], uid);
    }
  }
});

Deno.test("assignShards: other bucket counts, and the refusals", () => {
  const members = namesOf("host", 3);
  for (const buckets of [1, 2, 64, 256, 4096]) {
    const map = assignShards(members, buckets);
    assert.equal(map.buckets, buckets);
    const total = map.members.reduce((sum, member) => sum + map.shareOf(member), 0);
    assert.ok(Math.abs(total - 1) < 1e-9);
  }
  assert.throws(() => assignShards([]), /at least one member/);
  for (const buckets of [0, 3, 100, 8192, 1.5]) {
    assert.throws(() => assignShards(members, buckets), /power of two from 1 to 4096/);
  }
  const map = assignShards(members);
  assert.throws(() => map.ownerOf(-1n), RangeError);
  assert.throws(() => map.ownerOf(SHARD_HASH_SPACE), /within \[0, 2\^64\)/);
  assert.equal(map.ownerOf(SHARD_HASH_SPACE - 1n), map.ownerOf(SHARD_HASH_SPACE - 2n));
});
