/**
 * The verdicts of handler errors and their log lines: a retry says when, as activities' lines do.
 */

import assert from "node:assert/strict";
import type { HandlerLogger } from "../logging/handler_logger.ts";
import { PermanentError, TemporaryError } from "./errors.ts";
import { judgeFailure, type Judging } from "./failures.ts";
import type { RetryOptions } from "./handlers.ts";

/** A logger that keeps each line as `LEVEL message`. */
function recorder(): { logger: HandlerLogger; lines: string[] } {
  const lines: string[] = [];
  const record = (level: string) => (message: string) => void lines.push(`${level} ${message}`);
  const logger: HandlerLogger = {
    debug: record("DEBUG"),
    info: record("INFO"),
    warning: record("WARNING"),
    warn: record("WARNING"),
    error: record("ERROR"),
    exception: record("ERROR"),
  };
  return { logger, lines };
}

function judging(logger: HandlerLogger, options: RetryOptions = {}, retries = 0): Judging {
  return { label: "Handler 'h'", options, logger, defaultBackoff: 60, retries, elapsed: 0 };
}

Deno.test("an arbitrary error is retried after the backoff, and the line says in how many seconds", () => {
  const { logger, lines } = recorder();
  assert.deepEqual(judgeFailure(new Error("boom"), judging(logger)), { kind: "retry", delay: 60, message: "boom" });
  assert.deepEqual(judgeFailure(new Error("boom"), judging(logger, { backoff: 0.5 })), {
    kind: "retry",
    delay: 0.5,
    message: "boom",
  });
  assert.deepEqual(lines, [
    "ERROR Handler 'h' failed with an exception. Will retry in 60 s.",
    "ERROR Handler 'h' failed with an exception. Will retry in 0.5 s.",
  ]);
});

Deno.test("an arbitrary error of the last allowed attempt says it will stop, not retry, and why", () => {
  const { logger, lines } = recorder();
  const verdict = judgeFailure(new Error("boom"), judging(logger, { retries: 3, backoff: 1 }, 2));
  assert.deepEqual(verdict, { kind: "failed", message: "boom", timedOut: false });
  assert.deepEqual(lines, [
    "ERROR Handler 'h' failed with an exception. Will stop.",
    "ERROR Handler 'h' has exceeded 3 retries.",
  ]);
  const late = recorder();
  const timedOut = judgeFailure(new Error("boom"), { ...judging(late.logger, { timeout: 10 }), elapsed: 5_000 });
  assert.deepEqual(timedOut, { kind: "failed", message: "boom", timedOut: true });
  assert.deepEqual(late.lines, [
    "ERROR Handler 'h' failed with an exception. Will stop.",
    "ERROR Handler 'h' has timed out after 10 s.",
  ]);
});

Deno.test("temporary, permanent and ignored errors keep their lines", () => {
  const { logger, lines } = recorder();
  assert.equal(judgeFailure(new TemporaryError("later", { delay: 5 }), judging(logger)).kind, "retry");
  assert.equal(judgeFailure(new PermanentError("never"), judging(logger)).kind, "failed");
  assert.equal(judgeFailure(new Error("x"), judging(logger, { errors: "permanent" })).kind, "failed");
  assert.equal(judgeFailure(new Error("y"), judging(logger, { errors: "ignored" })).kind, "ignored");
  assert.deepEqual(lines, [
    "ERROR Handler 'h' failed temporarily: later",
    "ERROR Handler 'h' failed permanently: never",
    "ERROR Handler 'h' failed with an exception. Will stop.",
    "ERROR Handler 'h' failed with an exception. Will ignore.",
  ]);
});
