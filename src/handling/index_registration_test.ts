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

Deno.test("index(): a field filters but does not rename the index", () => {
  const registry = new Registry();
  index("pods", { registry, field: "spec.nodeName" }, function byNode() {});
  const [handler] = registry.handlers;
  assert.equal(handler.id, "byNode");
  assert.deepEqual(handler.field, ["spec", "nodeName"]);
});

Deno.test("index(): registration errors", () => {
  const registry = new Registry();
  const fn = function fn() {};
  const refused = (options: Record<string, unknown>, message: string | RegExp) =>
    assert.throws(() => index("pods", { registry, ...options }, fn), {
      name: "TypeError",
      message: typeof message === "string" ? `kopf.on.index("pods", fn): ${message}` : message,
    });
  assert.throws(() => index("pods", { registry }, () => {}), {
    name: "TypeError",
    message: /^kopf\.on\.index\("pods", \(\) => …\): an anonymous handler needs an id/,
  });
  refused({ interval: 1 }, /^kopf\.on\.index\("pods", fn\): unknown option interval \(interval is for on\.timer\);/);
  refused({ errors: "sometimes" }, 'errors must be "temporary", "permanent" or "ignored", got "sometimes".');
  refused({ retries: -1 }, "retries must be a non-negative integer, got -1.");
  refused({ retries: 1.5 }, "retries must be a non-negative integer, got 1.5.");
  refused({ timeout: "1" }, 'timeout must be a non-negative number of seconds, got "1".');
  refused({ backoff: NaN }, "backoff must be a non-negative number of seconds, got NaN.");
  refused({ value: 1 }, "value/old/new filters are specified without a mandatory field.");
  refused({ field: "spec.a", old: 1 }, /^kopf\.on\.index\("pods", fn\): unknown option old \(old is for on\.update/);
  refused({ labels: { a: null } }, /^kopf\.on\.index\("pods", fn\): null for the label filter "a" is not supported/);
  assert.throws(() => index("pods", fn as never, fn), {
    name: "TypeError",
    message: 'kopf.on.index("pods"): give either (resource, fn) or (resource, options, fn).',
  });
  assert.throws(() => index("pods", { registry } as never), {
    name: "TypeError",
    message: 'kopf.on.index("pods"): the last argument must be the handler function, got undefined.',
  });
  assert.throws(() => index("no such/thing", { registry }, fn), {
    name: "TypeError",
    message: /^kopf\.on\.index\("no such\/thing", fn\): /,
  });
  assert.equal(registry.handlers.length, 0);
});
