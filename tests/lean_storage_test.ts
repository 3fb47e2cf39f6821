/**
 * The lean storage preset (`settings.persistence.useLeanStorage()`): progress and diff-base in the
 * status, so that one status PATCH carries a cycle's state with its results (1 write per create
 * with one handler, as the raw client), while objects handled with Kopf's annotations (by Python
 * Kopf, or by our default storages) are taken over without re-running their handlers.
 */

import assert from "node:assert/strict";
import * as kopf from "@kopf/kopf";
import type { RequestCounters } from "../src/api/counters.ts";
import type { KubernetesObject } from "../src/model/body.ts";
import {
  createExample,
  deleteExample,
  exampleGone,
  freshNamespace,
  getExample,
  patchExample,
  testCluster,
} from "./support/cluster.ts";
import { eventually } from "./support/eventually.ts";
import { runOperator } from "./support/operator.ts";
import { EventProbe } from "./support/probe.ts";
import { ensurePythonKopf } from "./support/python_kopf.ts";

const installation = await ensurePythonKopf();
const skipped = "skipped" in installation ? installation.skipped : undefined;
if (skipped !== undefined) console.warn(`${skipped} The takeover test from Python Kopf is ignored.`);

const CREATE_HANDLERS = new URL("./fixtures/python/create_handlers.py", import.meta.url);
const DIFFBASE = "kopf.zalando.org/last-handled-configuration";

/** Writes so far: patches of any kind (merge, status, JSON) and created objects (Events). */
function writes(counters: RequestCounters): number {
  return counters.count({ verb: "patch" }) + counters.count({ verb: "create" }) + counters.count({ verb: "update" });
}

function leanSettings(): kopf.Settings {
  const settings = new kopf.Settings();
  settings.persistence.useLeanStorage();
  return settings;
}

function statusOf(body: KubernetesObject): Record<string, unknown> {
  return (body.status as Record<string, unknown> | undefined) ?? {};
}

/** The diff-base that the lean preset keeps: the essence as JSON in `status.kopf.last-handled-configuration`. */
function leanDiffBase(body: KubernetesObject): Record<string, unknown> | undefined {
  const text = (statusOf(body).kopf as Record<string, unknown> | undefined)?.["last-handled-configuration"];
  return typeof text === "string" ? JSON.parse(text) : undefined;
}

Deno.test("lean: a create with one handler returning a result costs 1 write, a status PATCH with the diff-base", async () => {
  const registry = new kopf.Registry();
  kopf.on.create("kopfexamples", { registry, id: "done" }, () => ({ ok: true }));
  const { client } = await testCluster();
  const namespace = await freshNamespace(client, "lean-create");
  const probe = new EventProbe(registry);
  const operator = await runOperator(registry, namespace, { settings: leanSettings() });
  const counters = operator.running.client.counters;
  try {
    const before = writes(counters);
    await createExample(client, namespace, "one", { field: "value" });
    const body = await eventually("the result and the diff-base in the status", async () => {
      const body = await getExample(client, namespace, "one");
      return statusOf(body).done !== undefined && leanDiffBase(body) ? body : undefined;
    });
    await probe.caughtUp(namespace, "one");
    assert.equal(writes(counters) - before, 1);
    assert.equal(counters.count({ verb: "patch", resource: "kopfexamples/status" }), 1);
    assert.equal(counters.count({ verb: "patch", resource: "kopfexamples" }), 0);
    assert.deepEqual(statusOf(body).done, { ok: true });
    assert.deepEqual(leanDiffBase(body), { spec: { field: "value" } });
    const annotations = Object.keys(body.metadata.annotations ?? {}).filter((key) =>
      key.startsWith("kopf.zalando.org/")
    );
    assert.deepEqual(annotations, [], "no annotations are written in the lean mode");
  } finally {
    await operator.stop();
  }
});

Deno.test("lean: create / update / delete handlers cost 2 / 1 / 1 writes, and updates diff against the status", async () => {
  const registry = new kopf.Registry();
  const olds: unknown[] = [];
  kopf.on.create("kopfexamples", { registry }, function createFn() {
    return { message: "hello" };
  });
  kopf.on.update("kopfexamples", { registry }, function updateFn({ old }) {
    olds.push((old as KubernetesObject | undefined)?.spec);
  });
  kopf.on.delete("kopfexamples", { registry }, function deleteFn() {});
  const { client } = await testCluster();
  const namespace = await freshNamespace(client, "lean-crud");
  const probe = new EventProbe(registry);
  const operator = await runOperator(registry, namespace, { settings: leanSettings() });
  const counters = operator.running.client.counters;
  try {
    let before = writes(counters);
    await createExample(client, namespace, "b", { x: 1 });
    await eventually("the creation to be handled", async () => {
      const body = await getExample(client, namespace, "b");
      return statusOf(body).createFn !== undefined && leanDiffBase(body) || undefined;
    });
    await probe.caughtUp(namespace, "b");
    const create = writes(counters) - before;

    for (const x of [2, 3]) {
      before = writes(counters);
      await patchExample(client, namespace, "b", { spec: { x } });
      await eventually(`the update to x=${x} to be handled`, async () => {
        const body = await getExample(client, namespace, "b");
        return (leanDiffBase(body)?.spec as Record<string, unknown> | undefined)?.x === x || undefined;
      });
      await probe.caughtUp(namespace, "b");
      assert.equal(writes(counters) - before, 1, `the update to x=${x}`);
    }
    assert.deepEqual(olds, [{ x: 1 }, { x: 2 }]);

    before = writes(counters);
    await deleteExample(client, namespace, "b");
    await exampleGone(client, namespace, "b");
    await probe.deleted(namespace, "b");
    assert.deepEqual({ create, delete: writes(counters) - before }, { create: 2, delete: 1 });
  } finally {
    await operator.stop();
  }
});

Deno.test("lean: objects handled with Kopf's annotations (default storages) are taken over, then diffed against the status", async () => {
  const { client } = await testCluster();
  const namespace = await freshNamespace(client, "lean-takeover");
  const calls: string[] = [];
  const registry = new kopf.Registry();
  kopf.on.create("kopfexamples", { registry, id: "create_fn" }, ({ name }) => {
    calls.push(`create ${name}`);
    return { message: "hello" };
  });
  kopf.on.update("kopfexamples", { registry, id: "update_fn" }, ({ name, old }) => {
    calls.push(`update ${name} from ${JSON.stringify((old as KubernetesObject).spec)}`);
  });
  // A probe remembers what the first operator saw too: the second one is asked once it has listed.
  const probe = new EventProbe(registry);

  const annotated = await runOperator(registry, namespace);
  try {
    await createExample(client, namespace, "old", { x: 1 });
    await eventually("the annotation diff-base", async () => {
      const body = await getExample(client, namespace, "old");
      return body.metadata.annotations?.[DIFFBASE] && statusOf(body).create_fn ? true : undefined;
    });
  } finally {
    await annotated.stop();
  }
  assert.deepEqual(calls, ["create old"]);
  const before = await getExample(client, namespace, "old");

  const lean = await runOperator(registry, namespace, { settings: leanSettings() });
  const counters = lean.running.client.counters;
  try {
    await probe.caughtUp(namespace, "old");
    assert.deepEqual(calls, ["create old"], "not created again");
    assert.equal(writes(counters), 0, "nothing written for an unchanged object");
    assert.equal(
      (await getExample(client, namespace, "old")).metadata.resourceVersion,
      before.metadata.resourceVersion,
    );

    await patchExample(client, namespace, "old", { spec: { x: 2 } });
    await eventually("the update against the annotation", () => calls.length >= 2 || undefined);
    await eventually(
      "the diff-base in the status",
      async () => leanDiffBase(await getExample(client, namespace, "old")),
    );
    await patchExample(client, namespace, "old", { spec: { x: 3 } });
    await eventually("the update against the status", () => calls.length >= 3 || undefined);
    await probe.caughtUp(namespace, "old");
    assert.deepEqual(calls, ["create old", 'update old from {"x":1}', 'update old from {"x":2}']);
  } finally {
    await lean.stop();
  }
});

Deno.test({
  name: "lean: objects handled by Python Kopf are taken over without re-running creation handlers or writing",
  ignore: skipped !== undefined,
  fn: async () => {
    if ("skipped" in installation) throw new Error(installation.skipped);
    const { client, kubeconfig } = await testCluster();
    const namespace = await freshNamespace(client, "lean-from-python");
    {
      await using python = await installation.start({ file: CREATE_HANDLERS, kubeconfig, namespace });
      await createExample(client, namespace, "by-python", { field: "value" });
      await eventually("Python Kopf's result and diff-base", async () => {
        const body = await getExample(client, namespace, "by-python");
        return body.metadata.annotations?.[DIFFBASE] && statusOf(body).create_fn ? true : undefined;
      });
      await python.waitForLine(`[${namespace}/by-python] Handling cycle is finished`);
      assert.equal(await python.stop(), 0, python.output);
    }
    const before = await getExample(client, namespace, "by-python");

    const registry = new kopf.Registry();
    const calls: string[] = [];
    kopf.on.create("kopfexamples", { registry, id: "create_fn" }, ({ name }) => {
      calls.push(name!);
      return { message: "hello from deno" };
    });
    const probe = new EventProbe(registry);
    const operator = await runOperator(registry, namespace, { settings: leanSettings() });
    try {
      await createExample(client, namespace, "by-deno", { field: "value" });
      await eventually("our result", async () => {
        const body = await getExample(client, namespace, "by-deno");
        return (statusOf(body).create_fn as { message?: string } | undefined)?.message === "hello from deno" ||
          undefined;
      });
      for (const name of ["by-deno", "by-python"]) await probe.caughtUp(namespace, name);
      assert.deepEqual(calls, ["by-deno"], "the object that Python Kopf created is not created again");
      const after = await getExample(client, namespace, "by-python");
      assert.equal(after.metadata.resourceVersion, before.metadata.resourceVersion, "nothing written to it");
      assert.equal(writes(operator.running.client.counters), 1, "one write: the creation of by-deno");
    } finally {
      await operator.stop();
    }
  },
});
