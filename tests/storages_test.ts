/**
 * Progress and diff-base storages against a real API server: the record format, hashed keys of
 * long handler ids, a custom prefix, the exact diff-base text, what the essence ignores, and a
 * storage transition that does not re-run creation.
 */

import assert from "node:assert/strict";
import * as kopf from "@kopf/kopf";
import { resourcePath } from "../src/api/paths.ts";
import type { KubernetesObject } from "../src/model/body.ts";
import {
  CONFIGMAPS,
  createExample,
  freshNamespace,
  getExample,
  KOPFEXAMPLES,
  patchExample,
  testCluster,
  waitForStatusSet,
} from "./support/cluster.ts";
import { eventually } from "./support/eventually.ts";
import { runOperator } from "./support/operator.ts";
import { EventProbe } from "./support/probe.ts";

const DIFF_BASE = "kopf.zalando.org/last-handled-configuration";

/** Kopf's timestamps: ISO-8601 UTC with microseconds and an offset. */
const TIMESTAMP = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}\+00:00$/;

type Status = Record<string, unknown>;

/** Waits until an annotation of an object is set; returns its value. */
async function annotation(namespace: string, name: string, key: string): Promise<string> {
  const { client } = await testCluster();
  return await eventually(`the annotation ${key} of ${name}`, async () => {
    const body = await getExample(client, namespace, name);
    return body.metadata.annotations?.[key];
  });
}

Deno.test("the progress record of a delayed handler has Kopf's fields, order and formats", async () => {
  const { client } = await testCluster();
  const namespace = await freshNamespace(client, "record");
  const registry = new kopf.Registry();
  kopf.on.create("kopfexamples", { registry }, function createFn({ retry }) {
    if (retry === 0) throw new kopf.TemporaryError("later", { delay: 30 });
  });
  const operator = await runOperator(registry, namespace);
  try {
    await createExample(client, namespace, "r");
    const text = await annotation(namespace, "r", "kopf.zalando.org/createFn");
    const record = JSON.parse(text);
    assert.equal(text, JSON.stringify(record), "compact JSON");
    assert.deepEqual(
      Object.keys(record),
      ["started", "delayed", "purpose", "retries", "success", "failure", "message"],
      "Kopf's fields in Kopf's order, null ones (stopped, subrefs) omitted",
    );
    assert.equal(record.purpose, "create");
    assert.equal(record.retries, 1);
    assert.equal(record.success, false);
    assert.equal(record.failure, false);
    assert.equal(record.message, "later");
    assert.match(record.started, TIMESTAMP);
    assert.match(record.delayed, TIMESTAMP);
    const delay = (Date.parse(record.delayed.slice(0, 23) + "Z") - Date.parse(record.started.slice(0, 23) + "Z")) /
      1000;
    assert.ok(delay >= 30 && delay < 60, `delayed is 30 s after the attempt, not ${delay} s after started`);
  } finally {
    await operator.stop();
  }
});

Deno.test("a 70-character handler id gets two hashed annotation names, Kopf's, while in progress", async () => {
  const { client } = await testCluster();
  const namespace = await freshNamespace(client, "long-id");
  const registry = new kopf.Registry();
  const id = "handlerWithAnIdentifierOfSeventyCharactersWhichIsLongerThanSixtyThree0";
  assert.equal(id.length, 70);
  kopf.on.create("kopfexamples", { registry, id }, () => {
    throw new kopf.TemporaryError("later", { delay: 30 });
  });
  const operator = await runOperator(registry, namespace);
  try {
    await createExample(client, namespace, "l");
    // As Python Kopf 1.44.6 names them (make_v2_key and make_v1_key of AnnotationsProgressStorage).
    const v2 = "kopf.zalando.org/handlerWithAnIdentifierOfSeventyCharactersWhichIsLongerT-P7Bx7w";
    const v1 = "kopf.zalando.org/handlerWithAnIdentifierOfSeventyCharact-P7Bx7w";
    const v2Text = await annotation(namespace, "l", v2);
    const body = await getExample(client, namespace, "l");
    const progress = Object.keys(body.metadata.annotations ?? {}).filter((key) =>
      key.startsWith("kopf.zalando.org/") && key !== DIFF_BASE
    ).sort();
    assert.deepEqual(progress, [v1, v2].sort());
    assert.equal(body.metadata.annotations?.[v1], v2Text, "both keys hold the same record");
    assert.equal(JSON.parse(v2Text).purpose, "create");
  } finally {
    await operator.stop();
  }
});

Deno.test("AnnotationsProgressStorage with a custom prefix: its keys and marker, nothing in status.kopf", async () => {
  const { client } = await testCluster();
  const namespace = await freshNamespace(client, "prefix");
  const registry = new kopf.Registry();
  let release = false;
  kopf.on.create("kopfexamples", { registry }, function createFn() {
    if (!release) throw new kopf.TemporaryError("held", { delay: 1 });
    return "done";
  });
  const settings = new kopf.Settings();
  settings.persistence.progressStorage = new kopf.AnnotationsProgressStorage({ prefix: "my-op.example.com" });
  const probe = new EventProbe(registry);
  const operator = await runOperator(registry, namespace, { settings });
  try {
    await createExample(client, namespace, "p");
    const text = await annotation(namespace, "p", "my-op.example.com/createFn");
    let body = await getExample(client, namespace, "p");
    const annotations = body.metadata.annotations ?? {};
    assert.equal(annotations["my-op.example.com/kopf-managed"], "yes");
    assert.equal(JSON.parse(text).purpose, "create");
    const progressElsewhere = Object.keys(annotations).filter((key) =>
      key.startsWith("kopf.zalando.org/") && key !== DIFF_BASE
    );
    assert.deepEqual(progressElsewhere, [], "no progress under kopf.zalando.org/");
    assert.equal((body.status as Status | undefined)?.kopf, undefined, "nothing under status.kopf");

    release = true;
    body = await waitForStatusSet(namespace, "p", "createFn");
    body = await probe.caughtUp(namespace, "p");
    assert.equal((body.status as Status).kopf, undefined, "nothing under status.kopf");
    assert.equal(body.metadata.annotations?.["my-op.example.com/createFn"], undefined, "purged when done");
  } finally {
    await operator.stop();
  }
});

Deno.test("the diff-base annotation is Kopf's exact text", async () => {
  const { client } = await testCluster();
  const namespace = await freshNamespace(client, "diffbase");
  const registry = new kopf.Registry();
  kopf.on.create("kopfexamples", { registry }, function createFn() {});
  const operator = await runOperator(registry, namespace);
  try {
    await client.request({
      method: "POST",
      path: resourcePath(KOPFEXAMPLES, { namespace }),
      body: {
        apiVersion: "kopf.dev/v1",
        kind: "KopfExample",
        metadata: { name: "d", labels: { a: "b" } },
        spec: { field: "value" },
      },
    });
    const text = await annotation(namespace, "d", DIFF_BASE);
    assert.equal(text, '{"spec":{"field":"value"},"metadata":{"labels":{"a":"b"}}}\n');
  } finally {
    await operator.stop();
  }
});

Deno.test("status, system metadata and Kopf's own annotations are not changes; a ConfigMap's data is", async () => {
  const { client } = await testCluster();
  const namespace = await freshNamespace(client, "essence");
  const registry = new kopf.Registry();
  const updates: string[] = [];
  kopf.on.update("kopfexamples", { registry }, function updateFn({ diff }) {
    updates.push(JSON.stringify(diff));
  });
  const configmapUpdates: unknown[] = [];
  kopf.on.update("configmaps", { registry }, function configmapFn({ diff }) {
    configmapUpdates.push(diff);
  });
  await createExample(client, namespace, "e", { x: 1 });
  await client.request({
    method: "POST",
    path: resourcePath(CONFIGMAPS, { namespace }),
    body: { metadata: { name: "cm" }, data: { k: "1" } },
  });
  const probe = new EventProbe(registry);
  const operator = await runOperator(registry, namespace);
  try {
    await annotation(namespace, "e", DIFF_BASE);
    await client.request({
      method: "PATCH",
      path: resourcePath(KOPFEXAMPLES, { namespace, name: "e", subresource: "status" }),
      body: { status: { phase: "Whatever", observedGeneration: 5 } },
      contentType: "application/merge-patch+json",
    });
    const generation = (await getExample(client, namespace, "e")).metadata.generation;
    await patchExample(client, namespace, "e", {
      metadata: {
        generation: 99, // the API server keeps its own
        annotations: {
          "kopf.zalando.org/some-note": "of another Kopf operator",
          "kubectl.kubernetes.io/last-applied-configuration": '{"spec":{"x":1}}',
        },
      },
    });
    await probe.caughtUp(namespace, "e");
    assert.equal((await getExample(client, namespace, "e")).metadata.generation, generation);
    assert.deepEqual(updates, [], "no update handler for status or non-essential metadata");

    await patchExample(client, namespace, "e", { spec: { x: 2 } });
    await eventually("the spec update", () => updates.length >= 1 || undefined);
    await probe.caughtUp(namespace, "e");
    assert.deepEqual(updates, [JSON.stringify([["change", ["spec", "x"], 1, 2]])]);

    await eventually("the ConfigMap's diff-base", async () => {
      const cm = await client.request<KubernetesObject>({ path: resourcePath(CONFIGMAPS, { namespace, name: "cm" }) });
      return cm.metadata.annotations?.[DIFF_BASE];
    });
    await client.request({
      method: "PATCH",
      path: resourcePath(CONFIGMAPS, { namespace, name: "cm" }),
      body: { data: { k: "2" } },
      contentType: "application/merge-patch+json",
    });
    await eventually("the ConfigMap update", () => configmapUpdates.length >= 1 || undefined);
    assert.deepEqual(configmapUpdates, [[["change", ["data", "k"], "1", "2"]]]);
  } finally {
    await operator.stop();
  }
});

Deno.test("switching to MultiDiffBaseStorage([status, annotations]) re-runs no creation; the next change writes status.diff-base", async () => {
  const { client } = await testCluster();
  const namespace = await freshNamespace(client, "transition");
  const registry = new kopf.Registry();
  const calls: string[] = [];
  const events: string[] = [];
  kopf.on.create("kopfexamples", { registry }, function createFn({ name }) {
    calls.push(`create ${name}`);
  });
  kopf.on.update("kopfexamples", { registry }, function updateFn({ name, old, new: now }) {
    calls.push(`update ${name} ${JSON.stringify((old as Status).spec)} ${JSON.stringify((now as Status).spec)}`);
  });
  kopf.on.event("kopfexamples", { registry }, function eventFn({ name, type }) {
    events.push(`${type} ${name}`);
  });
  await createExample(client, namespace, "t", { x: 1 });
  const probe = new EventProbe(registry);
  let operator = await runOperator(registry, namespace);
  try {
    await annotation(namespace, "t", DIFF_BASE);
  } finally {
    await operator.stop();
  }
  assert.deepEqual(calls, ["create t"]);

  const settings = new kopf.Settings();
  settings.persistence.diffbaseStorage = new kopf.MultiDiffBaseStorage([
    new kopf.StatusDiffBaseStorage({ field: "status.diff-base" }),
    new kopf.AnnotationsDiffBaseStorage(),
  ]);
  events.length = 0;
  operator = await runOperator(registry, namespace, { settings });
  try {
    await eventually("the listing of the object", () => events.includes("null t") || undefined);
    await probe.caughtUp(namespace, "t");
    assert.deepEqual(calls, ["create t"], "the creation is not re-run");

    await patchExample(client, namespace, "t", { spec: { x: 2 } });
    const body = await waitForStatusSet(namespace, "t", "diff-base");
    const stored = (body.status as Status)["diff-base"];
    assert.equal(typeof stored, "string", "StatusDiffBaseStorage keeps the JSON text");
    assert.deepEqual(JSON.parse(stored as string).spec, { x: 2 });
    assert.deepEqual(JSON.parse(body.metadata.annotations![DIFF_BASE]).spec, { x: 2 }, "both are written");
    assert.deepEqual(calls, ["create t", 'update t {"x":1} {"x":2}']);
  } finally {
    await operator.stop();
  }
});

/**
 * Kopf 1.44's default, which we follow: records live in annotations only; `status.kopf.progress`
 * (written by Kopf before 1.44, and in 1.37's SmartProgressStorage) is read and purged, never written.
 */
Deno.test("the default storage: records in annotations while in progress, gone after; status.kopf.progress read and purged", async () => {
  const { client } = await testCluster();
  const namespace = await freshNamespace(client, "smart");
  const registry = new kopf.Registry();
  const calls: string[] = [];
  kopf.on.create("kopfexamples", { registry }, function firstFn({ name }) {
    calls.push(`first ${name}`);
    return "first";
  });
  kopf.on.create("kopfexamples", { registry }, function secondFn({ name, retry }) {
    calls.push(`second ${name} ${retry}`);
    if (retry === 0) throw new kopf.TemporaryError("soon", { delay: 2 });
    return "second";
  });

  // An object that an older Kopf had half-handled: firstFn's success is recorded in the status only.
  await createExample(client, namespace, "old");
  await client.request({
    method: "PATCH",
    path: resourcePath(KOPFEXAMPLES, { namespace, name: "old", subresource: "status" }),
    body: {
      status: {
        kopf: {
          progress: {
            firstFn: {
              started: "2024-01-02T03:04:05.123456+00:00",
              stopped: "2024-01-02T03:04:05.234567+00:00",
              purpose: "create",
              retries: 1,
              success: true,
              failure: false,
            },
          },
        },
      },
    },
    contentType: "application/merge-patch+json",
  });

  const operator = await runOperator(registry, namespace);
  try {
    await createExample(client, namespace, "new");
    const during = await eventually("the records of both handlers", async () => {
      const body = await getExample(client, namespace, "new");
      const annotations = body.metadata.annotations ?? {};
      return annotations["kopf.zalando.org/firstFn"] && annotations["kopf.zalando.org/secondFn"] ? body : undefined;
    });
    assert.equal(JSON.parse(during.metadata.annotations!["kopf.zalando.org/firstFn"]).success, true);
    assert.equal(JSON.parse(during.metadata.annotations!["kopf.zalando.org/secondFn"]).message, "soon");
    assert.equal((during.status as Status | undefined)?.kopf, undefined, "no records in the status");

    for (const name of ["new", "old"]) {
      const body = await waitForStatusSet(namespace, name, "secondFn");
      await annotation(namespace, name, DIFF_BASE);
      const after = await getExample(client, namespace, name);
      const left = Object.keys(after.metadata.annotations ?? {}).filter((key) =>
        key.startsWith("kopf.zalando.org/") && key !== DIFF_BASE
      );
      assert.deepEqual(left, [], `${name}: the annotations are purged`);
      const progress = ((after.status as Status).kopf as { progress?: Status } | undefined)?.progress ?? {};
      assert.deepEqual(Object.keys(progress), [], `${name}: status.kopf.progress is purged`);
      assert.ok(body);
    }
    assert.deepEqual(
      calls.filter((call) => call.startsWith("first")),
      ["first new"],
      "old's firstFn is not re-run: its success was read from status.kopf.progress",
    );
  } finally {
    await operator.stop();
  }
});

Deno.test("two operators with their own prefixes and finalizers handle one object once each, no ping-pong", async () => {
  const { client } = await testCluster();
  const namespace = await freshNamespace(client, "two-operators");
  const calls: string[] = [];
  const operators = [];
  const probes: EventProbe[] = [];
  for (const who of ["a", "b"]) {
    const prefix = `${who}.example.com`;
    const registry = new kopf.Registry();
    kopf.on.create("kopfexamples", { registry }, function createFn({ name }) {
      calls.push(`${who} create ${name}`);
      return `by ${who}`;
    });
    kopf.on.update("kopfexamples", { registry }, function updateFn({ name, diff }) {
      calls.push(`${who} update ${name} ${JSON.stringify(diff)}`);
    });
    kopf.on.delete("kopfexamples", { registry }, function deleteFn({ name }) {
      calls.push(`${who} delete ${name}`);
    });
    const settings = new kopf.Settings();
    settings.persistence.finalizer = `${prefix}/finalizer`;
    settings.persistence.progressStorage = new kopf.AnnotationsProgressStorage({ prefix });
    settings.persistence.diffbaseStorage = new kopf.AnnotationsDiffBaseStorage({ prefix });
    probes.push(new EventProbe(registry));
    operators.push(await runOperator(registry, namespace, { settings }));
  }
  const bothCaughtUp = () =>
    eventually("both operators to catch up with x", async () => {
      const bodies = await Promise.all(probes.map((probe) => probe.caughtUp(namespace, "x")));
      return bodies.every((body) => body.metadata.resourceVersion === bodies[0].metadata.resourceVersion);
    });
  try {
    await createExample(client, namespace, "x", { v: 1 });
    await eventually("both diff-bases", async () => {
      const annotations = (await getExample(client, namespace, "x")).metadata.annotations ?? {};
      return annotations["a.example.com/last-handled-configuration"] &&
          annotations["b.example.com/last-handled-configuration"] || undefined;
    });
    await bothCaughtUp();
    assert.deepEqual(calls.sort(), ["a create x", "b create x"], "no updates caused by the other's annotations");
    const body = await getExample(client, namespace, "x");
    assert.deepEqual(body.metadata.finalizers?.sort(), ["a.example.com/finalizer", "b.example.com/finalizer"]);
    assert.ok(["by a", "by b"].includes((body.status as Status).createFn as string));

    calls.length = 0;
    await patchExample(client, namespace, "x", { spec: { v: 2 } });
    await eventually("both updates", () => calls.length >= 2 || undefined);
    await bothCaughtUp();
    const change = JSON.stringify([["change", ["spec", "v"], 1, 2]]);
    assert.deepEqual(calls.sort(), [`a update x ${change}`, `b update x ${change}`]);

    calls.length = 0;
    await client.request({ method: "DELETE", path: resourcePath(KOPFEXAMPLES, { namespace, name: "x" }) });
    await eventually("the object to be gone", async () => {
      try {
        await getExample(client, namespace, "x");
        return undefined;
      } catch {
        return true;
      }
    });
    // Both finalizers are honoured, and each delete handler runs once: the operator that loses the
    // race to remove its finalizer tries again on the fresh object instead of handling anew.
    assert.deepEqual(calls.sort(), ["a delete x", "b delete x"]);
  } finally {
    for (const operator of operators) await operator.stop();
  }
});
