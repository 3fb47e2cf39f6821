/**
 * Finalizers and deletion against a real API server: delete handlers and the finalizer they need, the
 * finalizer following the handlers' filters, and objects that are not ours to finalize.
 */

import assert from "node:assert/strict";
import * as kopf from "@kopf/kopf";
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

const FINALIZER = "kopf.zalando.org/KopfFinalizerMarker";

Deno.test("a mandatory delete handler puts the finalizer on; deletion waits for the handler", async () => {
  const { client } = await testCluster();
  const namespace = await freshNamespace(client, "delete");
  const registry = new kopf.Registry();
  const calls: string[] = [];
  kopf.on.create("kopfexamples", { registry }, function createFn() {
    calls.push("create");
  });
  kopf.on.delete("kopfexamples", { registry }, function deleteFn({ retry, reason }) {
    calls.push(`${reason} ${retry}`);
    if (retry === 0) throw new kopf.TemporaryError("not yet", { delay: 1 });
  });
  const operator = await runOperator(registry, namespace);
  try {
    await createExample(client, namespace, "d", { keep: "foreign" });
    await patchExample(client, namespace, "d", { metadata: { finalizers: ["example.com/foreign"] } });
    await eventually("our finalizer", async () => {
      const body = await getExample(client, namespace, "d");
      return body.metadata.finalizers?.includes(FINALIZER) || undefined;
    });
    await eventually("the creation", () => calls.includes("create") || undefined);
    await deleteExample(client, namespace, "d");
    await eventually("our finalizer to be removed", async () => {
      const body = await getExample(client, namespace, "d");
      return body.metadata.finalizers?.includes(FINALIZER) ? undefined : body;
    });
    const body = await getExample(client, namespace, "d");
    assert.deepEqual(body.metadata.finalizers, ["example.com/foreign"], "a foreign finalizer is never touched");
    assert.deepEqual(calls, ["create", "delete 0", "delete 1"]);
    await patchExample(client, namespace, "d", { metadata: { finalizers: null } });
    await exampleGone(client, namespace, "d");
  } finally {
    await operator.stop();
  }
});

Deno.test("only optional delete handlers: no finalizer, and the handler is never called", async () => {
  const { client } = await testCluster();
  const namespace = await freshNamespace(client, "optional");
  const registry = new kopf.Registry();
  const calls: string[] = [];
  kopf.on.create("kopfexamples", { registry }, function createFn() {
    calls.push("create");
  });
  kopf.on.delete("kopfexamples", { registry, optional: true }, function deleteFn() {
    calls.push("delete");
  });
  const operator = await runOperator(registry, namespace);
  try {
    await createExample(client, namespace, "o");
    await eventually("the creation", () => calls.includes("create") || undefined);
    const body = await getExample(client, namespace, "o");
    assert.equal(body.metadata.finalizers, undefined);
    await deleteExample(client, namespace, "o");
    await exampleGone(client, namespace, "o");
    await new Promise((resolve) => setTimeout(resolve, 500));
    assert.deepEqual(calls, ["create"]);
  } finally {
    await operator.stop();
  }
});

Deno.test("the finalizer follows the filters: removed when the object stops matching", async () => {
  const { client } = await testCluster();
  const namespace = await freshNamespace(client, "filtered");
  const registry = new kopf.Registry();
  kopf.on.delete("kopfexamples", { registry, labels: { f: "y" } }, function deleteFn() {});
  const operator = await runOperator(registry, namespace);
  try {
    await createExample(client, namespace, "m");
    await patchExample(client, namespace, "m", { metadata: { labels: { f: "y" } } });
    await eventually("the finalizer", async () => {
      const body = await getExample(client, namespace, "m");
      return body.metadata.finalizers?.includes(FINALIZER) || undefined;
    });
    await patchExample(client, namespace, "m", { metadata: { labels: { f: null } } });
    await eventually("the finalizer to go", async () => {
      const body = await getExample(client, namespace, "m");
      return body.metadata.finalizers?.includes(FINALIZER) ? undefined : true;
    });
  } finally {
    await operator.stop();
  }
});

Deno.test("an object being deleted without our finalizer is not ours: no delete handler", async () => {
  const { client } = await testCluster();
  const namespace = await freshNamespace(client, "free");
  const registry = new kopf.Registry();
  const calls: string[] = [];
  kopf.on.delete("kopfexamples", { registry, labels: { mine: "yes" } }, function deleteFn({ name }) {
    calls.push(name!);
  });
  const operator = await runOperator(registry, namespace);
  try {
    await createExample(client, namespace, "foreign");
    await patchExample(client, namespace, "foreign", { metadata: { finalizers: ["example.com/foreign"] } });
    await deleteExample(client, namespace, "foreign");
    await patchExample(client, namespace, "foreign", { metadata: { labels: { mine: "yes" } } });
    await new Promise((resolve) => setTimeout(resolve, 1000));
    const body = await getExample(client, namespace, "foreign");
    assert.deepEqual(
      body.metadata.finalizers,
      ["example.com/foreign"],
      "no finalizer added to an object being deleted",
    );
    assert.deepEqual(calls, []);
    await patchExample(client, namespace, "foreign", { metadata: { finalizers: null } });
  } finally {
    await operator.stop();
  }
});

Deno.test("the finalizer comes first: the create handler already sees it on the object", async () => {
  const { client } = await testCluster();
  const namespace = await freshNamespace(client, "finalizer-first");
  const registry = new kopf.Registry();
  kopf.on.create("kopfexamples", { registry }, function createFn({ meta }) {
    return { finalized: (meta.finalizers as string[] | undefined)?.includes(FINALIZER) ?? false };
  });
  kopf.on.delete("kopfexamples", { registry }, function deleteFn() {});
  const operator = await runOperator(registry, namespace);
  try {
    await createExample(client, namespace, "f");
    const result = await eventually("status.createFn", async () => {
      const body = await getExample(client, namespace, "f");
      return (body.status as Record<string, unknown> | undefined)?.createFn;
    });
    assert.deepEqual(result, { finalized: true });
  } finally {
    await operator.stop();
  }
});

Deno.test("a delete handler failing for good still lets the object go", async () => {
  const { client } = await testCluster();
  const namespace = await freshNamespace(client, "delete-fails");
  const registry = new kopf.Registry();
  const calls: number[] = [];
  kopf.on.delete("kopfexamples", { registry }, function deleteFn({ retry }) {
    calls.push(retry);
    throw new kopf.PermanentError("cannot clean up");
  });
  const operator = await runOperator(registry, namespace);
  try {
    await createExample(client, namespace, "p");
    await eventually("our finalizer", async () => {
      const body = await getExample(client, namespace, "p");
      return body.metadata.finalizers?.includes(FINALIZER) || undefined;
    });
    await deleteExample(client, namespace, "p");
    await exampleGone(client, namespace, "p");
    assert.deepEqual(calls, [0]);
  } finally {
    await operator.stop();
  }
});

Deno.test("restarted without delete handlers, the operator takes its finalizer off existing objects", async () => {
  const { client } = await testCluster();
  const namespace = await freshNamespace(client, "no-more-delete");
  const before = new kopf.Registry();
  kopf.on.create("kopfexamples", { registry: before }, function createFn() {});
  kopf.on.delete("kopfexamples", { registry: before }, function deleteFn() {});
  let operator = await runOperator(before, namespace);
  try {
    await createExample(client, namespace, "r");
    await eventually("our finalizer and the creation", async () => {
      const body = await getExample(client, namespace, "r");
      const done = body.metadata.annotations?.["kopf.zalando.org/last-handled-configuration"];
      return done && body.metadata.finalizers?.includes(FINALIZER) || undefined;
    });
  } finally {
    await operator.stop();
  }

  const after = new kopf.Registry();
  const calls: string[] = [];
  kopf.on.create("kopfexamples", { registry: after }, function createFn({ name }) {
    calls.push(`create ${name}`);
  });
  operator = await runOperator(after, namespace);
  try {
    await eventually("the finalizer to be removed", async () => {
      const body = await getExample(client, namespace, "r");
      return body.metadata.finalizers?.includes(FINALIZER) ? undefined : true;
    });
    await deleteExample(client, namespace, "r");
    await exampleGone(client, namespace, "r");
    assert.deepEqual(calls, [], "nothing is re-run");
  } finally {
    await operator.stop();
  }
});
