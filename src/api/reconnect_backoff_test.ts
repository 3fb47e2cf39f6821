import assert from "node:assert/strict";
import { reconnectDelay } from "./reconnect_backoff.ts";

const timing = { failureBackoff: 0.8, reconnectBackoffMax: 30 };

Deno.test("the pause doubles per failure from failureBackoff, with half-to-full jitter", () => {
  assert.equal(reconnectDelay(1, 0, timing, () => 1), 0.8);
  assert.equal(reconnectDelay(1, 0, timing, () => 0), 0.4);
  assert.equal(reconnectDelay(3, 100, timing, () => 1), 3.2);
  assert.equal(reconnectDelay(5, 100, timing, () => 1), 12.8);
});

Deno.test("the pause never exceeds reconnectBackoffMax", () => {
  assert.equal(reconnectDelay(30, 10_000, timing, () => 1), 30);
  assert.equal(reconnectDelay(1000, 10_000, timing, () => 0), 15);
});

Deno.test("the pause never exceeds half the outage so far, so a short outage is followed by a quick retry", () => {
  assert.equal(reconnectDelay(10, 20, timing, () => 1), 10);
  assert.equal(reconnectDelay(10, 1, timing, () => 1), 0.8, "but never below failureBackoff");
});
