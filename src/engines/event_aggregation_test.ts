import assert from "node:assert/strict";
import { EventAggregator, eventKey } from "./event_aggregation.ts";

const REF = { apiVersion: "v1", kind: "Pod", name: "p", uid: "u1", namespace: "ns" };

Deno.test("the aggregation key is the object, type, reason and message", () => {
  const key = eventKey(REF, "Warning", "Slow", "msg");
  assert.equal(eventKey({ ...REF }, "Warning", "Slow", "msg"), key);
  assert.notEqual(eventKey({ ...REF, uid: "u2" }, "Warning", "Slow", "msg"), key);
  assert.notEqual(eventKey(REF, "Normal", "Slow", "msg"), key);
  assert.notEqual(eventKey(REF, "Warning", "Fast", "msg"), key);
  assert.notEqual(eventKey(REF, "Warning", "Slow", "other"), key);
  // Field boundaries cannot be confused by contents.
  assert.notEqual(eventKey(REF, "a", "bc", ""), eventKey(REF, "ab", "c", ""));
});

Deno.test("a repeat within the window of the previous occurrence updates the posted Event", () => {
  const aggregator = new EventAggregator({ window: 600, capacity: 10 });
  const key = eventKey(REF, "Warning", "Slow", "msg");
  const t0 = 1_000_000;
  assert.equal(aggregator.lookup(key, t0), undefined);
  aggregator.record(key, { namespace: "ns", name: "kopf-event-a", count: 1, last: t0 });
  assert.equal(aggregator.lookup(key, t0 + 600_000)?.name, "kopf-event-a", "exactly at the window's end");
  aggregator.record(key, { namespace: "ns", name: "kopf-event-a", count: 2, last: t0 + 600_000 });
  assert.equal(aggregator.lookup(key, t0 + 1_100_000)?.count, 2, "the window slides with each occurrence");
  assert.equal(aggregator.lookup(key, t0 + 1_200_001), undefined, "after the window: a new Event");
  assert.equal(aggregator.size, 0, "the stale memory is dropped");
});

Deno.test("a window of 0 disables aggregation; the window is read live", () => {
  let window = 0;
  const aggregator = new EventAggregator({ window: () => window, capacity: 10 });
  const key = eventKey(REF, "Normal", "R", "m");
  aggregator.record(key, { namespace: "ns", name: "e", count: 1, last: 0 });
  assert.equal(aggregator.lookup(key, 0), undefined);
  window = 10;
  aggregator.record(key, { namespace: "ns", name: "e", count: 1, last: 0 });
  assert.equal(aggregator.lookup(key, 10_000)?.name, "e");
  window = 5;
  assert.equal(aggregator.lookup(key, 10_000), undefined);
});

Deno.test("the aggregation memory is bounded: the least recently seen Events are forgotten", () => {
  const aggregator = new EventAggregator({ window: 600, capacity: 4096 });
  for (let index = 0; index < 5000; index++) {
    aggregator.record(eventKey(REF, "Normal", "R", `m${index}`), {
      namespace: "ns",
      name: `e${index}`,
      count: 1,
      last: 0,
    });
  }
  assert.equal(aggregator.size, 4096);
  assert.equal(aggregator.lookup(eventKey(REF, "Normal", "R", "m0"), 0), undefined);
  assert.equal(aggregator.lookup(eventKey(REF, "Normal", "R", "m4999"), 0)?.name, "e4999");
  aggregator.forget(eventKey(REF, "Normal", "R", "m4999"));
  assert.equal(aggregator.size, 4095);
});
