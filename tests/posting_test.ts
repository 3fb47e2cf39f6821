/**
 * Kubernetes Events against a real API server: what `kopf.info()` & co. post, the aggregation of
 * identical repeats into one Event, and the settings that turn posting off.
 */

import assert from "node:assert/strict";
import { configure, reset } from "@logtape/logtape";
import { ApiClient } from "../src/api/client.ts";
import { EVENTS } from "../src/api/events.ts";
import { resourcePath } from "../src/api/paths.ts";
import { event, exception, info, warn } from "../src/engines/explicit_events.ts";
import { EventPoster } from "../src/engines/posting.ts";
import { runWithPoster } from "../src/engines/posting_context.ts";
import { POSTING_SINK_ID, postingSink } from "../src/engines/posting_sink.ts";
import { ObjectLogger } from "../src/logging/object_logger.ts";
import type { KubernetesList, KubernetesObject } from "../src/model/body.ts";
import { PostingSettings } from "../src/settings/posting.ts";
import * as kopf from "@kopf/kopf";
import {
  CONFIGMAPS,
  createExample,
  freshNamespace,
  getExample,
  KOPFEXAMPLES,
  NAMESPACES,
  testCluster,
} from "./support/cluster.ts";
import { eventually } from "./support/eventually.ts";
import { runOperator } from "./support/operator.ts";

/** A poster with its own client (so that its requests are counted apart from the test's). */
async function newPoster(settings: PostingSettings = new PostingSettings()): Promise<{
  poster: EventPoster;
  client: ApiClient;
}> {
  const { credentials } = await testCluster();
  const client = new ApiClient(credentials);
  return { poster: new EventPoster(client, settings), client };
}

/** The Events about an object, by its uid. */
async function eventsOf(namespace: string, uid: string): Promise<KubernetesObject[]> {
  const { client } = await testCluster();
  const list = await client.request<KubernetesList>({
    path: resourcePath(EVENTS, { namespace }),
    query: { fieldSelector: `involvedObject.uid=${uid}` },
  });
  return list.items;
}

Deno.test("info() posts an Event about the object with Kopf's fields", async () => {
  const { client } = await testCluster();
  const namespace = await freshNamespace(client, "posting");
  const body = await createExample(client, namespace, "kex1");
  const { poster, client: posting } = await newPoster();
  try {
    runWithPoster(poster, () => info(body, { reason: "Hello", message: "world" }));
    await poster.flush();
  } finally {
    await poster.close();
    posting.close();
  }
  const events = await eventsOf(namespace, body.metadata.uid!);
  assert.equal(events.length, 1);
  const [posted] = events;
  assert.match(posted.metadata.name ?? "", /^kopf-event-/);
  assert.equal(posted.metadata.namespace, namespace);
  assert.deepEqual(posted.involvedObject, {
    apiVersion: "kopf.dev/v1",
    kind: "KopfExample",
    name: "kex1",
    uid: body.metadata.uid,
    namespace,
  });
  assert.equal(posted.type, "Normal");
  assert.equal(posted.reason, "Hello");
  assert.equal(posted.message, "world");
  assert.equal(posted.action, "Action?");
  assert.equal(posted.count, 1);
  assert.equal(posted.reportingComponent, "kopf");
  assert.equal(posted.reportingInstance, "dev");
  assert.deepEqual(posted.source, { component: "kopf" });
  assert.match(posted.eventTime as string, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/);
  assert.equal(posted.firstTimestamp, posted.lastTimestamp);
});

Deno.test("ten identical warnings in a burst end up as one Event with count 10", async () => {
  const { client } = await testCluster();
  const namespace = await freshNamespace(client, "posting");
  const body = await createExample(client, namespace, "kex1");
  const { poster, client: posting } = await newPoster();
  try {
    await runWithPoster(poster, async () => {
      for (let index = 0; index < 10; index++) {
        warn(body, { reason: "Slow", message: "It takes long." });
        await new Promise((resolve) => setTimeout(resolve, 3)); // some arrive while one is in flight
      }
    });
    await poster.flush();
  } finally {
    await poster.close();
    posting.close();
  }
  const events = await eventsOf(namespace, body.metadata.uid!);
  assert.equal(events.length, 1, "one Event");
  assert.equal(events[0].count, 10);
  assert.equal(events[0].type, "Warning");
  const creates = posting.counters.count({ verb: "create", resource: "events" });
  const patches = posting.counters.count({ verb: "patch", resource: "events" });
  assert.equal(creates, 1, "one create");
  assert.ok(patches >= 1 && patches <= 9, `1 to 9 patches (${patches}): repeats in flight are merged`);
  assert.deepEqual(Object.keys(posting.counters.snapshot()).sort(), ["create events", "patch events"]);
  assert.ok(events[0].lastTimestamp! >= events[0].firstTimestamp!);
});

Deno.test("a synchronous burst is one create with the count of the burst, no patch", async () => {
  const { client } = await testCluster();
  const namespace = await freshNamespace(client, "posting");
  const body = await createExample(client, namespace, "kex1");
  const { poster, client: posting } = await newPoster();
  try {
    runWithPoster(poster, () => {
      for (let index = 0; index < 10; index++) warn(body, { reason: "Slow", message: "It takes long." });
    });
    await poster.flush();
  } finally {
    await poster.close();
    posting.close();
  }
  const events = await eventsOf(namespace, body.metadata.uid!);
  assert.deepEqual(events.map((e) => e.count), [10]);
  assert.deepEqual(posting.counters.byVerb(), { create: 1 });
});

Deno.test("different messages, reasons and types make different Events", async () => {
  const { client } = await testCluster();
  const namespace = await freshNamespace(client, "posting");
  const body = await createExample(client, namespace, "kex1");
  const { poster, client: posting } = await newPoster();
  try {
    runWithPoster(poster, () => {
      info(body, { reason: "Step", message: "one" });
      info(body, { reason: "Step", message: "two" });
      info(body, { reason: "Other", message: "one" });
      event(body, { type: "SomeType", reason: "Step", message: "one" });
      exception(body, { message: "Oops:", error: new RangeError("too far") });
    });
    await poster.flush();
  } finally {
    await poster.close();
    posting.close();
  }
  const events = await eventsOf(namespace, body.metadata.uid!);
  const seen = events.map((e) => `${e.type} ${e.reason} ${e.message} ${e.count}`).sort();
  assert.deepEqual(seen, [
    "Error RangeError Oops: too far 1",
    "Normal Other one 1",
    "Normal Step one 1",
    "Normal Step two 1",
    "SomeType Step one 1",
  ]);
});

Deno.test("posting disabled: no Event", async () => {
  const { client } = await testCluster();
  const namespace = await freshNamespace(client, "posting");
  const body = await createExample(client, namespace, "kex1");
  const settings = new PostingSettings();
  settings.enabled = false;
  const { poster, client: posting } = await newPoster(settings);
  try {
    runWithPoster(poster, () => {
      info(body, { reason: "Hello", message: "world" });
      warn(body, { reason: "Hello", message: "world" });
      exception(body, { error: new Error("e") });
      event(body, { type: "Normal", reason: "Hello" });
    });
    await poster.flush();
  } finally {
    await poster.close();
    posting.close();
  }
  assert.deepEqual(await eventsOf(namespace, body.metadata.uid!), []);
  assert.deepEqual(posting.counters.snapshot(), {}, "no request at all");
});

Deno.test("long and multi-byte messages are cut so that the API server accepts them", async () => {
  const { client } = await testCluster();
  const namespace = await freshNamespace(client, "posting");
  const body = await createExample(client, namespace, "kex1");
  const { poster, client: posting } = await newPoster();
  try {
    runWithPoster(poster, () => {
      info(body, { reason: "Ascii", message: "a".repeat(600) + "b".repeat(600) });
      info(body, { reason: "Umlauts", message: "ä".repeat(1024) }); // 1024 characters, 2048 bytes
    });
    await poster.flush();
  } finally {
    await poster.close();
    posting.close();
  }
  const events = await eventsOf(namespace, body.metadata.uid!);
  const byReason = Object.fromEntries(events.map((e) => [e.reason as string, e.message as string]));
  assert.equal(byReason.Ascii, "a".repeat(511) + "..." + "b".repeat(510));
  assert.equal(byReason.Umlauts, "ä".repeat(255) + "..." + "ä".repeat(255));
});

Deno.test("Events about cluster-scoped objects go to the default namespace", async () => {
  const { client } = await testCluster();
  const namespace = await freshNamespace(client, "posting");
  const ns = await client.request<KubernetesObject>({ path: resourcePath(NAMESPACES, { name: namespace }) });
  const { poster, client: posting } = await newPoster();
  try {
    runWithPoster(poster, () => info({ ...ns, apiVersion: "v1", kind: "Namespace" }, { reason: "Seen" }));
    await poster.flush();
  } finally {
    await poster.close();
    posting.close();
  }
  const expected = posting.credentials.defaultNamespace || "default";
  const events = await eventsOf(expected, ns.metadata.uid!);
  assert.equal(events.length, 1);
  assert.equal((events[0].involvedObject as { kind: string }).kind, "Namespace");
});

Deno.test("with posting.loggers on, the handlers' log lines become Logging Events", async () => {
  const { client } = await testCluster();
  const namespace = await freshNamespace(client, "posting");
  const body = await createExample(client, namespace, "kex1");
  const settings = new PostingSettings();
  settings.loggers = true;
  const { poster, client: posting } = await newPoster(settings);
  await configure({
    sinks: { [POSTING_SINK_ID]: postingSink },
    loggers: [
      { category: ["kopf", "objects"], lowestLevel: "trace", sinks: [POSTING_SINK_ID] },
      { category: ["logtape", "meta"], lowestLevel: "warning", sinks: [] },
    ],
    reset: true,
  });
  try {
    await runWithPoster(poster, async () => {
      const logger = new ObjectLogger(body);
      logger.debug("not at the default level");
      logger.info("hello");
      await Promise.resolve();
      logger.error("failed");
    });
    await poster.flush();
  } finally {
    await reset();
    await poster.close();
    posting.close();
  }
  const events = await eventsOf(namespace, body.metadata.uid!);
  const seen = events.map((e) => `${e.type} ${e.reason} ${e.message}`).sort();
  assert.deepEqual(seen, ["Error Logging failed", "Normal Logging hello"]);
});

Deno.test("a handler posts Events about any object: a child it created; Events about Events are dropped", async () => {
  const { client } = await testCluster();
  const namespace = await freshNamespace(client, "posting");
  const registry = new kopf.Registry();
  const children: KubernetesObject[] = [];
  kopf.on.create("kopfexamples", { registry }, async function createFn({ body, name }) {
    const child = await client.request<KubernetesObject>({
      method: "POST",
      path: resourcePath(CONFIGMAPS, { namespace }),
      body: { apiVersion: "v1", kind: "ConfigMap", metadata: { name: `${name}-child` }, data: { k: "v" } },
    });
    children.push(child);
    kopf.info(child, { reason: "Child", message: "about the child" });
    const anEvent = {
      apiVersion: "v1",
      kind: "Event",
      metadata: { name: "an-event", namespace, uid: crypto.randomUUID() },
    };
    kopf.info(anEvent, { reason: "Storm", message: "about an Event" });
    kopf.info(body, { reason: "Done", message: "about the parent" });
  });
  const operator = await runOperator(registry, namespace);
  try {
    const parent = await createExample(client, namespace, "p");
    await eventually(
      "the parent's Event",
      async () => (await eventsOf(namespace, parent.metadata.uid!)).length || undefined,
    );
    const child = children[0];
    const events = await eventually("the child's Event", async () => {
      const events = await eventsOf(namespace, child.metadata.uid!);
      return events.length ? events : undefined;
    });
    assert.equal(events.length, 1);
    assert.equal(events[0].reason, "Child");
    assert.equal(events[0].message, "about the child");
    assert.deepEqual(events[0].involvedObject, {
      apiVersion: "v1",
      kind: "ConfigMap",
      name: "p-child",
      uid: child.metadata.uid,
      namespace,
    });
    await operator.stop(); // the operator sends what its poster holds before it stops
    const all = await client.request<KubernetesList>({ path: resourcePath(EVENTS, { namespace }) });
    assert.deepEqual(
      all.items.filter((e) => (e.involvedObject as { kind: string }).kind === "Event" || e.reason === "Storm"),
      [],
      "no Event about an Event",
    );
  } finally {
    await operator.stop();
  }
});

/**
 * Inside an operator, everything a handler starts (promises, timers) posts through it. Outside of
 * any operator, Kopf raises LookupError; ours posts nothing and logs a warning once (not asserted).
 */
Deno.test("explicit Events need the operator's context: code started by a handler has it, code outside has not", async () => {
  const { client } = await testCluster();
  const namespace = await freshNamespace(client, "posting");
  const outsider = await createExample(client, namespace, "outsider");
  assert.throws(() => kopf.info(outsider, { reason: "Outside", message: "no operator runs this" }), {
    name: "LookupError",
    message: /kopf\.info\(\) needs a running operator/,
  });

  const registry = new kopf.Registry();
  kopf.on.create("kopfexamples", { registry, labels: { later: "yes" } }, function createFn({ body }) {
    setTimeout(() => kopf.info(body, { reason: "Later", message: "from a timer the handler started" }), 200);
  });
  const operator = await runOperator(registry, namespace);
  try {
    await client.request({
      method: "POST",
      path: resourcePath(KOPFEXAMPLES, { namespace }),
      body: { apiVersion: "kopf.dev/v1", kind: "KopfExample", metadata: { name: "inside", labels: { later: "yes" } } },
    });
    const uid = (await getExample(client, namespace, "inside")).metadata.uid!;
    const events = await eventually("the Event from the timer", async () => {
      const events = await eventsOf(namespace, uid);
      return events.length ? events : undefined;
    });
    assert.deepEqual(events.map((e) => `${e.type} ${e.reason} ${e.message}`), [
      "Normal Later from a timer the handler started",
    ]);
    await operator.stop(); // the operator sends what its poster holds before it stops
    assert.deepEqual(await eventsOf(namespace, outsider.metadata.uid!), [], "nothing posted outside an operator");
  } finally {
    await operator.stop();
  }
});
