import assert from "node:assert/strict";
import type { ApiClient } from "./client.ts";
import { ApiTooManyRequestsError } from "./errors.ts";
import { quickEnd, silence, silenceBound, WatchFailures } from "./watch_failures.ts";
import { WatchHealth } from "./watch_health.ts";
import { WatchingSettings } from "../settings/watching.ts";
import { configureLogging } from "../logging/configure.ts";

/** A client with no credentials: the failures are not TLS ones, nothing to diagnose. */
const CLIENT = { vault: { peek: () => undefined } } as unknown as ApiClient;

function settings(values: Partial<WatchingSettings>): WatchingSettings {
  return Object.assign(new WatchingSettings(), values);
}

Deno.test("a request may stay silent for the server's own timeout and 10 s more, if that is the shorter bound", () => {
  assert.deepEqual(silenceBound(settings({ serverTimeout: 60, inactivityTimeout: 600 })), {
    seconds: 70,
    why: "settings.watching.serverTimeout + 10 s",
  });
  assert.deepEqual(silenceBound(settings({ serverTimeout: null, inactivityTimeout: 600 })), {
    seconds: 600,
    why: "settings.watching.inactivityTimeout",
  });
  assert.equal(
    silence(settings({ serverTimeout: 900, inactivityTimeout: 300 })),
    "no event or bookmark for 300 s (settings.watching.inactivityTimeout)",
  );
});

Deno.test("an end within a second (or half the server's timeout, if shorter) is too quick to be on schedule", () => {
  assert.equal(quickEnd(settings({ serverTimeout: null })), 1000);
  assert.equal(quickEnd(settings({ serverTimeout: 60 })), 1000);
  assert.equal(quickEnd(settings({ serverTimeout: 1 })), 500);
});

Deno.test("failures are counted in the health and paced; a sign of life or an end on schedule ends the run", () => {
  const watching = settings({ failureBackoff: 1, reconnectBackoffMax: 30 });
  const health = new WatchHealth(60);
  const failures = new WatchFailures("kopfexamples", health, watching, CLIENT);
  const first = failures.failed(new Error("connection refused"));
  assert.ok(first > 0 && first <= 1, `the first pause is within the first backoff: ${first}`);
  assert.equal(health.failures, 1);
  assert.notEqual(health.failingSince, null);
  failures.alive();
  assert.equal(health.failingSince, null);
  failures.failed(new Error("connection refused"));
  failures.ended();
  assert.equal(health.failingSince, null);
  assert.equal(health.totalFailures, 2);
});

Deno.test("a 429 pauses for at least what the server asked", () => {
  const health = new WatchHealth(60);
  const failures = new WatchFailures("kopfexamples", health, settings({ failureBackoff: 0.1 }), CLIENT);
  const error = new ApiTooManyRequestsError("watch kopfexamples", 429, undefined, "slow down");
  error.retryAfter = 7;
  assert.equal(failures.failed(error), 7);
});

Deno.test("a wait that the server asks for is told at info level; without Retry-After, a 429 is a warning", async () => {
  const lines: string[] = [];
  await configureLogging({ level: "info", format: "full", write: (line) => lines.push(line) });
  const failures = new WatchFailures("kopfexamples", new WatchHealth(60), settings({ failureBackoff: 0.1 }), CLIENT);
  const asked = new ApiTooManyRequestsError("watch kopfexamples", 429, undefined, "storage is (re)initializing");
  asked.retryAfter = 1;
  failures.failed(asked);
  assert.equal(lines.length, 1, lines.join("\n"));
  assert.match(
    lines[0],
    /\[INFO +\] The API server asked the stream of kopfexamples to wait \(.*initializing.*\); resuming in 1 s/,
  );
  failures.alive();
  failures.failed(new ApiTooManyRequestsError("watch kopfexamples", 429, undefined, "slow down"));
  assert.match(lines.at(-1)!, /\[WARNING +\] The stream of kopfexamples failed \(.*slow down.*\); resuming in 1 s/);
});

Deno.test("after a request's end: a stall and a quick end without progress are failures, an end amid events no pause", () => {
  const watching = settings({ reconnectBackoff: 3, failureBackoff: 1, reconnectBackoffMax: 30 });
  const health = new WatchHealth(60);
  const failures = new WatchFailures("kopfexamples", health, watching, CLIENT);
  const now = Date.now();
  const stalled = failures.pauseAfter({ stalled: true, lasted: 80_000, progressed: true, lastDelivery: now - 80_000 });
  assert.ok(stalled > 0 && stalled <= 1, `a stall pauses as a failure: ${stalled}`);
  assert.equal(health.stalls, 1);
  const quick = failures.pauseAfter({ stalled: false, lasted: 10, progressed: false, lastDelivery: 0 });
  assert.ok(quick > 0 && quick !== 3, `a quick end without progress pauses as a failure: ${quick}`);
  assert.equal(health.totalFailures, 2);
  // Ended at once after events (a reader that fell behind in a burst): on schedule, and no pause while they come.
  assert.equal(failures.pauseAfter({ stalled: false, lasted: 10, progressed: true, lastDelivery: Date.now() }), 0);
  assert.equal(health.failingSince, null);
  // A quiet end on schedule (bookmarks only, or the last event long ago): the pause of reconnectBackoff.
  assert.equal(failures.pauseAfter({ stalled: false, lasted: 60_000, progressed: true, lastDelivery: 0 }), 3);
  assert.equal(failures.pauseAfter({ stalled: false, lasted: 60_000, progressed: true, lastDelivery: now - 5_000 }), 3);
  assert.equal(health.totalFailures, 2);
});

Deno.test("a request that ends on the schedule of serverTimeout or clientTimeout waits reconnectBackoff, amid events too", () => {
  for (const timeouts of [{ serverTimeout: 1 }, { clientTimeout: 1 }, { serverTimeout: 60, clientTimeout: 1 }]) {
    const watching = settings({ reconnectBackoff: 3, ...timeouts });
    const failures = new WatchFailures("kopfexamples", new WatchHealth(60), watching, CLIENT);
    const end = { stalled: false, progressed: true, lastDelivery: Date.now() };
    assert.equal(failures.pauseAfter({ ...end, lasted: 1_005 }), 3, JSON.stringify(timeouts));
    assert.equal(failures.pauseAfter({ ...end, lasted: 600 }), 0, JSON.stringify(timeouts));
  }
});

Deno.test("a stall over a connection that answered others is resumed at once, unless the request before stalled so", () => {
  const health = new WatchHealth(60);
  const failures = new WatchFailures("kopfexamples", health, settings({ failureBackoff: 1 }), CLIENT);
  const quiet = { stalled: true, connectionAnswered: true, lasted: 70_000, progressed: false, lastDelivery: 0 };
  assert.equal(failures.pauseAfter(quiet), 0, "a late bookmark: no pause");
  assert.equal(health.stalls, 1);
  assert.equal(health.failingSince, null, "not a failure");
  // Silent again with nothing in between: the stream fails.
  assert.ok(failures.pauseAfter(quiet) > 0, "the second is a failure");
  assert.equal(health.stalls, 2);
  assert.notEqual(health.failingSince, null);
  // A sign of life ends the run; the next quiet stall is a late bookmark again.
  failures.alive();
  assert.equal(failures.pauseAfter(quiet), 0);
  assert.equal(health.totalFailures, 1);
  // A stall over a connection that answered nothing is a failure at once.
  failures.alive();
  assert.ok(failures.pauseAfter({ ...quiet, connectionAnswered: false }) > 0);
  assert.equal(health.totalFailures, 2);
});
