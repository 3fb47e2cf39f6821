/**
 * Sub-handlers against a real API server: declared and executed children, their results,
 * progress and retries, the parent's re-invocation, and the purging of all their state.
 */

import assert from "node:assert/strict";
import * as kopf from "@kopf/kopf";
import type { KubernetesObject } from "../src/model/body.ts";
import { createExample, freshNamespace, getExample, testCluster } from "./support/cluster.ts";
import { eventually } from "./support/eventually.ts";
import { runOperator } from "./support/operator.ts";
import { EventProbe } from "./support/probe.ts";

type Status = Record<string, unknown>;

const DIFFBASE = "kopf.zalando.org/last-handled-configuration";

function statusOf(body: KubernetesObject): Status {
  return (body.status ?? {}) as Status;
}

/**
 * Waits until the object's cause is fully handled: the diff-base is written and `status[key]` is
 * set (the status subresource is patched after the object itself); returns the object.
 */
async function handled(namespace: string, name: string, key: string): Promise<KubernetesObject> {
  const { client } = await testCluster();
  return await eventually(`the handling of ${name}`, async () => {
    const body = await getExample(client, namespace, name);
    return body.metadata.annotations?.[DIFFBASE] && statusOf(body)[key] !== undefined ? body : undefined;
  });
}

/** The progress left on an object: Kopf's annotations (but the diff-base) and `status.kopf.progress`. */
function progressOf(body: KubernetesObject): { annotations: string[]; status: string[] } {
  const annotations = Object.keys(body.metadata.annotations ?? {})
    .filter((key) => key.startsWith("kopf.zalando.org/") && key !== DIFFBASE);
  const kopfStatus = statusOf(body).kopf as { progress?: Record<string, unknown> } | undefined;
  return { annotations, status: Object.keys(kopfStatus?.progress ?? {}) };
}

Deno.test("declared sub-handlers run after the parent; results at status['createFn/item1']", async () => {
  const { client } = await testCluster();
  const namespace = await freshNamespace(client, "sub-declared");
  const registry = new kopf.Registry();
  kopf.on.create("kopfexamples", { registry }, function createFn({ subhandler }) {
    kopf.subhandler({ id: "item1" }, () => "item1");
    subhandler({ id: "item2" }, () => "item2");
    return { parent: "done" };
  });
  const operator = await runOperator(registry, namespace);
  try {
    await createExample(client, namespace, "d");
    const body = await handled(namespace, "d", "createFn");
    const status = statusOf(body);
    assert.equal(status["createFn/item1"], "item1");
    assert.equal(status["createFn/item2"], "item2");
    assert.deepEqual(status.createFn, { parent: "done" });
    assert.deepEqual(progressOf(body), { annotations: [], status: [] }, "all progress is purged when done");
  } finally {
    await operator.stop();
  }
});

Deno.test("await kopf.execute({ fns }) sets both statuses; the code after it runs once", async () => {
  const { client } = await testCluster();
  const namespace = await freshNamespace(client, "sub-execute");
  const registry = new kopf.Registry();
  let leaving = 0;
  kopf.on.create("kopfexamples", { registry }, async function createFn({ logger }) {
    await kopf.execute({ fns: { a: () => "A", b: () => ({ b: true }) } });
    leaving++;
    logger.info("Leaving createFn().");
  });
  const probe = new EventProbe(registry);
  const operator = await runOperator(registry, namespace);
  try {
    await createExample(client, namespace, "i");
    const body = await handled(namespace, "i", "createFn/b");
    assert.equal(statusOf(body)["createFn/a"], "A");
    assert.deepEqual(statusOf(body)["createFn/b"], { b: true });
    await probe.caughtUp(namespace, "i");
    assert.equal(leaving, 1);
    assert.deepEqual(progressOf(await getExample(client, namespace, "i")), { annotations: [], status: [] });
  } finally {
    await operator.stop();
  }
});

Deno.test("a child failing temporarily re-invokes the parent until done; 'Leaving' once", async () => {
  const { client } = await testCluster();
  const namespace = await freshNamespace(client, "sub-retry");
  const registry = new kopf.Registry();
  const calls = { parent: 0, a: 0, b: 0, leaving: 0 };
  kopf.on.create("kopfexamples", { registry }, async function createFn({ subhandler, logger }) {
    calls.parent++;
    subhandler({ id: "a" }, ({ retry }) => {
      calls.a++;
      if (retry < 2) throw new kopf.TemporaryError("a is not ready", { delay: 1 });
      return "a";
    });
    subhandler({ id: "b" }, () => {
      calls.b++;
      return "b";
    });
    await kopf.execute();
    calls.leaving++;
    logger.info("Leaving createFn().");
    return "parent";
  });
  const probe = new EventProbe(registry);
  const operator = await runOperator(registry, namespace);
  try {
    await createExample(client, namespace, "r");
    const body = await handled(namespace, "r", "createFn");
    await probe.caughtUp(namespace, "r");
    assert.deepEqual(calls, { parent: 3, a: 3, b: 1, leaving: 1 });
    const status = statusOf(body);
    assert.equal(status["createFn/a"], "a");
    assert.equal(status["createFn/b"], "b");
    assert.equal(status.createFn, "parent");
    assert.deepEqual(progressOf(body), { annotations: [], status: [] });
  } finally {
    await operator.stop();
  }
});

Deno.test("children in progress have their own progress annotations; the parent lists them in subrefs", async () => {
  const { client } = await testCluster();
  const namespace = await freshNamespace(client, "sub-progress");
  const registry = new kopf.Registry();
  kopf.on.create("kopfexamples", { registry }, function createFn() {
    for (const item of ["item1", "item2"]) {
      kopf.register(({ retry }) => {
        if (retry < 1) throw new kopf.TemporaryError("soon", { delay: 3 });
        return item;
      }, { id: item });
    }
  });
  const operator = await runOperator(registry, namespace);
  try {
    await createExample(client, namespace, "p");
    const during = await eventually("the progress of both children", async () => {
      const body = await getExample(client, namespace, "p");
      const annotations = body.metadata.annotations ?? {};
      return annotations["kopf.zalando.org/createFn.item1"] && annotations["kopf.zalando.org/createFn.item2"]
        ? body
        : undefined;
    });
    const annotations = during.metadata.annotations ?? {};
    const item1 = JSON.parse(annotations["kopf.zalando.org/createFn.item1"]);
    assert.equal(item1.purpose, "create");
    assert.equal(item1.retries, 1);
    assert.equal(item1.message, "soon");
    const parent = JSON.parse(annotations["kopf.zalando.org/createFn"]);
    assert.deepEqual(parent.subrefs, ["createFn/item1", "createFn/item2"]);
    assert.equal(parent.success, false);
    assert.equal(statusOf(during).createFn, undefined);

    const body = await handled(namespace, "p", "createFn/item2");
    assert.equal(statusOf(body)["createFn/item1"], "item1");
    assert.equal(statusOf(body)["createFn/item2"], "item2");
    assert.deepEqual(progressOf(body), { annotations: [], status: [] }, "the children's progress is purged too");
  } finally {
    await operator.stop();
  }
});

Deno.test("kopf.execute() in an on.event handler fails clearly; sub-handler filters apply", async () => {
  const { client } = await testCluster();
  const namespace = await freshNamespace(client, "sub-misuse");
  const registry = new kopf.Registry();
  const errors: string[] = [];
  kopf.on.event("kopfexamples", { registry }, async function eventFn() {
    try {
      await kopf.execute({ fns: [function child() {}] });
    } catch (error) {
      errors.push(`${(error as Error).name}: ${(error as Error).message}`);
    }
  });
  const ran: string[] = [];
  const mark = (what: string) => () => ran.push(what);
  kopf.on.create("kopfexamples", { registry }, function createFn({ subhandler }) {
    subhandler({ id: "sized", field: "spec.size", value: 1 }, mark("sized"));
    subhandler({ id: "unsized", field: "spec.size", value: 2 }, mark("unsized"));
    subhandler({ id: "named", when: ({ name }) => name === "m" }, mark("named"));
  });
  const probe = new EventProbe(registry);
  const operator = await runOperator(registry, namespace);
  try {
    await createExample(client, namespace, "m", { size: 1 });
    await handled(namespace, "m", "createFn/named");
    await probe.caughtUp(namespace, "m");
    assert.deepEqual(ran, ["sized", "named"]);
    assert.ok(errors.length > 0);
    assert.match(errors[0], /^TypeError: Sub-handlers are only supported inside change handlers\./);
  } finally {
    await operator.stop();
  }
});
