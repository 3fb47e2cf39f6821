import assert from "node:assert/strict";
import * as on from "../../on.ts";
import { Registry } from "../handling/registry.ts";
import { checkSomethingToRun, NoHandlersError } from "./no_handlers.ts";

Deno.test("an empty registry has nothing to run", () => {
  assert.throws(
    () => checkSomethingToRun(new Registry()),
    (error: Error) => error instanceof NoHandlersError && /^No handlers are registered:/.test(error.message),
  );
});

Deno.test("login, probe and cleanup handlers alone have nothing to run; the message names them", () => {
  const registry = new Registry();
  on.login({ registry }, function credentials() {
    return null;
  });
  on.cleanup({ registry }, function farewell() {});
  assert.throws(
    () => checkSomethingToRun(registry),
    (error: Error) =>
      error instanceof NoHandlersError && error.message.startsWith("Only login, cleanup handlers are registered"),
  );
});

Deno.test("a resource handler of any kind, an admission handler, a converter or a startup handler is something to run", () => {
  const registrations: ((registry: Registry) => void)[] = [
    (registry) => on.index("pods", { registry }, function byName() {}),
    (registry) => on.event("pods", { registry }, function seen() {}),
    (registry) => on.timer("pods", { registry, interval: 1 }, function tick() {}),
    (registry) => on.validate("pods", { registry }, function check() {}),
    (registry) => on.conversion("widgets.example.com", { registry, from: "v1", to: "v2" }, (body) => body),
    (registry) => on.startup({ registry }, function begin() {}),
  ];
  for (const register of registrations) {
    const registry = new Registry();
    register(registry);
    checkSomethingToRun(registry);
  }
});
