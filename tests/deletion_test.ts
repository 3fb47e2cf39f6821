/**
 * Finalizers and deletion against a real API server (kopf-features areas 4.8, 5.9, 11).
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
  waitFor,
} from "./support/cluster.ts";
import { runOperator } from "./support/operator.ts";

const FINALIZER = "kopf.zalando.org/KopfFinalizerMarker";

Deno.test("a mandatory delete handler puts the finalizer on; deletion waits for the handler (4.8, 11.2, 11.3)", async () => {
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
    await waitFor("our finalizer", async () => {
      const body = await getExample(client, namespace, "d");
      return body.metadata.finalizers?.includes(FINALIZER) || undefined;
    });
    await waitFor("the creation", () => calls.includes("create") || undefined);
    await deleteExample(client, namespace, "d");
    await waitFor("our finalizer to be removed", async () => {
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

Deno.test("only optional delete handlers: no finalizer, and the handler is never called (4.8)", async () => {
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
    await waitFor("the creation", () => calls.includes("create") || undefined);
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

Deno.test("the finalizer follows the filters: removed when the object stops matching (5.9, 11.3)", async () => {
  const { client } = await testCluster();
  const namespace = await freshNamespace(client, "filtered");
  const registry = new kopf.Registry();
  kopf.on.delete("kopfexamples", { registry, labels: { f: "y" } }, function deleteFn() {});
  const operator = await runOperator(registry, namespace);
  try {
    await createExample(client, namespace, "m");
    await patchExample(client, namespace, "m", { metadata: { labels: { f: "y" } } });
    await waitFor("the finalizer", async () => {
      const body = await getExample(client, namespace, "m");
      return body.metadata.finalizers?.includes(FINALIZER) || undefined;
    });
    await patchExample(client, namespace, "m", { metadata: { labels: { f: null } } });
    await waitFor("the finalizer to go", async () => {
      const body = await getExample(client, namespace, "m");
      return body.metadata.finalizers?.includes(FINALIZER) ? undefined : true;
    });
  } finally {
    await operator.stop();
  }
});

Deno.test("an object being deleted without our finalizer is not ours: no delete handler (11.4)", async () => {
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
