import assert from "node:assert/strict";
import { AdmissionError, mutate, validate } from "./admission.ts";
import { PRESENT } from "./filters.ts";
import { Registry } from "./registry.ts";

Deno.test("on.validate and on.mutate register admission handlers apart from resource handlers (4.14)", () => {
  const registry = new Registry();
  const fn = validate("kex", { registry, id: "v", operation: "CREATE" }, () => {});
  mutate("kex", { registry, labels: { a: PRESENT }, persistent: true }, function defaults() {});
  assert.equal(typeof fn, "function");
  assert.equal(registry.handlers.length, 0, "no watching for admission handlers");
  const [v, m] = registry.webhooks;
  assert.equal(v.type, "validate");
  assert.equal(v.id, "v");
  assert.deepEqual(v.operations, ["CREATE"]);
  assert.equal(m.type, "mutate");
  assert.equal(m.id, "defaults");
  assert.equal(m.operations, null);
  assert.equal(m.options.persistent, true);
  validate("kex", { registry, id: "v" }, () => {});
  assert.equal(registry.webhooks.length, 2, "one webhook per id");
});

Deno.test("admission options are checked at registration (4.14)", () => {
  const registry = new Registry();
  const bad: [Record<string, unknown>, RegExp][] = [
    [{ operations: [] }, /non-empty list/],
    [{ operations: ["PATCH"] }, /unknown operation "PATCH"/],
    [{ operation: "CREATE", operations: ["UPDATE"] }, /either operation or operations/],
    [{ errors: "permanent" }, /never retried/],
    [{ retries: 3, backoff: 1 }, /never retried/],
    [{ optional: true }, /unknown option optional/],
    [{ old: 1, field: "spec.x" }, /unknown option old/],
    [{ subresource: "" }, /subresource must be/],
    [{ persistent: "yes" }, /persistent must be true or false/],
    [{ labels: { a: null } }, /null for the label filter/],
  ];
  for (const [options, message] of bad) {
    assert.throws(() => validate("kex", { registry, id: "x", ...options }, () => {}), message, JSON.stringify(options));
  }
  assert.throws(() => mutate("kex", { registry }, () => {}), /anonymous handler needs an id/);
  assert.throws(() => validate("kex", { registry }, undefined as never), /last argument must be the handler/);
  assert.equal(registry.webhooks.length, 0);
});

Deno.test("AdmissionError carries a code, 500 by default (18.1)", () => {
  assert.equal(new AdmissionError("x").code, 500);
  const error = new AdmissionError("Meh", { code: 400 });
  assert.equal(error.code, 400);
  assert.equal(error.message, "Meh");
  assert.equal(error.name, "AdmissionError");
});
