import assert from "node:assert/strict";
import { linkSignals } from "./signals.ts";

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
