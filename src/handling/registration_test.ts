import assert from "node:assert/strict";
import { create, del, event, field, resume, update } from "./registration.ts";
import { Registry } from "./registry.ts";

Deno.test("ids: the function's name, the id option, and a field suffix (4.1)", () => {
  const registry = new Registry();
  create("kopfexamples", { registry }, function createFn() {});
  create("kopfexamples", { registry, id: "custom" }, () => {});
  update("kopfexamples", { registry, field: "spec.a" }, function fn() {});
  update("kopfexamples", { registry, field: ["spec", "b"] }, function fn() {});
  assert.deepEqual(registry.handlers.map((handler) => handler.id), ["createFn", "custom", "fn/spec.a", "fn/spec.b"]);
});

Deno.test("an anonymous handler without an id is an error naming the call", () => {
  assert.throws(() => create("kopfexamples", { registry: new Registry() }, () => {}), /anonymous handler needs an id/);
});

Deno.test("invalid option combinations and unknown options fail at registration (4.17, 4.18)", () => {
  const registry = new Registry();
  const fn = function fn() {};
  assert.throws(() => update("kopfexamples", { registry, value: 1 }, fn), TypeError);
  assert.throws(() => update("kopfexamples", { registry, field: "spec.a", value: 1, old: 2 }, fn), TypeError);
  assert.throws(() => create("kopfexamples", { registry, old: 1, field: "spec.a" } as never, fn), /unknown option old/);
  assert.throws(
    () => del("kopfexamples", { registry, requiresFinalizer: true } as never, fn),
    /unknown option requiresFinalizer/,
  );
  assert.throws(() => field("kopfexamples", { registry } as never, fn), /field option is required/);
  assert.throws(() => create("kopfexamples", { registry, labels: { a: null } } as never, fn), TypeError);
  assert.throws(() => create("no such.thing/x", { registry }, fn), TypeError);
  assert.equal(registry.handlers.length, 0);
});

Deno.test("delete handlers need the finalizer unless optional; resume handlers are initial (4.8, 4.9)", () => {
  const registry = new Registry();
  del("kopfexamples", { registry }, function mandatory() {});
  del("kopfexamples", { registry, optional: true }, function optional() {});
  resume("kopfexamples", { registry, deleted: true }, function resumed() {});
  const [mandatory, optional, resumed] = registry.handlers;
  assert.ok(mandatory.kind === "change" && mandatory.requiresFinalizer);
  assert.ok(optional.kind === "change" && !optional.requiresFinalizer);
  assert.ok(resumed.kind === "change" && resumed.initial && resumed.deleted && resumed.reason === "resume");
});

Deno.test("handlers go to the registry given, and only there (4.19)", () => {
  const one = new Registry();
  const two = new Registry();
  event("pods", { registry: one }, function seen() {});
  assert.equal(one.handlers.length, 1);
  assert.equal(two.handlers.length, 0);
});

Deno.test("a bound method is registered under the method's name (4.4)", () => {
  const registry = new Registry();
  class Operator {
    tag = "t";
    method() {
      return this.tag;
    }
  }
  const instance = new Operator();
  create("kopfexamples", { registry }, instance.method.bind(instance));
  assert.deepEqual(registry.handlers.map((handler) => handler.id), ["method"]);
});
