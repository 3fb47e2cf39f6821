import assert from "node:assert/strict";
import { untilNextCall } from "./timers.ts";

Deno.test("untilNextCall: a plain timer waits its interval after each call", () => {
  assert.equal(untilNextCall(10, false, 0, 13_000), 10);
});

Deno.test("untilNextCall: a sharp timer keeps to its grid whatever the calls take", () => {
  // A call that took 0.3 s of a 1-second interval: the next one starts 0.7 s later, on the grid.
  assert.ok(Math.abs(untilNextCall(1, true, 0, 5_300) - 0.7) < 1e-9);
  // A call that overran its interval: the next one comes at the next grid point, not at once.
  assert.ok(Math.abs(untilNextCall(1, true, 0, 6_900) - 0.1) < 1e-9);
  assert.equal(untilNextCall(2, true, 1_000, 5_000), 2);
});
