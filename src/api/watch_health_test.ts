import assert from "node:assert/strict";
import { WatchHealth } from "./watch_health.ts";

const BOUND = 60;
const RESET = { backoffResetAfter: 5 };

Deno.test("a stream whose every request stays answered for a while and then ends in an ERROR event turns unhealthy after the bound", () => {
  const health = new WatchHealth(BOUND, RESET);
  const start = 1_000_000;
  let now = start;
  // Each request: answered at once, held 6 s (beyond backoffResetAfter), then an ERROR event; reconnect after 0.5 s.
  while (now - start <= (BOUND + 10) * 1000) {
    health.connected(now);
    now += 6000;
    health.failed("the server sent an error in the stream: 500", now);
    assert.equal(health.backoffFailures, 1, "each long-answered request restarts the backoff");
    now += 500;
  }
  const verdict = health.verdict(now);
  assert.equal(verdict?.reason, "failing", JSON.stringify(verdict));
  assert.equal(verdict?.since, start + 6000);
  assert.ok(health.failures >= 10, `the run goes on: ${health.failures} failures`);
  health.alive(now);
  assert.equal(health.verdict(now), null, "an event ends the run");
});

Deno.test("after an outage, a request answered for backoffResetAfter seconds counts as working while it stays open", () => {
  const health = new WatchHealth(BOUND, RESET);
  const start = 1_000_000;
  for (let second = 0; second < BOUND + 30; second += 5) health.failed("connection refused", start + second * 1000);
  const back = start + (BOUND + 30) * 1000;
  health.connected(back);
  assert.equal(health.verdict(back + 1000)?.reason, "failing", "just answered: not proven yet");
  assert.equal(health.verdict(back + 5000), null, "answered for 5 s: a quiet stream");
  assert.equal(health.failingSince, start, "the run itself ends only with something delivered");
  health.ended(back + 20_000);
  assert.equal(health.failingSince, null);
  assert.equal(health.failures, 0);
});

Deno.test("once an open request has failed without delivering anything, open requests no longer count in that run", () => {
  const health = new WatchHealth(BOUND, RESET);
  const start = 1_000_000;
  health.failed("connection refused", start);
  health.connected(start + 1000);
  health.failed("the server sent an error in the stream: 500", start + 10_000);
  const late = start + (BOUND + 20) * 1000;
  health.connected(late - 10_000);
  assert.equal(health.verdict(late)?.reason, "failing");
  health.alive(late); // an event on the open request, which then fails: it had delivered something
  for (let second = 1; second < BOUND + 5; second += 5) health.failed("connection refused", late + second * 1000);
  const back = late + (BOUND + 5) * 1000;
  health.connected(back);
  assert.equal(health.verdict(back + 5000), null, "a run after an event trusts open requests again");
});
