import assert from "node:assert/strict";
import { processGlobal } from "./process_global.ts";

Deno.test("a process-global value is made once and shared by every caller", () => {
  let made = 0;
  const first = processGlobal("test-shared", 1, () => ({ n: ++made }));
  const second = processGlobal("test-shared", 1, () => ({ n: ++made }));
  assert.equal(first, second);
  assert.equal(made, 1);
  assert.equal(
    (globalThis as unknown as Record<symbol, { value: unknown }>)[Symbol.for("@kopf/kopf:test-shared")].value,
    first,
  );
});

Deno.test("a copy with another layout of a process-global value fails to load, naming the cause", () => {
  processGlobal("test-layout", 1, () => new Map());
  assert.throws(
    () => processGlobal("test-layout", 2, () => new Map()),
    /Two incompatible copies of @kopf\/kopf.*layout 1.*2/s,
  );
});

Deno.test("a second copy of the library (another module URL) shares the default registry", async () => {
  const own = await import("../handling/registry.ts");
  const url = new URL("../handling/registry.ts", import.meta.url);
  url.searchParams.set("copy", "2");
  const copy = await import(url.href);
  assert.notEqual(copy.Registry, own.Registry);
  assert.equal(copy.defaultRegistry, own.defaultRegistry);
});

Deno.test("the handlers' errors of a second copy of the library are instances of the first copy's classes", async () => {
  const own = await import("../handling/errors.ts");
  const url = new URL("../handling/errors.ts", import.meta.url);
  url.searchParams.set("copy", "2");
  const copy = await import(url.href);
  assert.notEqual(copy.PermanentError, own.PermanentError);
  assert.ok(new copy.PermanentError("x") instanceof own.PermanentError);
  assert.ok(new copy.HandlerTimeoutError("x") instanceof own.PermanentError);
  assert.ok(new copy.HandlerTimeoutError("x") instanceof own.HandlerTimeoutError);
  assert.ok(new copy.TemporaryError("x") instanceof own.TemporaryError);
  assert.ok(!(new copy.TemporaryError("x") instanceof own.PermanentError));
  assert.ok(!(new copy.PermanentError("x") instanceof own.HandlerTimeoutError));
  assert.ok(!(new Error("x") instanceof own.TemporaryError));
  class Own extends own.TemporaryError {}
  assert.ok(new Own("x") instanceof own.TemporaryError);
  assert.ok(!(new copy.TemporaryError("x") instanceof Own));
});

Deno.test("an AdmissionError of a second copy of the library is one of the first copy", async () => {
  const own = await import("../handling/admission.ts");
  const url = new URL("../handling/admission.ts", import.meta.url);
  url.searchParams.set("copy", "2");
  const copy = await import(url.href);
  assert.ok(new copy.AdmissionError("no", { code: 400 }) instanceof own.AdmissionError);
});
