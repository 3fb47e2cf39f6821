import assert from "node:assert/strict";
import type { HandlerLogger } from "../logging/handler_logger.ts";
import { sleep } from "../utils/sleep.ts";
import { runWithDeadline } from "./deadlines.ts";
import { HandlerTimeoutError } from "./errors.ts";

function recorder(): HandlerLogger & { lines: string[] } {
  const lines: string[] = [];
  const add = (level: string) => (message: string) => lines.push(`${level}: ${message}`);
  return {
    lines,
    debug: add("debug"),
    info: add("info"),
    warning: add("warning"),
    warn: add("warning"),
    error: add("error"),
    exception: add("error"),
  };
}

Deno.test("deadlines: a handler finishing in time returns its result; its signal is not aborted", async () => {
  const logger = recorder();
  let seen: AbortSignal | undefined;
  const result = await runWithDeadline(async (signal) => {
    seen = signal();
    await sleep(0.01);
    return 42;
  }, { label: "Handler 'x'", deadline: Date.now() + 5000, timeout: 5, logger });
  assert.equal(result, 42);
  assert.equal(seen?.aborted, false);
  assert.deepEqual(logger.lines, []);
});

Deno.test("deadlines: a handler passing its signal on stops at the deadline with HandlerTimeoutError, no warning", async () => {
  const logger = recorder();
  let interrupted: boolean | undefined;
  await assert.rejects(
    runWithDeadline(async (signal) => {
      interrupted = await sleep(600, signal());
    }, { label: "Handler 'x'", deadline: Date.now() + 50, timeout: 0.05, logger }),
    (error: Error) =>
      error instanceof HandlerTimeoutError && /Handler 'x' has timed out after 0.05 s/.test(error.message),
  );
  assert.equal(interrupted, true);
  assert.deepEqual(logger.lines, []);
});

Deno.test("deadlines: a handler ignoring its signal is left behind with a warning; its later failure is only logged", async () => {
  const logger = recorder();
  let release: () => void = () => {};
  const hanging = new Promise<void>((resolve) => release = resolve);
  await assert.rejects(
    runWithDeadline(async () => {
      await hanging;
      throw new Error("too late");
    }, { label: "Timer 't'", deadline: Date.now() + 20, timeout: 0.02, logger }),
    HandlerTimeoutError,
  );
  assert.equal(logger.lines.length, 1);
  assert.match(logger.lines[0], /^warning: Timer 't' ignored its signal and is still running at its 0.02 s deadline/);
  release();
  await sleep(0.01);
  assert.match(logger.lines[1], /^debug: Timer 't', left behind at its deadline, failed: Error: too late/);
});

Deno.test("deadlines: without a deadline the handler is awaited as it is; the outer signal aborts its signal", async () => {
  const logger = recorder();
  const outer = new AbortController();
  const running = runWithDeadline((signal) => sleep(600, signal()), {
    label: "Handler 'x'",
    signal: outer.signal,
    logger,
  });
  outer.abort();
  assert.equal(await running, true);
});

Deno.test("deadlines: without a deadline the signal is linked on first use, once, and detached at the end", async () => {
  const logger = recorder();
  const outer = new AbortController();
  let seen: AbortSignal[] = [];
  let late: (() => AbortSignal) | undefined;
  await runWithDeadline((signal) => {
    seen = [signal(), signal()];
  }, { label: "Handler 'x'", signal: outer.signal, logger });
  await runWithDeadline((signal) => {
    late = signal;
  }, { label: "Handler 'y'", signal: outer.signal, logger });
  assert.equal(seen[0], seen[1], "one signal per attempt");
  assert.notEqual(seen[0], outer.signal, "the handler's own, not the caller's");
  const afterwards = late!();
  outer.abort();
  assert.equal(seen[0].aborted, false, "no longer linked once the attempt is over");
  assert.equal(afterwards.aborted, false, "read after its attempt: never linked");
});

Deno.test("deadlines: a deadline already past fails at once", async () => {
  const logger = recorder();
  await assert.rejects(
    runWithDeadline((signal) => sleep(600, signal()), {
      label: "Handler 'x'",
      deadline: Date.now() - 1,
      timeout: 1,
      logger,
    }),
    HandlerTimeoutError,
  );
});
