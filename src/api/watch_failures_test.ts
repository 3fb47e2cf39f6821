import assert from "node:assert/strict";
import type { ApiClient } from "./client.ts";
import { ApiTooManyRequestsError } from "./errors.ts";
import { quickEnd, silence, silenceBound, WatchFailures } from "./watch_failures.ts";
import { WatchHealth } from "./watch_health.ts";
import { WatchingSettings } from "../settings/watching.ts";

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
