import assert from "node:assert/strict";
import { AdmissionError, mutate, validate } from "./admission.ts";
import { PRESENT } from "./filters.ts";
import { Registry } from "./registry.ts";

Deno.test("on.validate and on.mutate register admission handlers apart from resource handlers", () => {
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

Deno.test("admission options are checked at registration", () => {
  const registry = new Registry();
  const where = 'kopf.on.validate("kex", { id: "x" }, …): ';
  const operations = "operations must be a non-empty list of CREATE, UPDATE, DELETE, CONNECT " +
    "(leave it out for all operations), got";
  const retrying = "(admission handlers are never retried, so errors/timeout/retries/backoff do not apply)";
  const bad: [Record<string, unknown>, string | RegExp][] = [
    [{ operations: [] }, `${operations} [].`],
    [{ operations: ["PATCH"] }, `${operations} ["PATCH"].`],
    [{ operation: "PATCH" }, `operation must be "CREATE", "UPDATE", "DELETE" or "CONNECT", got "PATCH".`],
    [{ operation: "CREATE", operations: ["UPDATE"] }, "give either operation or operations, not both."],
    [{ errors: "permanent" }, new RegExp(`^unknown option errors \\(admission handlers are never retried`)],
    [{ retries: 3, backoff: 1 }, `unknown options retries, backoff ${retrying}; the options of on.validate are: `],
    [{ optional: true }, /^unknown option optional \(optional is for on\.delete\); the options of on\.validate/],
    [{ old: 1, field: "spec.x" }, /^unknown option old \(old is for on\.update and on\.field\)/],
    [{ subresource: "" }, 'subresource must be a name such as "status", or "*" for all, got "".'],
    [{ persistent: "yes" }, 'persistent must be true or false, got "yes".'],
    [{ labels: { a: null } }, /^null for the label filter "a" is not supported/],
  ];
  for (const [options, message] of bad) {
    assert.throws(
      () => validate("kex", { registry, id: "x", ...options }, () => {}),
      (error: Error) => {
        assert.ok(error instanceof TypeError);
        assert.ok(error.message.startsWith(where), error.message);
        const rest = error.message.slice(where.length);
        if (typeof message === "string") assert.ok(rest.startsWith(message), `${rest} vs ${message}`);
        else assert.match(rest, message);
        return true;
      },
      JSON.stringify(options),
    );
  }
  assert.throws(() => mutate("kex", { registry }, () => {}), {
    name: "TypeError",
    message: /^kopf\.on\.mutate\("kex", \(\) => …\): an anonymous handler needs an id/,
  });
  assert.throws(() => validate("kex", { registry }, undefined as never), {
    name: "TypeError",
    message: 'kopf.on.validate("kex"): the last argument must be the handler function, got undefined.',
  });
  assert.equal(registry.webhooks.length, 0);
});

Deno.test("AdmissionError carries a code, 500 by default", () => {
  assert.equal(new AdmissionError("x").code, 500);
  const error = new AdmissionError("Meh", { code: 400 });
  assert.equal(error.code, 400);
  assert.equal(error.message, "Meh");
  assert.equal(error.name, "AdmissionError");
});
