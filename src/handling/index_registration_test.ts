import assert from "node:assert/strict";
import * as kopf from "../../mod.ts";
import * as on from "../../on.ts";
import { index } from "./index_registration.ts";
import { Registry } from "./registry.ts";

Deno.test("kopf.index and kopf.on.index are the same function", () => {
  assert.equal(kopf.index, index);
  assert.equal(on.index, index);
  assert.equal(kopf.on.index, index);
});

Deno.test("index(): registers an index handler named after the function or the id", () => {
  const registry = new Registry();
  function byNamespace() {}
  assert.equal(index("pods", { registry }, byNamespace), byNamespace);
  index("pods", { registry, id: "custom", param: 1, errors: "temporary", backoff: 5 }, () => {});
  const [first, second] = registry.handlers;
  assert.equal(first.kind, "index");
  assert.equal(first.id, "byNamespace");
  assert.equal(first.selector.toString(), '"pods"');
  assert.equal(second.id, "custom");
  assert.deepEqual(second.options, { id: "custom", param: 1, errors: "temporary", backoff: 5 });
});

Deno.test("index(): a field filters but does not rename the index (4.13)", () => {
  const registry = new Registry();
  index("pods", { registry, field: "spec.nodeName" }, function byNode() {});
  const [handler] = registry.handlers;
  assert.equal(handler.id, "byNode");
  assert.deepEqual(handler.field, ["spec", "nodeName"]);
});

Deno.test("index(): registration errors", () => {
  const registry = new Registry();
  const fn = function fn() {};
  assert.throws(() => index("pods", { registry }, () => {}), /anonymous handler needs an id/);
  assert.throws(() => index("pods", { registry, interval: 1 } as never, fn), /unknown option interval/);
  assert.throws(() => index("pods", { registry, errors: "sometimes" } as never, fn), /errors must be/);
  assert.throws(() => index("pods", { registry, retries: -1 }, fn), /retries must be a non-negative number/);
  assert.throws(() => index("pods", { registry, timeout: "1" } as never, fn), /timeout must be/);
  assert.throws(() => index("pods", { registry, backoff: NaN }, fn), /backoff must be/);
  assert.throws(() => index("pods", { registry, value: 1 }, fn), /without a mandatory field/);
  assert.throws(() => index("pods", { registry, field: "spec.a", old: 1 } as never, fn), /unknown option old/);
  assert.throws(() => index("pods", { registry, labels: { a: null } } as never, fn), TypeError);
  assert.throws(() => index("pods", fn as never, fn), TypeError);
  assert.throws(() => index("pods", { registry } as never), /must be the handler function/);
  assert.throws(() => index("no such/thing", { registry }, fn), TypeError);
  assert.equal(registry.handlers.length, 0);
});
