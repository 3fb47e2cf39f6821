/**
 * Migration between Python Kopf and our operator, both ways, with the real Kopf (pinned, see
 * support/python_kopf.ts): objects that one has handled are taken over by the other without
 * re-running their creation handlers, and a creation left waiting for a retry is continued.
 *
 * Without Python or without access to the package index, these tests are reported as ignored.
 */

import assert from "node:assert/strict";
import * as kopf from "@kopf/kopf";
import type { KubernetesObject } from "../src/model/body.ts";
import { createExample, freshNamespace, getExample, testCluster } from "./support/cluster.ts";
import { eventually } from "./support/eventually.ts";
import { runOperator } from "./support/operator.ts";
import { ensurePythonKopf, type PythonKopf } from "./support/python_kopf.ts";

const installation = await ensurePythonKopf();
const skipped = "skipped" in installation ? installation.skipped : undefined;
if (skipped !== undefined) console.warn(`${skipped} The migration tests are ignored.`);

const CREATE_HANDLERS = new URL("./fixtures/python/create_handlers.py", import.meta.url);
const FAILING_HANDLERS = new URL("./fixtures/python/failing_handlers.py", import.meta.url);
const DIFFBASE = "kopf.zalando.org/last-handled-configuration";
const PROGRESS = "kopf.zalando.org/create_fn";

function pythonKopf(): PythonKopf {
  if ("skipped" in installation) throw new Error(installation.skipped);
  return installation;
}

function statusOf(body: KubernetesObject): Record<string, unknown> {
  return (body.status as Record<string, unknown> | undefined) ?? {};
}

/** Waits until `status.create_fn.message` of an object is `message`, and returns the object. */
function waitForMessage(namespace: string, name: string, message: string): Promise<KubernetesObject> {
  return eventually(`status.create_fn.message of ${name} to be "${message}"`, async () => {
    const { client } = await testCluster();
    const body = await getExample(client, namespace, name);
    const result = statusOf(body).create_fn as { message?: string } | undefined;
    return result?.message === message && body.metadata.annotations?.[DIFFBASE] ? body : undefined;
  });
}

/** What the other operator must leave untouched on an object it takes over. */
function stateOf(body: KubernetesObject) {
  return {
    resourceVersion: body.metadata.resourceVersion,
    annotations: body.metadata.annotations,
    finalizers: body.metadata.finalizers,
    status: body.status,
  };
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

Deno.test({
  name: "objects handled by Python Kopf are taken over without re-running creation handlers",
  ignore: skipped !== undefined,
  fn: async () => {
    const { client, kubeconfig } = await testCluster();
    const namespace = await freshNamespace(client, "from-python");
    {
      await using python = await pythonKopf().start({ file: CREATE_HANDLERS, kubeconfig, namespace });
      await createExample(client, namespace, "by-python", { field: "value" });
      await waitForMessage(namespace, "by-python", "hello from python");
      await python.waitForLine(`[${namespace}/by-python] Handling cycle is finished`);
      assert.equal(await python.stop(), 0, python.output);
      assert.equal(python.linesMatching(`[${namespace}/by-python] Handler 'create_fn' succeeded.`).length, 1);
    }
    const before = await getExample(client, namespace, "by-python");

    const registry = new kopf.Registry();
    const calls: string[] = [];
    kopf.on.create("kopfexamples", { registry, id: "create_fn" }, ({ name }) => {
      calls.push(name!);
      return { message: "hello from deno" };
    });
    const operator = await runOperator(registry, namespace);
    try {
      await createExample(client, namespace, "by-deno", { field: "value" });
      await waitForMessage(namespace, "by-deno", "hello from deno");
      await sleep(1000); // time for a late (wrong) write to the listed object to show up
      assert.deepEqual(calls, ["by-deno"], "the object that Python Kopf created is not created again");
      const after = await getExample(client, namespace, "by-python");
      assert.deepEqual(stateOf(after), stateOf(before), "nothing is written to the object Python Kopf handled");
    } finally {
      await operator.stop();
    }
  },
});

Deno.test({
  name: "objects handled by our operator are taken over by Python Kopf without re-running",
  ignore: skipped !== undefined,
  fn: async () => {
    const { client, kubeconfig } = await testCluster();
    const namespace = await freshNamespace(client, "to-python");
    const registry = new kopf.Registry();
    const calls: string[] = [];
    kopf.on.create("kopfexamples", { registry, id: "create_fn" }, ({ name }) => {
      calls.push(name!);
      return { message: "hello from deno" };
    });
    const operator = await runOperator(registry, namespace);
    try {
      await createExample(client, namespace, "by-deno", { field: "value" });
      await waitForMessage(namespace, "by-deno", "hello from deno");
    } finally {
      await operator.stop();
    }
    assert.deepEqual(calls, ["by-deno"]);
    const before = await getExample(client, namespace, "by-deno");

    await using python = await pythonKopf().start({ file: CREATE_HANDLERS, kubeconfig, namespace });
    // Listed at startup: with our diff-base equal to its own essence, Kopf sees a resume without changes.
    await python.waitForLine(`[${namespace}/by-deno] Handling cycle is finished`);
    await createExample(client, namespace, "by-python", { field: "value" });
    await waitForMessage(namespace, "by-python", "hello from python");
    await python.waitForLine(`[${namespace}/by-python] Handling cycle is finished`);
    await sleep(1000);
    assert.equal(await python.stop(), 0, python.output);

    const ours = python.linesMatching(`[${namespace}/by-deno]`);
    assert.ok(ours.some((line) => line.includes("Resuming is in progress")), ours.join("\n"));
    const rework = ours.filter((line) => /Creation is|Updating is|Handler '|[Pp]atching/.test(line));
    assert.deepEqual(rework, [], "Python Kopf neither re-creates, nor updates, nor patches our object");
    assert.equal(python.linesMatching(`[${namespace}/by-python] Handler 'create_fn' succeeded.`).length, 1);
    const after = await getExample(client, namespace, "by-deno");
    assert.deepEqual(stateOf(after), stateOf(before), "nothing is written to the object we handled");
  },
});

Deno.test({
  name: "a creation that Python Kopf left for a retry is continued by our operator with retry 1 and the stored start",
  ignore: skipped !== undefined,
  fn: async () => {
    const { client, kubeconfig } = await testCluster();
    const namespace = await freshNamespace(client, "retry-python");
    {
      await using python = await pythonKopf().start({ file: FAILING_HANDLERS, kubeconfig, namespace });
      await createExample(client, namespace, "flaky", { field: "value" });
      await eventually("the progress record of create_fn", async () => {
        const body = await getExample(client, namespace, "flaky");
        return body.metadata.annotations?.[PROGRESS];
      });
      // Stopped at once: the retry is 3 s away, and the fixture makes Kopf exit within 0.5 s.
      assert.equal(await python.stop(), 0, python.output);
      assert.equal(
        python.linesMatching(`[${namespace}/flaky] Handler 'create_fn' failed temporarily: later`).length,
        1,
      );
    }
    const stored = await getExample(client, namespace, "flaky");
    const progress = JSON.parse(stored.metadata.annotations![PROGRESS]!);
    assert.deepEqual(
      { ...progress, started: typeof progress.started, delayed: typeof progress.delayed },
      {
        started: "string",
        delayed: "string",
        purpose: "create",
        retries: 1,
        success: false,
        failure: false,
        message: "later",
      },
      "the record Python Kopf leaves after one temporary failure",
    );
    assert.equal(stored.metadata.annotations![DIFFBASE], undefined);
    assert.equal(statusOf(stored).create_fn, undefined);

    const registry = new kopf.Registry();
    const calls: { retry: number; started: Date; at: number }[] = [];
    kopf.on.create("kopfexamples", { registry, id: "create_fn" }, ({ retry, started }) => {
      calls.push({ retry, started, at: Date.now() });
      return { message: "hello from deno" };
    });
    const operator = await runOperator(registry, namespace);
    try {
      const body = await waitForMessage(namespace, "flaky", "hello from deno");
      assert.equal(calls.length, 1);
      assert.equal(calls[0].retry, 1, "the retry counts Python Kopf's attempt");
      assert.equal(calls[0].started.getTime(), Date.parse(progress.started), "the first attempt's start is kept");
      assert.ok(calls[0].at >= Date.parse(progress.delayed), "not retried before the stored delay is over");
      assert.equal(body.metadata.annotations?.[PROGRESS], undefined, "the progress record is purged when done");
    } finally {
      await operator.stop();
    }
  },
});
