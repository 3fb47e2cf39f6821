// API discovery against a real kube-apiserver (LocalCluster): CRDs created through the API are
// discovered in both the aggregated and the classic form, and the selectors of handlers resolve.

import assert from "node:assert/strict";
import { ApiClient } from "../src/api/client.ts";
import type { Credentials } from "../src/api/credentials.ts";
import { discoverResources, Discovery, type DiscoveryClient, resolveSelectors } from "../src/api/discovery.ts";
import { LocalCluster } from "../src/kits/local_cluster/local_cluster.ts";
import { type Resource, resourceName } from "../src/model/resource.ts";
import { EVERYTHING, Selector } from "../src/model/selector.ts";
import { eventually } from "./support/eventually.ts";

const CRDS = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions";

function credentialsOf(cluster: LocalCluster): Credentials {
  return {
    server: cluster.server,
    tls: { caCerts: [cluster.caCert], insecure: false },
    source: "LocalCluster",
    authorization: () => Promise.resolve(`Bearer ${cluster.token}`),
    invalidate: () => {},
  };
}

/** A CRD with an open schema and the status subresource in each version. */
function crd(options: {
  group: string;
  plural: string;
  kind: string;
  shortNames?: string[];
  categories?: string[];
  versions?: string[];
}): unknown {
  const versions = options.versions ?? ["v1"];
  return {
    apiVersion: "apiextensions.k8s.io/v1",
    kind: "CustomResourceDefinition",
    metadata: { name: `${options.plural}.${options.group}` },
    spec: {
      group: options.group,
      scope: "Namespaced",
      names: {
        plural: options.plural,
        singular: options.kind.toLowerCase(),
        kind: options.kind,
        shortNames: options.shortNames,
        categories: options.categories,
      },
      versions: versions.map((version, index) => ({
        name: version,
        served: true,
        storage: index === 0,
        subresources: { status: {} },
        schema: { openAPIV3Schema: { type: "object", "x-kubernetes-preserve-unknown-fields": true } },
      })),
    },
  };
}

/** Waits until discovery serves all given resource names (CRDs appear there a moment after creation). */
function waitDiscovered(client: DiscoveryClient, names: string[]): Promise<Resource[]> {
  return eventually(`discovery to serve ${names.join(", ")}`, async () => {
    const resources = await discoverResources(client);
    const found = new Set(resources.map(resourceName));
    const missing = names.filter((name) => !found.has(name));
    if (missing.length) throw new Error(`not discovered yet: ${missing.join(", ")}`);
    return resources;
  }, { seconds: 30, interval: 0.2 });
}

/** The same client, but it never asks for the aggregated form: the server answers classically. */
function classicOnly(client: ApiClient): DiscoveryClient {
  return { request: (options) => client.request({ ...options, accept: undefined }) };
}

Deno.test("discovery against a real API server", async (t) => {
  await using cluster = await LocalCluster.start();
  using client = new ApiClient(credentialsOf(cluster));

  await client.request({
    method: "POST",
    path: CRDS,
    body: crd({
      group: "kopf.dev",
      plural: "kopfexamples",
      kind: "KopfExample",
      shortNames: ["kopfexes", "kopfex", "kexes", "kex"],
      categories: ["mycat"],
    }),
  });
  await client.request({
    method: "POST",
    path: CRDS,
    body: crd({ group: "multi.example", plural: "gizmos", kind: "Gizmo", versions: ["v1", "v2"] }),
  });
  for (const group of ["a.example", "b.example"]) {
    await client.request({ method: "POST", path: CRDS, body: crd({ group, plural: "widgets", kind: "Widget" }) });
  }
  const expected = [
    "kopfexamples.v1.kopf.dev",
    "gizmos.v1.multi.example",
    "gizmos.v2.multi.example",
    "widgets.v1.a.example",
    "widgets.v1.b.example",
  ];
  const aggregated = await waitDiscovered(client, expected);

  await t.step("aggregated discovery takes two requests", async () => {
    const before = client.counters.count({ verb: "get" });
    await discoverResources(client);
    assert.equal(client.counters.count({ verb: "get" }) - before, 2);
  });

  await t.step("CRDs are discovered with their names, subresources and preferred version", () => {
    const kex = aggregated.find((resource) => resourceName(resource) === "kopfexamples.v1.kopf.dev");
    assert.deepEqual(kex && { ...kex, verbs: [...kex.verbs].sort() }, {
      group: "kopf.dev",
      version: "v1",
      plural: "kopfexamples",
      kind: "KopfExample",
      singular: "kopfexample",
      namespaced: true,
      preferred: true,
      shortcuts: ["kopfexes", "kopfex", "kexes", "kex"],
      categories: ["mycat"],
      verbs: ["create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"],
      subresources: ["status"],
    });
    const gizmos = aggregated.filter((resource) => resource.plural === "gizmos");
    assert.deepEqual(gizmos.map((resource) => [resource.version, resource.preferred]).sort(), [
      ["v1", false],
      ["v2", true],
    ]);
    const pods = aggregated.find((resource) => resourceName(resource) === "pods.v1");
    assert.ok(pods?.preferred);
    assert.ok(pods.subresources.includes("status"), String(pods.subresources));
    assert.ok(!aggregated.some((resource) => resource.plural.includes("/")), "no subresource is a resource");
  });

  await t.step("classic discovery finds the same resources", async () => {
    const before = client.counters.count({ verb: "get" });
    const classic = await discoverResources(classicOnly(client));
    assert.ok(client.counters.count({ verb: "get" }) - before > 10, "the classic walk reads each group version");
    const normalise = (resources: Resource[]) =>
      resources
        .map((resource) => ({
          ...resource,
          verbs: [...resource.verbs].sort(),
          subresources: [...resource.subresources].sort(),
          shortcuts: [...resource.shortcuts].sort(),
          categories: [...resource.categories].sort(),
        }))
        .sort((a, b) => resourceName(a).localeCompare(resourceName(b)));
    assert.deepEqual(normalise(classic), normalise(aggregated));
  });

  await t.step("the selectors of the API resolve", async () => {
    const discovery = new Discovery(client);
    const cases: [ConstructorParameters<typeof Selector>[0], string[]][] = [
      ["kex", ["kopfexamples.v1.kopf.dev"]],
      ["kopfexamples.kopf.dev", ["kopfexamples.v1.kopf.dev"]],
      ["kopfexamples.v1.kopf.dev", ["kopfexamples.v1.kopf.dev"]],
      [{ kind: "KopfExample" }, ["kopfexamples.v1.kopf.dev"]],
      [{ shortcut: "kex" }, ["kopfexamples.v1.kopf.dev"]],
      [{ category: "mycat" }, ["kopfexamples.v1.kopf.dev"]],
      ["pods", ["pods.v1"]],
      ["pods.v1", ["pods.v1"]],
      ["gizmos", ["gizmos.v2.multi.example"]],
      ["gizmos.v1.multi.example", ["gizmos.v1.multi.example"]],
      ["widgets.b.example", ["widgets.v1.b.example"]],
      ["widgets", []],
    ];
    const selectors = cases.map(([input]) => new Selector(input));
    const { served, ambiguous, unresolved } = await discovery.resolve(selectors);
    cases.forEach(([input, names], index) => {
      assert.deepEqual(
        served.get(selectors[index])?.map(resourceName),
        names,
        String(selectors[index]) || String(input),
      );
    });
    assert.deepEqual([...ambiguous.values()].map((found) => found.map(resourceName)), [[
      "widgets.v1.a.example",
      "widgets.v1.b.example",
    ]]);
    assert.deepEqual(unresolved, []);
  });

  await t.step("EVERYTHING skips events and serves only watchable resources", async () => {
    const everything = new Selector(EVERYTHING);
    const { served, nonwatchable } = resolveSelectors([everything], await discoverResources(client));
    const names = served.get(everything)?.map(resourceName) ?? [];
    assert.ok(names.includes("pods.v1") && names.includes("kopfexamples.v1.kopf.dev"));
    assert.ok(!names.includes("events.v1") && !names.includes("events.v1.events.k8s.io"));
    assert.ok(nonwatchable.some((resource) => resource.plural === "bindings"), "bindings are create-only");
  });

  await t.step("a deleted CRD leaves its group after a refresh", async () => {
    const discovery = new Discovery(client, { groups: ["", "b.example"] });
    await discovery.resources();
    await client.request({ method: "DELETE", path: `${CRDS}/widgets.b.example` });
    const resources = await eventually("widgets.b.example to leave the discovery", async () => {
      const resources = await discovery.refresh({ groups: ["b.example"] });
      return resources.some((resource) => resource.group === "b.example") ? undefined : resources;
    }, { seconds: 30, interval: 0.2 });
    assert.ok(resources.some((resource) => resourceName(resource) === "pods.v1"), "the core group stays cached");
  });
});
