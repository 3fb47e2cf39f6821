/**
 * What handlers receive and how they cooperate: their context, param, each other's results,
 * timeouts, retries and backoff, how failures are logged, and what a failure leaves behind.
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
  testCluster,
  waitForStatus,
} from "./support/cluster.ts";
import { eventually } from "./support/eventually.ts";
import { runOperator } from "./support/operator.ts";
import { EventProbe } from "./support/probe.ts";

type Status = Record<string, unknown>;

Deno.test("a change handler gets exactly the documented context, and no settings", async () => {
  const { client } = await testCluster();
  const namespace = await freshNamespace(client, "context");
  const registry = new kopf.Registry();
  kopf.on.create("kopfexamples", { registry }, function keysFn(context) {
    return { keys: Object.keys(context).sort(), namespace: context.namespace, labels: context.labels };
  });
  const operator = await runOperator(registry, namespace);
  try {
    await createExample(client, namespace, "k");
    const result = await waitForStatus(namespace, "k", "keysFn", undefined, 90) as {
      keys: string[];
      namespace: string;
      labels: unknown;
    };
    assert.deepEqual(result.keys, [
      "annotations",
      "api",
      "body",
      "diff",
      "execute",
      "indices",
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
      "signal",
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

Deno.test("param tells registrations of one function apart", async () => {
  const { client } = await testCluster();
  const namespace = await freshNamespace(client, "param");
  const registry = new kopf.Registry();
  function fn({ param }: kopf.ChangeContext) {
    return param as string;
  }
  kopf.on.create("kopfexamples", { registry, param: "c" }, fn);
  kopf.on.resume("kopfexamples", { registry, param: "r" }, fn);
  const operator = await runOperator(registry, namespace);
  try {
    await createExample(client, namespace, "p");
    assert.equal(await waitForStatus(namespace, "p", "fn", undefined, 90), "c");
  } finally {
    await operator.stop();
  }
});

Deno.test("an on.event handler's error is logged and ignored; the next change invokes it again", async () => {
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
    await eventually("the first call", () => calls >= 1 || undefined);
    await patchExample(client, namespace, "e", { spec: { x: 1 } });
    await eventually("the second call", () => calls >= 2 || undefined);
    assert.ok(lines.some((line) => line.includes("Handler 'failingFn' failed with an exception. Will ignore.")));
  } finally {
    await operator.stop();
    await reset();
  }
});

Deno.test("handlers read each other's results from status and wait with retries", async () => {
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
    assert.deepEqual(await waitForStatus(namespace, "c", "aFn", undefined, 90), { from: "x" });
  } finally {
    await operator.stop();
  }
});

Deno.test("a handler past its timeout is given up; the cause finishes without it", async () => {
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
    await eventually("the cause to finish", async () => {
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

Deno.test("the recipe to exclude a handler forever: an annotation set before a permanent failure", async () => {
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
  const probe = new EventProbe(registry);
  const operator = await runOperator(registry, namespace);
  try {
    await eventually("the diff-base", async () => {
      const body = await getExample(client, namespace, "n");
      return body.metadata.annotations?.["kopf.zalando.org/last-handled-configuration"];
    });
    await patchExample(client, namespace, "n", { spec: { x: 1 } });
    const body: KubernetesObject = await eventually("the annotation", async () => {
      const body = await getExample(client, namespace, "n");
      return body.metadata.annotations?.["update-fn-never-again"] === "yes" ? body : undefined;
    });
    assert.ok(body);
    await patchExample(client, namespace, "n", { spec: { x: 2 } });
    await probe.caughtUp(namespace, "n");
    assert.equal(calls, 1);
  } finally {
    await operator.stop();
  }
});

Deno.test("updates log their diff (debug) and their summary", async () => {
  const { client } = await testCluster();
  const namespace = await freshNamespace(client, "update-log");
  const lines: string[] = [];
  await kopf.configureLogging({ format: "plain", level: "debug", write: (line) => lines.push(line) });
  const registry = new kopf.Registry();
  kopf.on.update("kopfexamples", { registry }, function updateFn() {});
  await createExample(client, namespace, "u", { x: 1 });
  const operator = await runOperator(registry, namespace);
  try {
    await eventually("the diff-base", async () => {
      const body = await getExample(client, namespace, "u");
      return body.metadata.annotations?.["kopf.zalando.org/last-handled-configuration"];
    });
    await patchExample(client, namespace, "u", { spec: { x: 2 } });
    await eventually(
      "the summary",
      () => lines.some((line) => line.includes("Updating is processed: 1 succeeded; 0 failed.")) || undefined,
    );
    assert.ok(lines.some((line) => line.includes('Updating diff: [["change",["spec","x"],1,2]]')), lines.join("\n"));
  } finally {
    await operator.stop();
    await reset();
  }
});

Deno.test("a cluster-scoped object has no namespace in the context", async () => {
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
  await eventually("the CRD to be served", async () => {
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
    const status = await eventually("status.fn", async () => {
      const body = await client.request<KubernetesObject>({ path: `/apis/kopf.dev/v1/clusterexamples/${name}` });
      return (body.status as Status | undefined)?.fn;
    });
    assert.deepEqual(status, { ns: "undefined", labels: { test: namespace } });
  } finally {
    await operator.stop();
  }
});

Deno.test("retry counts the earlier attempts; started is the first attempt's, as its progress record says", async () => {
  const { client } = await testCluster();
  const namespace = await freshNamespace(client, "retry-started");
  const registry = new kopf.Registry();
  const seen: { retry: number; started: string; runtime: number }[] = [];
  kopf.on.create("kopfexamples", { registry }, function createFn({ retry, started, runtime, annotations }) {
    seen.push({ retry, started: started.toISOString(), runtime });
    if (retry < 2) throw new kopf.TemporaryError("again", { delay: 1 });
    const record = JSON.parse(annotations["kopf.zalando.org/createFn"]);
    return { retry, started: started.toISOString(), recorded: record.started };
  });
  const operator = await runOperator(registry, namespace);
  try {
    await createExample(client, namespace, "r");
    const result = await waitForStatus(namespace, "r", "createFn", undefined, 90) as {
      retry: number;
      started: string;
      recorded: string;
    };
    assert.equal(result.retry, 2);
    // The record keeps Kopf's microseconds; a Date has milliseconds.
    assert.equal(result.started.slice(0, 23), result.recorded.slice(0, 23), JSON.stringify(result));
    assert.deepEqual(seen.map((attempt) => attempt.retry), [0, 1, 2]);
    assert.deepEqual(new Set(seen.map((attempt) => attempt.started)).size, 1, "the same start in every attempt");
    assert.ok(seen.every((attempt) => attempt.runtime >= 0), JSON.stringify(seen));
    assert.ok(seen[2].runtime > seen[0].runtime, "runtime is counted from the first attempt");
  } finally {
    await operator.stop();
  }
});

Deno.test("how each kind of failure is logged and counted: permanently, Will stop, Will ignore, Will retry", async () => {
  const { client } = await testCluster();
  const namespace = await freshNamespace(client, "failures");
  const lines: string[] = [];
  await kopf.configureLogging({ format: "plain", write: (line) => lines.push(line) });
  const registry = new kopf.Registry();
  const calls: Record<string, number[]> = { permanent: [], stop: [], ignore: [], retry: [] };
  kopf.on.create("kopfexamples", { registry }, function permanentFn({ retry }) {
    calls.permanent.push(retry);
    throw new kopf.PermanentError("no way");
  });
  kopf.on.create("kopfexamples", { registry, errors: "permanent" }, function stopFn({ retry }) {
    calls.stop.push(retry);
    throw new Error("stop here");
  });
  kopf.on.create("kopfexamples", { registry, errors: "ignored" }, function ignoreFn({ retry }) {
    calls.ignore.push(retry);
    throw new Error("never mind");
  });
  kopf.on.create("kopfexamples", { registry, backoff: 1 }, function retryFn({ retry }) {
    calls.retry.push(retry);
    if (retry === 0) throw new Error("once");
    return "retried";
  });
  const probe = new EventProbe(registry);
  const operator = await runOperator(registry, namespace);
  try {
    await createExample(client, namespace, "f");
    await eventually("the cause to finish", async () => {
      const body = await getExample(client, namespace, "f");
      return body.metadata.annotations?.["kopf.zalando.org/last-handled-configuration"] ? body : undefined;
    });
    await probe.caughtUp(namespace, "f");
    // Read again: with a status subresource, the status lands in a second request after the annotations.
    const body = await getExample(client, namespace, "f");
    const text = lines.join("\n");
    assert.deepEqual(calls, { permanent: [0], stop: [0], ignore: [0], retry: [0, 1] });
    assert.ok(lines.some((line) => line.includes("Handler 'permanentFn' failed permanently: no way")), text);
    assert.ok(lines.some((line) => line.includes("Handler 'stopFn' failed with an exception. Will stop.")), text);
    assert.ok(lines.some((line) => line.includes("Handler 'ignoreFn' failed with an exception. Will ignore.")), text);
    assert.ok(
      lines.some((line) => line.includes("Handler 'retryFn' failed with an exception. Will retry in 1 s.")),
      text,
    );
    assert.ok(lines.some((line) => line.includes("Creation is processed: 2 succeeded; 2 failed.")), text);
    // Kopf's own errors are logged by their message alone; other exceptions with their stack.
    const permanent = lines.find((line) => line.includes("failed permanently"))!;
    assert.doesNotMatch(permanent, /\n\s+at /, "no stack for a PermanentError");
    const stopped = lines.find((line) => line.includes("Will stop."))!;
    assert.match(stopped, /Error: stop here\n\s+at /, "a stack for other exceptions");
    const status = (body.status ?? {}) as Status;
    assert.equal(status.ignoreFn, undefined, "an ignored failure has no result");
    assert.equal(status.retryFn, "retried");
  } finally {
    await operator.stop();
    await reset();
  }
});

Deno.test("backoff is the delay after an arbitrary exception; 60 s by default", async () => {
  const { client } = await testCluster();
  const namespace = await freshNamespace(client, "backoff");
  const registry = new kopf.Registry();
  kopf.on.create("kopfexamples", { registry, backoff: 30 }, function backoffFn() {
    throw new Error("always");
  });
  kopf.on.create("kopfexamples", { registry }, function defaultFn() {
    throw new Error("always");
  });
  const operator = await runOperator(registry, namespace);
  try {
    await createExample(client, namespace, "b");
    const records = await eventually("both records", async () => {
      const annotations = (await getExample(client, namespace, "b")).metadata.annotations ?? {};
      const texts = [annotations["kopf.zalando.org/backoffFn"], annotations["kopf.zalando.org/defaultFn"]];
      return texts.every(Boolean) ? texts.map((text) => JSON.parse(text!)) : undefined;
    });
    // The stored delay, relative to the first (and only) attempt: what the record says, not a timing.
    const delays = records.map((record) =>
      (Date.parse(record.delayed.slice(0, 23) + "Z") - Date.parse(record.started.slice(0, 23) + "Z")) / 1000
    );
    assert.ok(delays[0] >= 30 && delays[0] < 60, `backoff: 30 → delayed by ${delays[0]} s`);
    assert.ok(delays[1] >= 60 && delays[1] < 90, `the default → delayed by ${delays[1]} s`);
    assert.deepEqual(records.map((record) => [record.retries, record.message]), [[1, "always"], [1, "always"]]);
  } finally {
    await operator.stop();
  }
});

/**
 * Kopf 1.40+ (which we follow) gives up right after the attempt whose next retry the limit would
 * forbid; 1.37 gave up before that next attempt. Either way N attempts are made, then the log line.
 */
Deno.test("retries=N: N attempts, then 'has exceeded N retries.'", async () => {
  const { client } = await testCluster();
  const namespace = await freshNamespace(client, "retries");
  const lines: string[] = [];
  await kopf.configureLogging({ format: "plain", write: (line) => lines.push(line) });
  const registry = new kopf.Registry();
  const calls: Record<string, number[]> = { three: [], once: [] };
  kopf.on.create("kopfexamples", { registry, retries: 3, backoff: 0.5 }, function threeFn({ retry }) {
    calls.three.push(retry);
    throw new Error("always");
  });
  kopf.on.create("kopfexamples", { registry, retries: 1 }, function createFn({ retry }) {
    calls.once.push(retry);
    throw new Error("always");
  });
  const probe = new EventProbe(registry);
  const operator = await runOperator(registry, namespace);
  try {
    await createExample(client, namespace, "n");
    await eventually("the cause to finish", async () => {
      const body = await getExample(client, namespace, "n");
      return body.metadata.annotations?.["kopf.zalando.org/last-handled-configuration"];
    });
    await probe.caughtUp(namespace, "n");
    const text = lines.join("\n");
    assert.deepEqual(calls, { three: [0, 1, 2], once: [0] });
    assert.ok(lines.some((line) => line.includes("Handler 'threeFn' has exceeded 3 retries.")), text);
    assert.ok(lines.some((line) => line.includes("Handler 'createFn' has exceeded 1 retries.")), text);
    assert.ok(lines.some((line) => line.includes("Creation is processed: 0 succeeded; 2 failed.")), text);
  } finally {
    await operator.stop();
    await reset();
  }
});

Deno.test("a permanent failure leaves no progress behind, only the diff-base", async () => {
  const { client } = await testCluster();
  const namespace = await freshNamespace(client, "failure-trace");
  const registry = new kopf.Registry();
  let calls = 0;
  kopf.on.create("kopfexamples", { registry }, function createFn() {
    calls++;
    throw new kopf.PermanentError("no way");
  });
  const probe = new EventProbe(registry);
  const operator = await runOperator(registry, namespace);
  try {
    await createExample(client, namespace, "p");
    const body = await eventually("the cause to finish", async () => {
      const body = await getExample(client, namespace, "p");
      return body.metadata.annotations?.["kopf.zalando.org/last-handled-configuration"] ? body : undefined;
    });
    await probe.caughtUp(namespace, "p");
    const after = await getExample(client, namespace, "p");
    assert.equal(after.metadata.annotations?.["kopf.zalando.org/createFn"], undefined);
    assert.equal(((after.status ?? {}) as Status).kopf, undefined, "nothing in status.kopf.progress");
    assert.equal(((after.status ?? {}) as Status).createFn, undefined, "no result");
    assert.ok(body.metadata.annotations?.["kopf.zalando.org/last-handled-configuration"]);
    assert.equal(calls, 1, "not re-run until the next change");
  } finally {
    await operator.stop();
  }
});
