import assert from "node:assert/strict";
import { mutate, validate } from "../handling/admission.ts";
import { ABSENT, PRESENT } from "../handling/filters.ts";
import { Registry } from "../handling/registry.ts";
import type { Resource } from "../model/resource.ts";
import { buildWebhooks, handlerClientConfig, objectSelector } from "./webhook_configuration.ts";

const KEX: Resource = {
  group: "kopf.dev",
  version: "v1",
  plural: "kopfexamples",
  kind: "KopfExample",
  singular: "kopfexample",
  namespaced: true,
  preferred: true,
  shortcuts: [],
  categories: [],
  verbs: [],
  subresources: ["status"],
};

Deno.test("objectSelector: strings In, PRESENT Exists, ABSENT DoesNotExist, callbacks left out", () => {
  assert.equal(objectSelector(undefined), undefined);
  assert.equal(objectSelector({ a: () => true }), undefined);
  assert.deepEqual(objectSelector({ a: PRESENT, b: ABSENT, c: "x", d: () => true }), {
    matchExpressions: [
      { key: "a", operator: "Exists" },
      { key: "b", operator: "DoesNotExist" },
      { key: "c", operator: "In", values: ["x"] },
    ],
  });
});

Deno.test("client configs get /<id> on the URL or the service path", () => {
  assert.deepEqual(handlerClientConfig({ url: "https://h:1/hooks/", caBundle: "Q0E=" }, "a/b"), {
    url: "https://h:1/hooks/a%2Fb",
    caBundle: "Q0E=",
  });
  assert.deepEqual(handlerClientConfig({ service: { namespace: "ns", name: "svc", port: 443 } }, "x"), {
    service: { namespace: "ns", name: "svc", port: 443, path: "/x" },
  });
});

Deno.test("buildWebhooks: one per handler of the type with resources; rules, policies, persistence", () => {
  const registry = new Registry();
  validate("kopfexamples", { registry, operations: ["CREATE", "UPDATE"], subresource: "*" }, function v1() {});
  validate("nothing", { registry }, function unresolved() {});
  mutate("kopfexamples", { registry, persistent: true, sideEffects: true, ignoreFailures: true }, function m1() {});
  const handlers = registry.webhooks;
  const resources = new Map(handlers.map((handler) => [handler.id, handler.selector.select([KEX]).resources]));
  const common = { managed: "auto.kopf.dev", clientConfig: { url: "https://h" }, resources };
  const validating = buildWebhooks(handlers, { ...common, type: "validating" });
  assert.deepEqual(validating, [{
    name: "v1.auto.kopf.dev",
    sideEffects: "None",
    failurePolicy: "Fail",
    matchPolicy: "Equivalent",
    rules: [{
      apiGroups: ["kopf.dev"],
      apiVersions: ["v1"],
      resources: ["kopfexamples/*"],
      operations: ["CREATE", "UPDATE"],
      scope: "*",
    }],
    clientConfig: { url: "https://h/v1" },
    timeoutSeconds: 30,
    admissionReviewVersions: ["v1", "v1beta1"],
  }]);
  const mutating = buildWebhooks(handlers, { ...common, type: "mutating" });
  assert.equal(mutating.length, 1);
  assert.equal(mutating[0].sideEffects, "NoneOnDryRun");
  assert.equal(mutating[0].failurePolicy, "Ignore");
  assert.deepEqual(buildWebhooks(handlers, { ...common, type: "validating", persistentOnly: true }), []);
  assert.equal(buildWebhooks(handlers, { ...common, type: "mutating", persistentOnly: true }).length, 1);
});
