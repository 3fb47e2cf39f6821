/**
 * In-memory indexes against a real API server: contents kept current by
 * watch events across namespaces, keys dropped with their last value, errors excluding an object
 * for a while, the documented recipes, and handlers that never see a partial index.
 */

import assert from "node:assert/strict";
import { isDeepStrictEqual } from "node:util";
import * as kopf from "@kopf/kopf";
import { resourcePath } from "../src/api/paths.ts";
import type { ApiClient } from "../src/api/client.ts";
import {
  CONFIGMAPS,
  createExample,
  freshNamespace,
  getExample,
  patchExample,
  testCluster,
  waitForStatus,
} from "./support/cluster.ts";
import { eventually } from "./support/eventually.ts";
import { runOperator } from "./support/operator.ts";

type Status = Record<string, unknown>;

function createConfigMap(client: ApiClient, namespace: string, name: string, data: Record<string, string> = {}) {
  return client.request({
    method: "POST",
    path: resourcePath(CONFIGMAPS, { namespace }),
    body: { apiVersion: "v1", kind: "ConfigMap", metadata: { name }, data },
  });
}

function patchConfigMap(client: ApiClient, namespace: string, name: string, data: Record<string, string>) {
  return client.request({
    method: "PATCH",
    path: resourcePath(CONFIGMAPS, { namespace, name }),
    body: { data },
    contentType: "application/merge-patch+json",
  });
}

function deleteConfigMap(client: ApiClient, namespace: string, name: string) {
  return client.request({ method: "DELETE", path: resourcePath(CONFIGMAPS, { namespace, name }) });
}

Deno.test("an index follows its objects: values by key, across namespaces, keys dropped with their last value", async () => {
  const { client } = await testCluster();
  const [a, b] = [await freshNamespace(client, "idx"), await freshNamespace(client, "idx")];
  const registry = new kopf.Registry();
  kopf.index("configmaps", { registry, labels: { indexed: kopf.PRESENT } }, function byNamespace({ namespace, name }) {
    return { [namespace!]: name };
  });
  kopf.timer("kopfexamples", { registry, interval: 0.3 }, function look({ indices, namespace }) {
    const index = indices.byNamespace;
    return {
      keys: [...index.keys()].map(String).sort(),
      here: [...(index.get(namespace!) ?? [])].map(String).sort(),
    };
  });
  const operator = await runOperator(registry, a, { namespaces: [a, b] });
  try {
    const labelled = (namespace: string, name: string) =>
      client.request({
        method: "POST",
        path: resourcePath(CONFIGMAPS, { namespace }),
        body: { apiVersion: "v1", kind: "ConfigMap", metadata: { name, labels: { indexed: "yes" } } },
      });
    await labelled(a, "one");
    await labelled(a, "two");
    await labelled(b, "three");
    await createConfigMap(client, a, "unlabelled");
    await createExample(client, a, "viewer");
    const same = (expected: unknown) => (value: unknown) => isDeepStrictEqual(value, expected);
    await waitForStatus(a, "viewer", "look", same({ keys: [a, b].sort(), here: ["one", "two"] }));
    await deleteConfigMap(client, a, "one");
    await waitForStatus(a, "viewer", "look", same({ keys: [a, b].sort(), here: ["two"] }));
    await deleteConfigMap(client, b, "three");
    await waitForStatus(a, "viewer", "look", same({ keys: [a], here: ["two"] }));
    // An object that stops matching the filters leaves the index.
    await client.request({
      method: "PATCH",
      path: resourcePath(CONFIGMAPS, { namespace: a, name: "two" }),
      body: { metadata: { labels: { indexed: null } } },
      contentType: "application/merge-patch+json",
    });
    await waitForStatus(a, "viewer", "look", same({ keys: [], here: [] }));
  } finally {
    await operator.stop();
  }
});

Deno.test("an indexer failing with TemporaryError removes the object's values until its next event after the delay", async () => {
  const { client } = await testCluster();
  const namespace = await freshNamespace(client, "idx");
  const registry = new kopf.Registry();
  kopf.index("configmaps", { registry }, function healthy({ name, body }) {
    const data = (body as { data?: Record<string, string> }).data ?? {};
    if (data.broken === "yes") throw new kopf.TemporaryError("broken for a while", { delay: 2 });
    return { [name!]: data.value ?? "" };
  });
  kopf.timer("kopfexamples", { registry, interval: 0.3 }, function look({ indices }) {
    return { value: [...(indices.healthy.get("p") ?? [])] };
  });
  const operator = await runOperator(registry, namespace);
  try {
    await createConfigMap(client, namespace, "p", { value: "v1" });
    await createExample(client, namespace, "viewer");
    const shows = (expected: unknown[]) => (value: unknown) =>
      JSON.stringify((value as Status | undefined)?.value) === JSON.stringify(expected);
    await waitForStatus(namespace, "viewer", "look", shows(["v1"]));
    await patchConfigMap(client, namespace, "p", { broken: "yes", value: "v2" });
    await waitForStatus(namespace, "viewer", "look", shows([]));
    const excludedAt = Date.now();
    // Fixed during the exclusion: not re-indexed until an event after the delay.
    await patchConfigMap(client, namespace, "p", { broken: "no", value: "v3" });
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, excludedAt + 2500 - Date.now())));
    const look = await waitForStatus(namespace, "viewer", "look", () => true);
    assert.deepEqual((look as Status).value, [], "no values while excluded, even after a fixing event");
    await patchConfigMap(client, namespace, "p", { value: "v4" });
    await waitForStatus(namespace, "viewer", "look", shows(["v4"]));
  } finally {
    await operator.stop();
  }
});

Deno.test("recipes: a non-object result goes under the key null; tuples are values", async () => {
  const { client } = await testCluster();
  const namespace = await freshNamespace(client, "idx");
  const registry = new kopf.Registry();
  kopf.index("configmaps", { registry }, function pairs({ namespace, name }) {
    return [namespace, name];
  });
  kopf.timer("kopfexamples", { registry, interval: 0.3 }, function look({ indices }) {
    return { pairs: [...(indices.pairs.get(null) ?? [])].map((pair) => (pair as string[]).join("/")).sort() };
  });
  const operator = await runOperator(registry, namespace);
  try {
    await createConfigMap(client, namespace, "x");
    await createConfigMap(client, namespace, "y");
    await createExample(client, namespace, "viewer");
    await waitForStatus(namespace, "viewer", "look", (value) => {
      const pairs = (value as Status | undefined)?.pairs as string[] | undefined;
      return JSON.stringify(pairs?.filter((pair) => pair.endsWith("/x") || pair.endsWith("/y"))) ===
        JSON.stringify([`${namespace}/x`, `${namespace}/y`]);
    });
  } finally {
    await operator.stop();
  }
});

Deno.test("handlers wait until every indexed resource is listed and indexed: they never see a partial index", async () => {
  const { client } = await testCluster();
  const namespace = await freshNamespace(client, "idx");
  for (let i = 0; i < 30; i++) await createConfigMap(client, namespace, `cm-${i}`);
  await createExample(client, namespace, "early");
  const registry = new kopf.Registry();
  kopf.index("configmaps", { registry }, async function slowIndex({ name }) {
    // Slow indexing: without the wait, the creation handler would run with a partial index.
    await new Promise((resolve) => setTimeout(resolve, 20));
    return { [name!]: true };
  });
  const seen: number[] = [];
  kopf.on.create("kopfexamples", { registry }, function countFn({ indices }) {
    seen.push(indices.slowIndex.size);
    return { size: indices.slowIndex.size };
  });
  for (let round = 0; round < 2; round++) {
    const operator = await runOperator(registry, namespace);
    try {
      if (round === 1) await createExample(client, namespace, "late");
      const name = round === 0 ? "early" : "late";
      await waitForStatus(namespace, name, "countFn", (value) => value !== undefined);
    } finally {
      await operator.stop();
    }
  }
  // Also after a restart (round 2): the index is rebuilt from scratch before any handler runs.
  assert.ok(seen.length >= 2);
  assert.ok(seen.every((size) => size >= 30), `sizes seen by the handler: ${seen}`);
  await patchExample(client, namespace, "early", { spec: { done: true } });
});

Deno.test("indexes exist, empty, from the start: a startup handler sees them; probes see them filled", async () => {
  const { client } = await testCluster();
  const namespace = await freshNamespace(client, "idx");
  await createConfigMap(client, namespace, "c1");
  const registry = new kopf.Registry();
  kopf.index("configmaps", { registry }, function names({ name }) {
    return { [name!]: true };
  });
  const sizes: number[] = [];
  kopf.on.startup({ registry }, function look({ indices }) {
    sizes.push(indices.names.size);
  });
  kopf.on.probe({ registry }, function count({ indices }) {
    return indices.names.size;
  });
  const operator = await runOperator(registry, namespace, { liveness: "http://127.0.0.1:0/healthz" });
  try {
    assert.deepEqual(sizes, [0]);
    const response = await fetch(operator.running.liveness!);
    assert.deepEqual(await response.json(), { count: 1 });
  } finally {
    await operator.stop();
  }
});

Deno.test("an indexer's patch is never applied to its object", async () => {
  const { client } = await testCluster();
  const namespace = await freshNamespace(client, "idx");
  const registry = new kopf.Registry();
  let calls = 0;
  kopf.index("kopfexamples", { registry }, function patching({ patch, name }) {
    calls++;
    patch.spec.x = 1;
    patch.status.indexed = true;
    return { [name!]: true };
  });
  const operator = await runOperator(registry, namespace);
  try {
    await createExample(client, namespace, "patched");
    await eventually("the indexer's call", () => calls > 0 || undefined);
    await patchExample(client, namespace, "patched", { spec: { touched: 1 } });
    await eventually("the second call", () => calls > 1 || undefined);
    await new Promise((resolve) => setTimeout(resolve, 1000));
    const body = await getExample(client, namespace, "patched");
    assert.deepEqual(body.spec, { touched: 1 });
    assert.equal(body.status, undefined);
    assert.equal(operator.running.client.counters.count({ verb: "patch" }), 0);
  } finally {
    await operator.stop();
  }
});
