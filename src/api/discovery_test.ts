// Unit tests of API discovery against a scripted fake API server: the aggregated and the classic
// documents (shaped as kube-apiserver sends them), group filters, failing group versions, and the
// warnings of selector resolution. The real thing is tested in tests/discovery_test.ts.

import assert from "node:assert/strict";
import { configure, type LogRecord, reset } from "@logtape/logtape";
import { compareVersionPriority, crdReflected, discoverResources, Discovery, resolveSelectors } from "./discovery.ts";
import type { Resource } from "../model/resource.ts";
import { resourceName } from "../model/resource.ts";
import { EVERYTHING, Selector } from "../model/selector.ts";
import { FakeApi, json } from "../../tests/support/fake_api.ts";

const AGGREGATED = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList";
const VERBS = ["create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"];

// -- Aggregated discovery (kube-apiserver >= 1.30), trimmed to a few resources. ----------------
// Shaped as kube-apiserver 1.36.3 sends them: the core group's metadata is `{}` (no name at all),
// built-in resources leave `responseKind.group/version` empty while CRDs fill them in, and an
// aggregated API that is down is a version with `freshness: "Stale"` and no resources.

const AGGREGATED_CORE = {
  kind: "APIGroupDiscoveryList",
  apiVersion: "apidiscovery.k8s.io/v2",
  metadata: {},
  items: [{
    metadata: {},
    versions: [{
      version: "v1",
      resources: [
        {
          resource: "bindings",
          responseKind: { group: "", version: "", kind: "Binding" },
          scope: "Namespaced",
          singularResource: "binding",
          verbs: ["create"],
        },
        {
          resource: "componentstatuses",
          responseKind: { group: "", version: "", kind: "ComponentStatus" },
          scope: "Cluster",
          singularResource: "componentstatus",
          verbs: ["get", "list"],
          shortNames: ["cs"],
        },
        {
          resource: "events",
          responseKind: { group: "", version: "", kind: "Event" },
          scope: "Namespaced",
          singularResource: "event",
          verbs: VERBS,
          shortNames: ["ev"],
        },
        {
          resource: "pods",
          responseKind: { group: "", version: "", kind: "Pod" },
          scope: "Namespaced",
          singularResource: "pod",
          verbs: VERBS,
          shortNames: ["po"],
          categories: ["all"],
          subresources: [
            { subresource: "binding", responseKind: { group: "", version: "", kind: "Binding" }, verbs: ["create"] },
            { subresource: "log", responseKind: { group: "", version: "", kind: "Pod" }, verbs: ["get"] },
            { subresource: "status", responseKind: { group: "", version: "", kind: "Pod" }, verbs: ["get", "patch"] },
          ],
        },
      ],
      freshness: "Current",
    }],
  }],
};

const AGGREGATED_APIS = {
  kind: "APIGroupDiscoveryList",
  apiVersion: "apidiscovery.k8s.io/v2",
  metadata: {},
  items: [
    {
      metadata: { name: "apps" },
      versions: [{
        version: "v1",
        resources: [{
          resource: "deployments",
          responseKind: { group: "", version: "", kind: "Deployment" },
          scope: "Namespaced",
          singularResource: "deployment",
          verbs: VERBS,
          shortNames: ["deploy"],
          categories: ["all"],
          subresources: [
            {
              subresource: "scale",
              responseKind: { group: "autoscaling", version: "v1", kind: "Scale" },
              verbs: ["get"],
            },
            { subresource: "status", responseKind: { group: "", version: "", kind: "Deployment" }, verbs: ["get"] },
          ],
        }],
        freshness: "Current",
      }],
    },
    {
      metadata: { name: "events.k8s.io" },
      versions: [{
        version: "v1",
        resources: [{
          resource: "events",
          responseKind: { group: "", version: "", kind: "Event" },
          scope: "Namespaced",
          singularResource: "event",
          verbs: VERBS,
          shortNames: ["ev"],
        }],
        freshness: "Current",
      }],
    },
    {
      // Versions in the order of preference: v2 first.
      metadata: { name: "kopf.dev" },
      versions: ["v2", "v1"].map((version) => ({
        version,
        resources: [{
          resource: "kopfexamples",
          responseKind: { group: "kopf.dev", version, kind: "KopfExample" },
          scope: "Namespaced",
          singularResource: "kopfexample",
          verbs: VERBS,
          shortNames: ["kopfexes", "kopfex", "kexes", "kex"],
          categories: ["mycat"],
          subresources: [{
            subresource: "status",
            responseKind: { group: "kopf.dev", version, kind: "KopfExample" },
            verbs: ["get", "patch", "update"],
          }],
        }],
        freshness: "Current",
      })),
    },
    {
      // An aggregated API whose server is down.
      metadata: { name: "metrics.k8s.io" },
      versions: [{ version: "v1beta1", freshness: "Stale" }],
    },
    {
      // A parent that only serves subresources has no kind.
      metadata: { name: "odd.example" },
      versions: [{
        version: "v1",
        resources: [{
          resource: "things",
          scope: "Namespaced",
          singularResource: "",
          verbs: [],
          subresources: [{ subresource: "proxy", responseKind: { group: "", version: "", kind: "Thing" }, verbs: [] }],
        }],
        freshness: "Current",
      }],
    },
  ],
};

// -- Classic discovery (servers before aggregated discovery, or with it disabled). ------------

const CLASSIC_CORE = {
  kind: "APIVersions",
  versions: ["v1"],
  serverAddressByClientCIDRs: [{ clientCIDR: "0.0.0.0/0", serverAddress: "127.0.0.1:6443" }],
};

const CLASSIC_V1 = {
  kind: "APIResourceList",
  groupVersion: "v1",
  resources: [
    { name: "componentstatuses", singularName: "", namespaced: false, kind: "ComponentStatus", verbs: ["get", "list"] },
    {
      name: "pods",
      singularName: "pod",
      namespaced: true,
      kind: "Pod",
      verbs: VERBS,
      shortNames: ["po"],
      categories: ["all"],
      storageVersionHash: "xPOwRZ+Yhw8=",
    },
    { name: "pods/log", singularName: "", namespaced: true, kind: "Pod", verbs: ["get"] },
    { name: "pods/status", singularName: "", namespaced: true, kind: "Pod", verbs: ["get", "patch", "update"] },
  ],
};

const CLASSIC_APIS = {
  kind: "APIGroupList",
  apiVersion: "v1",
  groups: [
    {
      name: "kopf.dev",
      versions: [{ groupVersion: "kopf.dev/v2", version: "v2" }, { groupVersion: "kopf.dev/v1", version: "v1" }],
      preferredVersion: { groupVersion: "kopf.dev/v1", version: "v1" },
    },
    {
      name: "gone.example",
      versions: [{ groupVersion: "gone.example/v1", version: "v1" }],
      preferredVersion: { groupVersion: "gone.example/v1", version: "v1" },
    },
    {
      name: "metrics.k8s.io",
      versions: [{ groupVersion: "metrics.k8s.io/v1beta1", version: "v1beta1" }],
      preferredVersion: { groupVersion: "metrics.k8s.io/v1beta1", version: "v1beta1" },
    },
  ],
};

function classicKopfExamples(version: string): unknown {
  return {
    kind: "APIResourceList",
    apiVersion: "v1",
    groupVersion: `kopf.dev/${version}`,
    resources: [
      {
        name: "kopfexamples",
        singularName: "kopfexample",
        namespaced: true,
        kind: "KopfExample",
        verbs: VERBS,
        shortNames: ["kopfexes", "kopfex", "kexes", "kex"],
        categories: ["mycat"],
      },
      { name: "kopfexamples/status", singularName: "", namespaced: true, kind: "KopfExample", verbs: ["get", "patch"] },
    ],
  };
}

/** A fake server that answers with the aggregated documents if asked for them, else classically. */
function fakeServer(options: { aggregated: boolean }): FakeApi {
  return new FakeApi((request, url) => {
    const aggregated = options.aggregated && (request.headers.get("Accept") ?? "").includes(AGGREGATED);
    switch (url.pathname) {
      case "/api":
        return json(aggregated ? AGGREGATED_CORE : CLASSIC_CORE);
      case "/apis":
        return json(aggregated ? AGGREGATED_APIS : CLASSIC_APIS);
      case "/api/v1":
        return json(CLASSIC_V1);
      case "/apis/kopf.dev/v1":
        return json(classicKopfExamples("v1"));
      case "/apis/kopf.dev/v2":
        return json(classicKopfExamples("v2"));
      case "/apis/metrics.k8s.io/v1beta1":
        return json({ kind: "Status", status: "Failure", message: "service unavailable", code: 503 }, 503);
      default:
        return json({ kind: "Status", status: "Failure", reason: "NotFound", code: 404 }, 404);
    }
  });
}

/** Collects the discovery warnings logged while `fn` runs. */
async function warningsOf(fn: () => Promise<unknown> | unknown): Promise<string[]> {
  const records: LogRecord[] = [];
  await configure({
    reset: true,
    sinks: { memory: (record: LogRecord) => records.push(record) },
    loggers: [
      { category: ["kopf", "discovery"], sinks: ["memory"], lowestLevel: "warning" },
      { category: ["logtape", "meta"], sinks: [], lowestLevel: "warning" },
    ],
  });
  try {
    await fn();
  } finally {
    await reset();
  }
  return records.map((record) => record.message.map(String).join(""));
}

function find(resources: Resource[], name: string): Resource {
  const found = resources.find((resource) => resourceName(resource) === name);
  assert.ok(found, `${name} is not among ${resources.map(resourceName).join(", ")}`);
  return found;
}

Deno.test("aggregated discovery reads the whole cluster in two requests", async () => {
  await using api = fakeServer({ aggregated: true });
  let resources: Resource[] = [];
  const warnings = await warningsOf(async () => resources = await discoverResources(api.client));

  assert.deepEqual(api.requests.map((url) => url.pathname).sort(), ["/api", "/apis"]);
  assert.deepEqual(resources.map(resourceName), [
    "bindings.v1",
    "componentstatuses.v1",
    "events.v1",
    "pods.v1",
    "deployments.v1.apps",
    "events.v1.events.k8s.io",
    "kopfexamples.v2.kopf.dev",
    "kopfexamples.v1.kopf.dev",
  ]);
  assert.deepEqual(find(resources, "pods.v1"), {
    group: "",
    version: "v1",
    plural: "pods",
    kind: "Pod",
    singular: "pod",
    namespaced: true,
    preferred: true,
    shortcuts: ["po"],
    categories: ["all"],
    verbs: VERBS,
    subresources: ["binding", "log", "status"],
  });
  assert.equal(find(resources, "componentstatuses.v1").namespaced, false);
  assert.deepEqual(find(resources, "deployments.v1.apps").subresources, ["scale", "status"]);
  assert.equal(find(resources, "kopfexamples.v2.kopf.dev").preferred, true);
  assert.equal(find(resources, "kopfexamples.v1.kopf.dev").preferred, false);
  assert.deepEqual(find(resources, "kopfexamples.v1.kopf.dev").shortcuts, ["kopfexes", "kopfex", "kexes", "kex"]);
  assert.equal(warnings.length, 1);
  assert.match(warnings[0], /metrics\.k8s\.io\/v1beta1 is unavailable \(discovery marks it stale\)/);
});

Deno.test("aggregated discovery asks for the aggregated form and reads only the needed documents", async () => {
  await using api = fakeServer({ aggregated: true });
  const named = await discoverResources(api.client, { groups: ["kopf.dev"] });
  assert.deepEqual(named.map(resourceName), ["kopfexamples.v2.kopf.dev", "kopfexamples.v1.kopf.dev"]);
  assert.deepEqual(api.requests.map((url) => url.pathname), ["/apis"]);

  const core = await discoverResources(api.client, { groups: [""] });
  assert.ok(core.every((resource) => resource.group === ""));
  assert.deepEqual(api.requests.map((url) => url.pathname), ["/apis", "/api"]);
  assert.equal(api.client.counters.count({ verb: "get" }), 2);
});

Deno.test("classic discovery walks the group versions when the server has no aggregated form", async () => {
  await using api = fakeServer({ aggregated: false });
  let resources: Resource[] = [];
  const warnings = await warningsOf(async () => resources = await discoverResources(api.client));

  assert.deepEqual(api.requests.map((url) => url.pathname).sort(), [
    "/api",
    "/api/v1",
    "/apis",
    "/apis/gone.example/v1",
    "/apis/kopf.dev/v1",
    "/apis/kopf.dev/v2",
    "/apis/metrics.k8s.io/v1beta1",
    "/apis/metrics.k8s.io/v1beta1", // retried once as a 5xx
    "/apis/metrics.k8s.io/v1beta1", // and once more (the fake client's two quick backoffs)
  ]);
  assert.deepEqual(resources.map(resourceName).sort(), [
    "componentstatuses.v1",
    "kopfexamples.v1.kopf.dev",
    "kopfexamples.v2.kopf.dev",
    "pods.v1",
  ]);
  const pods = find(resources, "pods.v1");
  assert.deepEqual(pods.subresources, ["log", "status"]);
  assert.equal(pods.preferred, true);
  assert.equal(pods.namespaced, true);
  // An empty singular (as K3s sends for builtins) becomes the lower-cased kind.
  assert.equal(find(resources, "componentstatuses.v1").singular, "componentstatus");
  // The group's preferredVersion decides, not the order.
  assert.equal(find(resources, "kopfexamples.v1.kopf.dev").preferred, true);
  assert.equal(find(resources, "kopfexamples.v2.kopf.dev").preferred, false);
  assert.deepEqual(find(resources, "kopfexamples.v1.kopf.dev").subresources, ["status"]);

  assert.equal(warnings.length, 2);
  assert.ok(warnings.some((text) => /gone\.example\/v1 is gone \(HTTP 404\)/.test(text)), String(warnings));
  assert.ok(warnings.some((text) => /metrics\.k8s\.io\/v1beta1 is unavailable, .*HTTP 503/.test(text)));
});

Deno.test("classic discovery reads only the requested groups", async () => {
  await using api = fakeServer({ aggregated: false });
  const resources = await discoverResources(api.client, { groups: ["kopf.dev"] });
  assert.deepEqual(resources.map(resourceName).sort(), ["kopfexamples.v1.kopf.dev", "kopfexamples.v2.kopf.dev"]);
  assert.deepEqual(api.requests.map((url) => url.pathname).sort(), ["/apis", "/apis/kopf.dev/v1", "/apis/kopf.dev/v2"]);
});

Deno.test("a document that is not discovery is an error that says so", async () => {
  await using api = new FakeApi(() => json({ hello: "world" }));
  await assert.rejects(discoverResources(api.client, { groups: [""] }), /GET \/api returned an unexpected document/);
  await assert.rejects(discoverResources(api.client, { groups: ["x"] }), /GET \/apis returned an unexpected document/);
});

Deno.test("other errors fail the scan", async () => {
  await using api = new FakeApi((_, url) =>
    url.pathname === "/apis"
      ? json(CLASSIC_APIS)
      : json({ kind: "Status", reason: "Forbidden", message: "no", code: 403 }, 403)
  );
  await assert.rejects(discoverResources(api.client, { groups: ["kopf.dev"] }), { name: "ApiForbiddenError" });
});

Deno.test("resolving selectors warns about ambiguous, unresolved and non-watchable resources", async () => {
  await using api = fakeServer({ aggregated: true });
  const resources = await discoverResources(api.client);
  const widgets = ["a.example", "b.example"].map((group) => ({
    ...find(resources, "deployments.v1.apps"),
    group,
    plural: "widgets",
    kind: "Widget",
  }));
  const kex = new Selector("kex");
  const events = new Selector("events");
  const everything = new Selector(EVERYTHING);
  const ambiguous = new Selector("widgets");
  const missing = new Selector("missingthings");
  const statuses = new Selector("componentstatuses");
  const bindings = new Selector({ kind: "Binding" });

  let resolution: ReturnType<typeof resolveSelectors> | undefined;
  const warnings = await warningsOf(() => {
    resolution = resolveSelectors(
      [kex, events, everything, ambiguous, missing, statuses, bindings, kex],
      [...resources, ...widgets],
    );
  });
  assert.ok(resolution);
  assert.deepEqual(resolution.served.get(kex)?.map(resourceName), ["kopfexamples.v2.kopf.dev"]);
  assert.deepEqual(resolution.served.get(events)?.map(resourceName), ["events.v1"]);
  assert.deepEqual(resolution.served.get(everything)?.map(resourceName), [
    "pods.v1",
    "deployments.v1.apps",
    "kopfexamples.v2.kopf.dev",
    "widgets.v1.a.example",
    "widgets.v1.b.example",
  ]);
  assert.deepEqual(resolution.served.get(ambiguous), []);
  assert.deepEqual(resolution.ambiguous.get(ambiguous)?.map(resourceName), [
    "widgets.v1.a.example",
    "widgets.v1.b.example",
  ]);
  assert.deepEqual(resolution.unresolved, [missing]);
  assert.deepEqual(resolution.served.get(statuses), []);
  assert.deepEqual(resolution.nonwatchable.map(resourceName), ["bindings.v1", "componentstatuses.v1"]);
  assert.deepEqual(warnings, [
    'Ambiguous resources will not be served (try specifying API groups): "widgets" => widgets.v1.a.example, widgets.v1.b.example',
    'Unresolved resources cannot be served (try creating their CRDs): "missingthings"',
    "Non-watchable resources will not be served (no list and watch verbs): bindings.v1, componentstatuses.v1",
  ]);
});

Deno.test("non-patchable resources are not served to patching selectors", async () => {
  const readonly: Resource = {
    group: "ro.example",
    version: "v1",
    plural: "readonlies",
    kind: "ReadOnly",
    singular: "readonly",
    namespaced: true,
    preferred: true,
    shortcuts: [],
    categories: [],
    verbs: ["get", "list", "watch"],
    subresources: [],
  };
  const forEvents = new Selector("readonlies");
  const forChanges = new Selector({ kind: "ReadOnly" });
  let resolution: ReturnType<typeof resolveSelectors> | undefined;
  const warnings = await warningsOf(() => {
    resolution = resolveSelectors([forEvents, forChanges], [readonly], { patching: [forChanges] });
  });
  assert.deepEqual(resolution?.served.get(forEvents), [readonly]);
  assert.deepEqual(resolution?.served.get(forChanges), []);
  assert.deepEqual(resolution?.nonpatchable, [readonly]);
  assert.deepEqual(warnings, [
    "Non-patchable resources will not be served to stateful handlers: readonlies.v1.ro.example",
  ]);
});

Deno.test("Discovery scans once, resolves from the cache, and refreshes groups on demand", async () => {
  await using api = fakeServer({ aggregated: true });
  const discovery = new Discovery(api.client, { groups: ["", "kopf.dev"] });
  assert.equal(discovery.cached, undefined);

  const [first, second] = await Promise.all([discovery.resources(), discovery.resources()]);
  assert.equal(first, second);
  assert.equal(api.requests.length, 2);
  assert.ok(first.every((resource) => resource.group === "" || resource.group === "kopf.dev"));

  const kex = new Selector("kex");
  const pods = new Selector("pods.v1");
  const { served } = await discovery.resolve([kex, pods]);
  assert.deepEqual(served.get(kex)?.map(resourceName), ["kopfexamples.v2.kopf.dev"]);
  assert.deepEqual(served.get(pods)?.map(resourceName), ["pods.v1"]);
  assert.deepEqual((await discovery.resolve(kex)).served.get(kex)?.map(resourceName), ["kopfexamples.v2.kopf.dev"]);
  assert.equal(api.requests.length, 2, "resolving uses the cache");

  // A group rescan reads only what that group needs and keeps the rest.
  const before = first.filter((resource) => resource.group === "");
  const after = await discovery.refresh({ groups: ["kopf.dev", "apps"] });
  assert.deepEqual(api.requests.map((url) => url.pathname).slice(2), ["/apis"]);
  assert.deepEqual(after.filter((resource) => resource.group === ""), before);
  assert.ok(!after.some((resource) => resource.group === "apps"), "apps is not among the scanned groups");
  assert.equal(after.filter((resource) => resource.group === "kopf.dev").length, 2);

  // A full refresh reads everything again.
  await discovery.refresh();
  assert.equal(api.requests.length, 5);
});

Deno.test("Discovery retries the first scan after a failure", async () => {
  let fail = true;
  await using api = new FakeApi((_, url) => {
    if (fail) return json({ kind: "Status", reason: "Forbidden", code: 403 }, 403);
    return json(url.pathname === "/api" ? AGGREGATED_CORE : AGGREGATED_APIS);
  });
  const discovery = new Discovery(api.client, { groups: [""] });
  await assert.rejects(discovery.resources(), { name: "ApiForbiddenError" });
  fail = false;
  assert.ok((await discovery.resources()).some((resource) => resource.plural === "pods"));
});

Deno.test("warnings already logged are not repeated when a rescan resolves again", async () => {
  const logged = new Set<string>();
  const missing = new Selector("missingthings");
  const first = await warningsOf(() => resolveSelectors([missing], [], { logged }));
  const again = await warningsOf(() => resolveSelectors([missing], [], { logged }));
  const other = await warningsOf(() => resolveSelectors([missing, new Selector("others")], [], { logged }));
  assert.deepEqual(first, ['Unresolved resources cannot be served (try creating their CRDs): "missingthings"']);
  assert.deepEqual(again, []);
  assert.deepEqual(other, [
    'Unresolved resources cannot be served (try creating their CRDs): "missingthings", "others"',
  ]);
});

Deno.test("crdReflected: whether discovery already shows a CRD as it is", () => {
  const resource = (version: string, extra: Partial<Resource> = {}): Resource => ({
    group: "w.example",
    version,
    plural: "widgets",
    kind: "Widget",
    singular: "widget",
    namespaced: true,
    preferred: version === "v1",
    shortcuts: ["wd"],
    categories: [],
    verbs: VERBS,
    subresources: [],
    ...extra,
  });
  const established = { conditions: [{ type: "Established", status: "True" }] };
  const crd = (versions: string[], status: unknown = established, categories: string[] = []) => ({
    metadata: { name: "widgets.w.example" },
    spec: {
      group: "w.example",
      scope: "Namespaced",
      names: { plural: "widgets", kind: "Widget", shortNames: ["wd"], categories },
      versions: versions.map((name) => ({ name, served: true })),
    },
    status: status as { conditions: { type: string; status: string }[] },
  });
  assert.equal(crdReflected(crd(["v1"]), [resource("v1")]), true);
  assert.equal(crdReflected(crd(["v1"]), []), false, "established but not discovered yet");
  assert.equal(crdReflected(crd(["v1", "v2"]), [resource("v1")]), false, "a new version");
  assert.equal(crdReflected(crd(["v1"]), [resource("v1"), resource("v2")]), false, "a removed version");
  assert.equal(crdReflected(crd(["v1"], established, ["mycat"]), [resource("v1")]), false, "a new category");
  assert.equal(crdReflected(crd(["v1"], {}), []), true, "not established: nothing to discover yet");
  assert.equal(crdReflected(crd(["v1"]), [resource("v1")], true), false, "deleted but still discovered");
  assert.equal(crdReflected(crd(["v1"]), [], true), true, "deleted and gone");
  const v2 = resource("v2", { preferred: true });
  assert.equal(crdReflected(crd(["v1", "v2"]), [resource("v1", { preferred: false }), v2]), true);
  assert.equal(
    crdReflected(crd(["v1", "v2"]), [resource("v1"), resource("v2", { preferred: false })]),
    false,
    "v2 listed, but not preferred yet",
  );
});

Deno.test("compareVersionPriority: releases, then betas, then alphas, higher first; other names last", () => {
  const versions = ["v1alpha1", "foo", "v1", "v2beta1", "v11alpha2", "v2", "v1beta2", "bar", "v10beta3"];
  assert.deepEqual(versions.sort(compareVersionPriority), [
    "v2",
    "v1",
    "v10beta3",
    "v2beta1",
    "v1beta2",
    "v11alpha2",
    "v1alpha1",
    "bar",
    "foo",
  ]);
});
