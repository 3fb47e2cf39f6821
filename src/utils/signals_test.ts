import assert from "node:assert/strict";
import { linkSignals, untilSettledOrAborted } from "./signals.ts";

Deno.test("linkSignals aborts with the first source's reason, and not after being disposed of", () => {
  const [a, b] = [new AbortController(), new AbortController()];
  const linked = linkSignals(a.signal, undefined, b.signal);
  b.abort("b");
  assert.equal(linked.signal.aborted, true);
  assert.equal(linked.signal.reason, "b");

  const c = new AbortController();
  const detached = linkSignals(c.signal);
  detached[Symbol.dispose]();
  c.abort();
  assert.equal(detached.signal.aborted, false);
});

Deno.test("linkSignals of an aborted source is aborted at once", () => {
  assert.equal(linkSignals(AbortSignal.abort("x")).signal.reason, "x");
});

Deno.test("untilSettledOrAborted: ends with the promise or the abort, and leaves no listener behind", async () => {
  await untilSettledOrAborted(Promise.resolve(), AbortSignal.timeout(60_000));
  const never = new Promise<void>(() => {});
  const controller = new AbortController();
  const waiting = untilSettledOrAborted(never, controller.signal);
  controller.abort();
  await waiting;
  await assert.rejects(untilSettledOrAborted(Promise.reject(new Error("boom")), new AbortController().signal), /boom/);
  // A listener left on the 60 s timeout signal would keep this test's sanitizer waiting; it ends at once.
});
