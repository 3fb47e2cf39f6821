import assert from "node:assert/strict";
import type { LogRecord } from "@logtape/logtape";
import { formatRecord } from "./configure.ts";

function record(message: unknown[], properties: Record<string, unknown>): LogRecord {
  return {
    category: ["kopf", "test"],
    level: "error",
    message,
    rawMessage: "",
    timestamp: Date.UTC(2026, 0, 1),
    properties,
  };
}

Deno.test("a value shown in the message is not printed again below it", () => {
  const line = formatRecord(record(["Keep-alive failed: ", "HTTP 503", ""], { error: "HTTP 503" }), "plain", false);
  assert.equal(line, "Keep-alive failed: HTTP 503");
});

Deno.test("an exception's stack goes below the message", () => {
  const error = new RangeError("boom");
  const line = formatRecord(record(["Handler failed: ", error, ""], { error }), "plain", false);
  assert.match(line, /^Handler failed: boom\nRangeError: boom\n\s+at /);
});

Deno.test("a value the message does not show is printed below it", () => {
  const line = formatRecord(record(["Something failed."], { error: "HTTP 503" }), "plain", false);
  assert.equal(line, "Something failed.\nHTTP 503");
});
