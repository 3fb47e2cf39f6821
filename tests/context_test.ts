/**
 * What handlers receive and how they cooperate (kopf-features areas 4.2, 4.5, 6, 7.3, 8.6, 8.10, 12.5).
 */

import assert from "node:assert/strict";
import { reset } from "@logtape/logtape";
import * as kopf from "@kopf/kopf";
import type { KubernetesObject } from "../src/model/body.ts";
import {
  createExample,
  freshNamespace,
  getExample,
  patchExample,
  settle,
  testCluster,
  waitFor,
} from "./support/cluster.ts";
import { runOperator } from "./support/operator.ts";

type Status = Record<string, unknown>;

async function statusKey(namespace: string, name: string, key: string): Promise<unknown> {
  const { client } = await testCluster();
  return await waitFor(`status.${key} of ${name}`, async () => {
    const body = await getExample(client, namespace, name);
    return (body.status as Status | undefined)?.[key];
  }, 90);
}

Deno.test("a change handler gets exactly the documented context, and no settings (6.3, 6.5, 6.10)", async () => {
  const { client } = await testCluster();
  const namespace = await freshNamespace(client, "context");
  const registry = new kopf.Registry();
  kopf.on.create("kopfexamples", { registry }, function keysFn(context) {
    return { keys: Object.keys(context).sort(), namespace: context.namespace, labels: context.labels };
  });
  const operator = await runOperator(registry, namespace);
  try {
    await createExample(client, namespace, "k");
    const result = await statusKey(namespace, "k", "keysFn") as { keys: string[]; namespace: string; labels: unknown };
    assert.deepEqual(result.keys, [
      "annotations",
      "body",
      "diff",
      "execute",
      "labels",
      "logger",
      "memo",
      "meta",
      "name",
      "namespace",
      "new",
      "old",
      "param",
      "patch",
      "reason",
      "resource",
      "retry",
      "runtime",
      "spec",
      "started",
      "status",
      "subhandler",
      "uid",
    ]);
    assert.equal(result.namespace, namespace);
    assert.deepEqual(result.labels, {});
  } finally {
    await operator.stop();
  }
});

Deno.test("param tells registrations of one function apart (4.2)", async () => {
  const { client } = await testCluster();
  const namespace = await freshNamespace(client, "param");
  const registry = new kopf.Registry();
  function fn({ param }: kopf.ChangeContext) {
    return param;
  }
  kopf.on.create("kopfexamples", { registry, param: "c" }, fn);
  kopf.on.resume("kopfexamples", { registry, param: "r" }, fn);
  const operator = await runOperator(registry, namespace);
  try {
    await createExample(client, namespace, "p");
    assert.equal(await statusKey(namespace, "p", "fn"), "c");
  } finally {
    await operator.stop();
  }
});

Deno.test("an on.event handler's error is logged and ignored; the next change invokes it again (4.5)", async () => {
  const { client } = await testCluster();
  const namespace = await freshNamespace(client, "event-error");
  const lines: string[] = [];
  await kopf.configureLogging({ format: "plain", write: (line) => lines.push(line) });
  const registry = new kopf.Registry();
  let calls = 0;
  kopf.on.event("kopfexamples", { registry }, function failingFn() {
    calls++;
    throw new Error("boom");
  });
  const operator = await runOperator(registry, namespace);
  try {
    await createExample(client, namespace, "e");
    await waitFor("the first call", () => calls >= 1 || undefined);
    await patchExample(client, namespace, "e", { spec: { x: 1 } });
    await waitFor("the second call", () => calls >= 2 || undefined);
    assert.ok(lines.some((line) => line.includes("Handler 'failingFn' failed with an exception. Will ignore.")));
  } finally {
    await operator.stop();
    await reset();
  }
});

Deno.test("handlers read each other's results from status and wait with retries (7.3)", async () => {
  const { client } = await testCluster();
  const namespace = await freshNamespace(client, "cooperate");
  const registry = new kopf.Registry();
  kopf.on.create("kopfexamples", { registry }, function aFn({ status }) {
    const b = status.bFn as { name?: string } | undefined;
    if (!b) throw new kopf.TemporaryError("waiting for bFn", { delay: 1 });
    return { from: b.name };
  });
  kopf.on.create("kopfexamples", { registry }, function bFn() {
    return { name: "x" };
  });
  const operator = await runOperator(registry, namespace);
  try {
    await createExample(client, namespace, "c");
    assert.deepEqual(await statusKey(namespace, "c", "aFn"), { from: "x" });
  } finally {
    await operator.stop();
  }
});

Deno.test("a handler past its timeout is given up; the cause finishes without it (8.6, 8.9)", async () => {
  const { client } = await testCluster();
  const namespace = await freshNamespace(client, "timeout");
  const lines: string[] = [];
  await kopf.configureLogging({ format: "plain", write: (line) => lines.push(line) });
  const registry = new kopf.Registry();
  const retries: number[] = [];
  kopf.on.create("kopfexamples", { registry, timeout: 2 }, function slowFn({ retry }) {
    retries.push(retry);
    throw new kopf.TemporaryError("still not", { delay: 1 });
  });
  const operator = await runOperator(registry, namespace);
  try {
    await createExample(client, namespace, "t");
    await waitFor("the cause to finish", async () => {
      const body = await getExample(client, namespace, "t");
      return body.metadata.annotations?.["kopf.zalando.org/last-handled-configuration"];
    });
    assert.ok(retries.length >= 1 && retries.length <= 3, `attempts: ${retries}`);
    assert.ok(lines.some((line) => line.includes("Handler 'slowFn' has timed out after")), lines.join("\n"));
    assert.ok(lines.some((line) => line.includes("Creation is processed: 0 succeeded; 1 failed.")));
  } finally {
    await operator.stop();
    await reset();
  }
});

Deno.test("the recipe to exclude a handler forever: an annotation set before a permanent failure (8.10)", async () => {
  const { client } = await testCluster();
  const namespace = await freshNamespace(client, "never");
  const registry = new kopf.Registry();
  let calls = 0;
  kopf.on.update(
    "kopfexamples",
    { registry, annotations: { "update-fn-never-again": kopf.ABSENT } },
    function updateFn({ patch }) {
      calls++;
      patch.metadata.annotations["update-fn-never-again"] = "yes";
      throw new kopf.PermanentError("never again");
    },
  );
  await createExample(client, namespace, "n", { x: 0 });
  const operator = await runOperator(registry, namespace);
  try {
    await waitFor("the diff-base", async () => {
      const body = await getExample(client, namespace, "n");
      return body.metadata.annotations?.["kopf.zalando.org/last-handled-configuration"];
    });
    await patchExample(client, namespace, "n", { spec: { x: 1 } });
    const body: KubernetesObject = await waitFor("the annotation", async () => {
      const body = await getExample(client, namespace, "n");
      return body.metadata.annotations?.["update-fn-never-again"] === "yes" ? body : undefined;
    });
    assert.ok(body);
    await patchExample(client, namespace, "n", { spec: { x: 2 } });
    await settle();
    assert.equal(calls, 1);
  } finally {
    await operator.stop();
  }
});

Deno.test("updates log their diff (debug) and their summary (12.5)", async () => {
  const { client } = await testCluster();
  const namespace = await freshNamespace(client, "update-log");
  const lines: string[] = [];
  await kopf.configureLogging({ format: "plain", level: "debug", write: (line) => lines.push(line) });
  const registry = new kopf.Registry();
  kopf.on.update("kopfexamples", { registry }, function updateFn() {});
  await createExample(client, namespace, "u", { x: 1 });
  const operator = await runOperator(registry, namespace);
  try {
    await waitFor("the diff-base", async () => {
      const body = await getExample(client, namespace, "u");
      return body.metadata.annotations?.["kopf.zalando.org/last-handled-configuration"];
    });
    await patchExample(client, namespace, "u", { spec: { x: 2 } });
    await waitFor(
      "the summary",
      () => lines.some((line) => line.includes("Updating is processed: 1 succeeded; 0 failed.")) || undefined,
    );
    assert.ok(lines.some((line) => line.includes('Updating diff: [["change",["spec","x"],1,2]]')), lines.join("\n"));
  } finally {
    await operator.stop();
    await reset();
  }
});

Deno.test("a cluster-scoped object has no namespace in the context (6.3)", async () => {
  const { client } = await testCluster();
  const crd = {
    apiVersion: "apiextensions.k8s.io/v1",
    kind: "CustomResourceDefinition",
    metadata: { name: "clusterexamples.kopf.dev" },
    spec: {
      group: "kopf.dev",
      scope: "Cluster",
      names: { kind: "ClusterExample", plural: "clusterexamples", singular: "clusterexample" },
      versions: [{
        name: "v1",
        served: true,
        storage: true,
        subresources: { status: {} },
        schema: { openAPIV3Schema: { type: "object", "x-kubernetes-preserve-unknown-fields": true } },
      }],
    },
  };
  await client.request({ method: "POST", path: "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", body: crd })
    .catch((error) => {
      if (!String(error).includes("409")) throw error;
    });
  await waitFor("the CRD to be served", async () => {
    await client.request({ path: "/apis/kopf.dev/v1/clusterexamples" });
    return true;
  });
  const namespace = await freshNamespace(client, "cluster-scoped");
  const name = `c-${namespace}`;
  const registry = new kopf.Registry();
  kopf.on.create(
    "clusterexamples.kopf.dev",
    { registry, labels: { test: namespace } },
    function fn({ namespace, labels }) {
      return { ns: String(namespace), labels };
    },
  );
  const operator = await runOperator(registry, namespace);
  try {
    await client.request({
      method: "POST",
      path: "/apis/kopf.dev/v1/clusterexamples",
      body: { apiVersion: "kopf.dev/v1", kind: "ClusterExample", metadata: { name, labels: { test: namespace } } },
    });
    const status = await waitFor("status.fn", async () => {
      const body = await client.request<KubernetesObject>({ path: `/apis/kopf.dev/v1/clusterexamples/${name}` });
      return (body.status as Status | undefined)?.fn;
    });
    assert.deepEqual(status, { ns: "undefined", labels: { test: namespace } });
  } finally {
    await operator.stop();
  }
});
