// Unit tests of what an indexer's result puts into its index (Kopf's content rules).

import assert from "node:assert/strict";
import { indexEntries } from "./index_entries.ts";

Deno.test("content: a plain object's entries go under their keys, values may be null", () => {
  assert.deepEqual(indexEntries({ a: 1, b: null }), [
    { encoded: '"a"', key: "a", value: 1 },
    { encoded: '"b"', key: "b", value: null },
  ]);
  const bare = Object.assign(Object.create(null), { x: { nested: true } });
  assert.deepEqual(indexEntries(bare), [{ encoded: '"x"', key: "x", value: { nested: true } }]);
});

Deno.test("content: a Map's entries go under their keys, tuples included", () => {
  const entries = indexEntries(new Map<unknown, unknown>([[["ns", "n"], 1], [null, 2], [3, 4]]));
  assert.deepEqual(entries?.map((entry) => entry.key), [["ns", "n"], null, 3]);
  assert.deepEqual(entries?.map((entry) => entry.encoded), ['["ns","n"]', "null", "3"]);
});

Deno.test("content: null/undefined change nothing; other values go under the key null", () => {
  assert.equal(indexEntries(null), null);
  assert.equal(indexEntries(undefined), null);
  class Memo {
    a = 1;
  }
  const memo = new Memo();
  for (const value of [["ns", "name"], "text", 0, false, memo, new Set([1])]) {
    assert.deepEqual(indexEntries(value), [{ encoded: "null", key: null, value }]);
  }
});

Deno.test("content: a Map key that cannot be compared by value is an error", () => {
  assert.throws(() => indexEntries(new Map([[Symbol("s"), 1]])), TypeError);
  assert.throws(() => indexEntries(new Map([[new Date(), 1]])), /index key/);
  assert.throws(() => indexEntries(new Map([[[() => 1], 1]])), TypeError);
});
