import assert from "node:assert/strict";
import { retryAfter } from "./error_answers.ts";

Deno.test("Retry-After is read from the header (seconds or a date) or the Status details", () => {
  assert.equal(retryAfter(new Headers({ "Retry-After": "3" }), undefined), 3);
  assert.equal(retryAfter(new Headers(), { details: { retryAfterSeconds: 7 } }), 7);
  const date = new Date(Date.now() + 5000).toUTCString();
  const seconds = retryAfter(new Headers({ "Retry-After": date }), undefined)!;
  assert.ok(seconds > 3 && seconds <= 5, String(seconds));
  assert.equal(retryAfter(new Headers(), undefined), undefined);
});
