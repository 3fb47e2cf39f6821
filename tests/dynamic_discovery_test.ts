/**
 * Resources that come and go while the operator runs against the shared
 * LocalCluster: each test makes CRDs of its own unique group, so that tests never disturb each
 * other (the shared kopfexamples CRD is never touched).
 */

import assert from "node:assert/strict";
import { reset } from "@logtape/logtape";
import * as kopf from "@kopf/kopf";
import { ApiClient } from "../src/api/client.ts";
import type { Credentials } from "../src/api/credentials.ts";
import { LocalCluster } from "../src/kits/local_cluster/local_cluster.ts";
import { ApiNotFoundError } from "../src/api/errors.ts";
import type { KubernetesObject } from "../src/model/body.ts";
import { runOperator } from "./support/operator.ts";
import { createExample, freshNamespace, settle, testCluster, waitForStatus } from "./support/cluster.ts";
import { eventually } from "./support/eventually.ts";

const CRDS = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions";

/** A unique group with a `widgets` CRD in it (not created yet). */
function widgets(): { group: string; crd: KubernetesObject; path: (namespace: string, name?: string) => string } {
  const group = `dyn${crypto.randomUUID().slice(0, 8)}.example`;
  const crd = {
    apiVersion: "apiextensions.k8s.io/v1",
    kind: "CustomResourceDefinition",
    metadata: { name: `widgets.${group}` },
    spec: {
      group,
      scope: "Namespaced",
      names: { plural: "widgets", singular: "widget", kind: "Widget" },
      versions: [{
        name: "v1",
        served: true,
        storage: true,
        subresources: { status: {} },
        schema: { openAPIV3Schema: { type: "object", "x-kubernetes-preserve-unknown-fields": true } },
      }],
    },
  };
  const path = (namespace: string, name?: string) =>
    `/apis/${group}/v1/namespaces/${namespace}/widgets${name ? `/${name}` : ""}`;
  return { group, crd, path };
}

/** Creates a widget, retrying while the API server does not serve the new CRD yet (404). */
async function createWidget(client: ApiClient, path: string, group: string, name: string): Promise<void> {
  await eventually(`widget ${name} to be created`, async () => {
    try {
      await client.request({
        method: "POST",
        path,
        body: { apiVersion: `${group}/v1`, kind: "Widget", metadata: { name }, spec: {} },
      });
      return true;
    } catch (error) {
      if (error instanceof ApiNotFoundError) return undefined;
      throw error;
    }
  });
}

Deno.test("a CRD created after the start is served, follows its new version, and its deletion stops its stream; the operator goes on", async () => {
  const { client } = await testCluster();
  const namespace = await freshNamespace(client, "dyncrd");
  const { group, crd, path } = widgets();
  const registry = new kopf.Registry();
  kopf.on.create(`widgets.${group}`, { registry }, function widgetFn({ name, resource }) {
    return { widget: name, plural: resource.plural };
  });
  kopf.on.create("kopfexamples", { registry }, function kexFn({ name }) {
    return { kex: name };
  });
  const lines: string[] = [];
  await kopf.configureLogging({ format: "full", level: "debug", write: (line) => lines.push(line) });
  const operator = await runOperator(registry, namespace);
  const { streams } = operator.running;
  const stream = `widgets.v1.${group} in ${namespace}`;
  try {
    // 2.7: the selector matches nothing yet: a warning, and the operator runs.
    assert.ok(
      lines.some((line) =>
        line.includes(`Unresolved resources cannot be served (try creating their CRDs): "widgets.${group}"`)
      ),
      lines.join("\n"),
    );
    assert.deepEqual([...streams.keys()], [`kopfexamples.v1.kopf.dev in ${namespace}`]);

    // 2.8: the CRD appears: its group is rescanned, the stream starts, objects are handled.
    await client.request({ method: "POST", path: CRDS, body: crd });
    await eventually(`the stream ${stream}`, () => streams.has(stream) || undefined);
    await createWidget(client, path(namespace), group, "w1");
    const handled = await eventually("widget w1 to be handled", async () => {
      const body = await client.request<KubernetesObject>({ path: path(namespace, "w1") });
      return (body.status as Record<string, unknown> | undefined)?.widgetFn;
    });
    assert.deepEqual(handled, { widget: "w1", plural: "widgets" });

    // The CRD changes: a new version v2 becomes the group's preferred one; the selector follows it.
    const crdPath = `${CRDS}/widgets.${group}`;
    const current = await client.request<KubernetesObject & { spec: { versions: unknown[] } }>({ path: crdPath });
    const v1 = current.spec.versions[0] as Record<string, unknown>;
    await client.request({
      method: "PATCH",
      path: crdPath,
      contentType: "application/merge-patch+json",
      body: { spec: { versions: [v1, { ...v1, name: "v2", storage: false }] } },
    });
    const stream2 = `widgets.v2.${group} in ${namespace}`;
    await eventually(`the stream ${stream2}`, () => (streams.has(stream2) && !streams.has(stream)) || undefined);
    await createWidget(client, path(namespace), group, "w2");
    const handled2 = await eventually("widget w2 to be handled", async () => {
      const body = await client.request<KubernetesObject>({ path: path(namespace, "w2") });
      return (body.status as Record<string, unknown> | undefined)?.widgetFn;
    });
    assert.deepEqual(handled2, { widget: "w2", plural: "widgets" });

    // The CRD goes: its stream stops, the operator keeps serving the rest.
    await client.request({ method: "DELETE", path: `${CRDS}/widgets.${group}` });
    await eventually(`the stream ${stream2} to stop`, () => !streams.has(stream2) || undefined);
    await createExample(client, namespace, "after");
    assert.deepEqual(await waitForStatus(namespace, "after", "kexFn"), { kex: "after" });
    assert.deepEqual([...streams.keys()], [`kopfexamples.v1.kopf.dev in ${namespace}`]);
    const errors = lines.filter((line) => /\[(ERROR|CRITICAL|FATAL)/.test(line));
    assert.deepEqual(errors, [], "no errors logged");
    const crdRequests = operator.running.client.counters.snapshot();
    assert.equal(crdRequests["list customresourcedefinitions"], undefined, "CRDs are watched, never listed");
  } finally {
    await operator.stop();
    await reset();
  }
});

Deno.test("a CRD of a group that nobody selects causes no rescan", async () => {
  const { client } = await testCluster();
  const namespace = await freshNamespace(client, "dynskip");
  const { group, crd } = widgets();
  const registry = new kopf.Registry();
  kopf.on.event("kopfexamples.kopf.dev", { registry }, function eventFn() {});
  const operator = await runOperator(registry, namespace);
  try {
    const counters = operator.running.client.counters;
    // Observation windows: the operator neither says nor sends anything about a CRD it ignores,
    // and the CRD watch sees every other test's CRDs too, so no count of its events can tell ours.
    await settle(1);
    const before = counters.count({ verb: "get" });
    await client.request({ method: "POST", path: CRDS, body: crd });
    await settle(3);
    assert.equal(counters.count({ verb: "get" }) - before, 0, "no discovery request for an unselected group");
  } finally {
    await operator.stop();
    await client.request({ method: "DELETE", path: `${CRDS}/widgets.${group}` });
  }
});

Deno.test("non-watchable resources are not served, with Kopf's warning", async () => {
  const { client } = await testCluster();
  const namespace = await freshNamespace(client, "nowatch");
  const registry = new kopf.Registry();
  kopf.on.event("bindings.v1", { registry }, function bindingFn() {});
  kopf.on.event("kopfexamples", { registry }, function eventFn() {});
  const lines: string[] = [];
  await kopf.configureLogging({ format: "plain", level: "debug", write: (line) => lines.push(line) });
  const operator = await runOperator(registry, namespace);
  try {
    assert.ok(
      lines.some((line) => line.includes("Non-watchable resources will not be served") && line.includes("bindings.v1")),
      lines.join("\n"),
    );
    assert.deepEqual([...operator.running.streams.keys()], [`kopfexamples.v1.kopf.dev in ${namespace}`]);
  } finally {
    await operator.stop();
    await reset();
  }
});

Deno.test("an aggregated API that is down: a selector with a group never reads it; a group-less one warns and serves", async () => {
  // A cluster of its own: a broken APIService would make every other test's discovery warn.
  await using cluster = await LocalCluster.start();
  const credentials: Credentials = {
    server: cluster.server,
    tls: { caCerts: [cluster.caCert], insecure: false },
    source: "LocalCluster",
    authorization: () => Promise.resolve(`Bearer ${cluster.token}`),
    invalidate: () => {},
  };
  using client = new ApiClient(credentials);
  const namespace = "default";
  await client.request({
    method: "POST",
    path: `/api/v1/namespaces/${namespace}/services`,
    body: { metadata: { name: "nowhere" }, spec: { ports: [{ port: 443 }] } },
  });
  await client.request({
    method: "POST",
    path: "/apis/apiregistration.k8s.io/v1/apiservices",
    body: {
      metadata: { name: "v1.broken.example" },
      spec: {
        group: "broken.example",
        version: "v1",
        service: { namespace, name: "nowhere", port: 443 },
        insecureSkipTLSVerify: true,
        groupPriorityMinimum: 1000,
        versionPriority: 15,
      },
    },
  });
  // Wait until discovery lists the group (as stale or failing): only then is the test meaningful.
  await eventually("the broken group in discovery", async () => {
    const apis = await client.request<{ items?: { metadata?: { name?: string } }[]; groups?: { name: string }[] }>({
      path: "/apis",
      accept: "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json",
    });
    const names = [...apis.items ?? [], ...apis.groups?.map((group) => ({ metadata: { name: group.name } })) ?? []];
    return names.some((item) => item.metadata?.name === "broken.example") || undefined;
  });

  for (const selector of [{ group: "", version: "v1", plural: "pods" }, "pods"] as const) {
    const registry = new kopf.Registry();
    kopf.on.event(selector, { registry }, function podFn() {});
    const lines: string[] = [];
    await kopf.configureLogging({ format: "plain", level: "debug", write: (line) => lines.push(line) });
    const controller = new AbortController();
    let running: kopf.RunningOperator | undefined;
    const done = kopf.operator({
      registry,
      credentials,
      namespaces: [namespace],
      standalone: true,
      signal: controller.signal,
      ready: (operator) => running = operator,
    });
    try {
      await eventually("the operator to be ready", () => running);
      assert.deepEqual([...running!.streams.keys()], [`pods.v1 in ${namespace}`], String(selector));
      const broken = lines.filter((line) => line.includes("broken.example/v1"));
      if (typeof selector === "string") {
        assert.ok(broken.length > 0, `the group-less selector warns about the broken API:\n${lines.join("\n")}`);
      } else {
        assert.deepEqual(broken, [], "the core-group selector never reads the broken API");
        assert.equal(running!.client.counters.count({ verb: "get", resource: "/apis" }), 0, "no /apis request");
      }
    } finally {
      controller.abort();
      await done;
      await reset();
    }
  }
});
