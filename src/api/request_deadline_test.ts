import assert from "node:assert/strict";
import { clearDeadline, headersArrived, type RequestDeadline, requestDeadline } from "./request_deadline.ts";

/** Resolves with the abort reason once the controller aborts, or with `null` after `ms`. */
function abortedWithin(controller: AbortController, ms: number): Promise<unknown> {
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve(null), ms);
    controller.signal.addEventListener("abort", () => {
      clearTimeout(timer);
      resolve(controller.signal.reason);
    }, { once: true });
  });
}

Deno.test("a deadline made while another expires (by its abort listener) still expires on time", async () => {
  const first = new AbortController();
  const second = new AbortController();
  let made: RequestDeadline | undefined;
  first.signal.addEventListener("abort", () => {
    made = requestDeadline(second, 0.05, "settings.networking.connectTimeout", null);
  });
  // A long one pending meanwhile: the shared timer must not wait for it.
  const patient = requestDeadline(new AbortController(), 30, "settings.networking.connectTimeout", null);
  requestDeadline(first, 0.05, "settings.networking.connectTimeout", null);
  assert.match(String(await abortedWithin(first, 2000)), /no response within 0.05 s/);
  assert.match(String(await abortedWithin(second, 2000)), /no response within 0.05 s/);
  assert.ok(made?.expired);
  clearDeadline(patient);
});

Deno.test("after the headers, only the total timeout applies; a cleared deadline never fires", async () => {
  const controller = new AbortController();
  const deadline = requestDeadline(controller, 0.05, "settings.networking.connectTimeout", 0.15);
  headersArrived(deadline);
  const cleared = new AbortController();
  clearDeadline(requestDeadline(cleared, 0.05, "settings.networking.connectTimeout", null));
  assert.match(String(await abortedWithin(controller, 2000)), /took longer than 0.15 s/);
  assert.equal(await abortedWithin(cleared, 100), null);
});

Deno.test("after the headers without a total timeout, nothing fires; a connect timeout longer than the total one names the total", async () => {
  const open = new AbortController();
  headersArrived(requestDeadline(open, 0.05, "settings.watching.connectTimeout", null));
  const total = new AbortController();
  const deadline = requestDeadline(total, 5, "settings.networking.connectTimeout", 0.05);
  assert.match(String(await abortedWithin(total, 2000)), /took longer than 0.05 s/);
  assert.match(String(deadline.expired), /requestTimeout/);
  assert.equal(await abortedWithin(open, 150), null);
});
