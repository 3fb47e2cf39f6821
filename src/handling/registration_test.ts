import assert from "node:assert/strict";
import { create, del, event, field, resume, update } from "./registration.ts";
import { Registry } from "./registry.ts";

Deno.test("ids: the function's name, the id option, and a field suffix", () => {
  const registry = new Registry();
  create("kopfexamples", { registry }, function createFn() {});
  create("kopfexamples", { registry, id: "custom" }, () => {});
  update("kopfexamples", { registry, field: "spec.a" }, function fn() {});
  update("kopfexamples", { registry, field: ["spec", "b"] }, function fn() {});
  assert.deepEqual(registry.handlers.map((handler) => handler.id), ["createFn", "custom", "fn/spec.a", "fn/spec.b"]);
});

Deno.test("an anonymous handler without an id is an error naming the call", () => {
  assert.throws(() => create("kopfexamples", { registry: new Registry() }, () => {}), {
    name: "TypeError",
    message: new RegExp(
      '^kopf\\.on\\.create\\("kopfexamples", \\(\\) => …\\): an anonymous handler needs an id: ' +
        'pass \\{ id: "…" \\} or use a named function \\(.*registration_test\\.ts:\\d+:\\d+\\)\\)\\.$',
    ),
  });
});

Deno.test("invalid option combinations and unknown options fail at registration", () => {
  const registry = new Registry();
  const fn = function fn() {};
  const where = (kind: string) => `kopf.on.${kind}("kopfexamples", fn): `;
  assert.throws(() => update("kopfexamples", { registry, value: 1 }, fn), {
    name: "TypeError",
    message: `${where("update")}value/old/new filters are specified without a mandatory field.`,
  });
  assert.throws(() => update("kopfexamples", { registry, field: "spec.a", value: 1, old: 2 }, fn), {
    name: "TypeError",
    message: `${where("update")}either value or old/new can be defined, not both.`,
  });
  assert.throws(() => create("kopfexamples", { registry, old: 1, field: "spec.a" } as never, fn), {
    name: "TypeError",
    message: `${where("create")}unknown option old (old is for on.update and on.field); ` +
      "the options of on.create are: id, param, registry, labels, annotations, when, field, value, " +
      "errors, timeout, retries, backoff.",
  });
  assert.throws(() => del("kopfexamples", { registry, requiresFinalizer: true } as never, fn), {
    name: "TypeError",
    message: new RegExp(
      `^${RegExp.escape(where("delete"))}unknown option requiresFinalizer; the options of on\\.delete`,
    ),
  });
  assert.throws(() => field("kopfexamples", { registry } as never, fn), {
    name: "TypeError",
    message: `${where("field")}the field option is required for on.field, e.g. { field: "spec.size" }.`,
  });
  assert.throws(() => create("kopfexamples", { registry, labels: { a: null } } as never, fn), {
    name: "TypeError",
    message: new RegExp(`^${RegExp.escape(where("create"))}null for the label filter "a" is not supported`),
  });
  assert.throws(() => create("no such.thing/x", { registry }, fn), {
    name: "TypeError",
    message: new RegExp(`^kopf\\.on\\.create\\("no such\\.thing/x", fn\\): `),
  });
  assert.equal(registry.handlers.length, 0);
});

Deno.test("delete handlers need the finalizer unless optional; resume handlers are initial", () => {
  const registry = new Registry();
  del("kopfexamples", { registry }, function mandatory() {});
  del("kopfexamples", { registry, optional: true }, function optional() {});
  resume("kopfexamples", { registry, deleted: true }, function resumed() {});
  const [mandatory, optional, resumed] = registry.handlers;
  assert.ok(mandatory.kind === "change" && mandatory.requiresFinalizer);
  assert.ok(optional.kind === "change" && !optional.requiresFinalizer);
  assert.ok(resumed.kind === "change" && resumed.initial && resumed.deleted && resumed.reason === "resume");
});

Deno.test("handlers go to the registry given, and only there", () => {
  const one = new Registry();
  const two = new Registry();
  event("pods", { registry: one }, function seen() {});
  assert.equal(one.handlers.length, 1);
  assert.equal(two.handlers.length, 0);
});

Deno.test("a bound method is registered under the method's name", () => {
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
