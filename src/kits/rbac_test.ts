import assert from "node:assert/strict";
import * as on from "../../on.ts";
import { Registry } from "../handling/registry.ts";
import type { Resource } from "../model/resource.ts";
import { neededRules, type RbacOptions } from "./rbac.ts";

const WIDGETS: Resource = {
  group: "example.com",
  version: "v2",
  plural: "widgets",
  kind: "Widget",
  singular: "widget",
  namespaced: true,
  preferred: true,
  shortcuts: [],
  categories: [],
  verbs: ["get", "list", "patch", "watch"],
  subresources: [],
};

Deno.test("converters with managed webhooks need get and patch of their CRDs, by name; without managed, nothing", () => {
  const registry = new Registry();
  on.conversion("widgets", { registry, from: "v1", to: "v2" }, (body) => body);
  on.conversion("widgets.v2.example.com", { registry, from: "v2", to: "v1" }, (body) => body);
  const resolved = new Map(registry.converters.map((converter) => [converter.selector, [WIDGETS]]));
  const options: RbacOptions = { namespaces: [], clusterwide: true, name: "op", installNamespace: "default" };
  const crdRules = (managedAdmission?: string) =>
    neededRules(registry, resolved, { ...options, managedAdmission })
      .filter((rule) => rule.resources.includes("customresourcedefinitions") && rule.verbs.includes("patch"));
  assert.deepEqual(crdRules("auto.kopf.dev"), [{
    reason: "managed conversion webhooks: the CRDs' spec.conversion",
    scope: "cluster",
    apiGroups: ["apiextensions.k8s.io"],
    resources: ["customresourcedefinitions"],
    verbs: ["get", "patch"],
    resourceNames: ["widgets.example.com"],
  }]);
  assert.deepEqual(crdRules(undefined), []);
});
