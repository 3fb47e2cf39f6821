import assert from "node:assert/strict";
import { LruMap } from "./lru.ts";

Deno.test("LruMap evicts the least recently used entry beyond its capacity", () => {
  const lru = new LruMap<string, number>(3);
  lru.set("a", 1).set("b", 2).set("c", 3);
  assert.equal(lru.get("a"), 1); // a becomes the most recent
  lru.set("d", 4); // evicts b
  assert.equal(lru.has("b"), false);
  assert.deepEqual(["a", "c", "d"].map((key) => lru.get(key)), [1, 3, 4]);
  lru.set("c", 30); // updating refreshes too
  lru.set("e", 5); // evicts a
  assert.equal(lru.has("a"), false);
  assert.equal(lru.size, 3);
  assert.equal(lru.delete("c"), true);
  assert.equal(lru.size, 2);
});

Deno.test("LruMap stays bounded under many distinct keys", () => {
  const lru = new LruMap<number, number>(4096);
  for (let index = 0; index < 10_000; index++) lru.set(index, index);
  assert.equal(lru.size, 4096);
  assert.equal(lru.has(10_000 - 4096 - 1), false);
  assert.equal(lru.has(10_000 - 4096), true);
});

Deno.test("LruMap refuses a capacity below 1", () => {
  assert.throws(() => new LruMap(0), RangeError);
});
