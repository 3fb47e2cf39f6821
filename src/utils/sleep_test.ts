import assert from "node:assert/strict";
import { sleep } from "./sleep.ts";

Deno.test("sleep returns false when it runs out", async () => {
  assert.equal(await sleep(0.01), false);
});

Deno.test("sleep returns true when the signal aborts it", async () => {
  const controller = new AbortController();
  const sleeping = sleep(60, controller.signal);
  controller.abort();
  assert.equal(await sleeping, true);
});

Deno.test("sleep returns at once for an aborted signal or no time", async () => {
  assert.equal(await sleep(60, AbortSignal.abort()), true);
  assert.equal(await sleep(-1), false);
});
