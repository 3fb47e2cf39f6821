import assert from "node:assert/strict";
import { allAtOnce, asap, oneByOne, randomized, shuffled } from "./lifecycles.ts";

const due = [{ id: "a", retries: 2 }, { id: "b", retries: 1 }, { id: "c", retries: 1 }];
const ids = (handlers: { id: string }[]) => handlers.map((handler) => handler.id);

Deno.test("allAtOnce runs every due handler in registration order", () => {
  assert.deepEqual(ids(allAtOnce(due)), ["a", "b", "c"]);
});

Deno.test("asap runs the least retried handler, the earliest among equals", () => {
  assert.deepEqual(ids(asap(due)), ["b"]);
  assert.deepEqual(asap([]), []);
});

Deno.test("oneByOne runs the first; randomized one of them; shuffled all of them", () => {
  assert.deepEqual(ids(oneByOne(due)), ["a"]);
  assert.equal(randomized(due).length, 1);
  assert.ok(ids(due).includes(randomized(due)[0].id));
  assert.deepEqual(ids(shuffled(due)).sort(), ["a", "b", "c"]);
});
