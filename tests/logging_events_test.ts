/**
 * Log lines as Kubernetes Events, through a running operator, and failures among them:
 * off by default since Kopf 1.44, on with `settings.posting.loggers`.
 */

import assert from "node:assert/strict";
import { reset } from "@logtape/logtape";
import * as kopf from "@kopf/kopf";
import { postingSink } from "@kopf/kopf/advanced";
import type { KubernetesObject } from "../src/model/body.ts";
import { createExample, freshNamespace, getExample, testCluster } from "./support/cluster.ts";
import { eventually } from "./support/eventually.ts";
import { runOperator } from "./support/operator.ts";

interface Event {
  type: string;
  reason: string;
  message: string;
  involvedObject: { uid?: string };
}

async function eventsOf(namespace: string, uid: string): Promise<Event[]> {
  const { client } = await testCluster();
  const list = await client.request<{ items: Event[] }>({ path: `/api/v1/namespaces/${namespace}/events` });
  return list.items.filter((event) => event.involvedObject.uid === uid);
}

/** Runs `body` with the posting sink installed (as the CLI does) and the console silent. */
async function withPostingSink(body: () => Promise<void>): Promise<void> {
  await kopf.configureLogging({ write: () => {}, postingSink });
  try {
    await body();
  } finally {
    await reset();
  }
}

Deno.test("with posting.loggers on, a handler's logger.info and the framework's lines become Events", async () => {
  await withPostingSink(async () => {
    const { client } = await testCluster();
    const namespace = await freshNamespace(client, "log-events");
    const registry = new kopf.Registry();
    kopf.on.create("kopfexamples", { registry }, function createFn({ logger }) {
      logger.info("hello");
    });
    kopf.on.event("kopfexamples", { registry }, function eventFn({ logger }) {
      logger.info("from an event handler");
    });
    const settings = new kopf.Settings();
    settings.posting.loggers = true;
    const operator = await runOperator(registry, namespace, { settings });
    try {
      const created: KubernetesObject = await createExample(client, namespace, "l");
      const uid = created.metadata.uid!;
      const events = await eventually("three Events", async () => {
        const events = await eventsOf(namespace, uid);
        return events.length >= 3 ? events : undefined;
      });
      await new Promise((resolve) => setTimeout(resolve, 1000));
      const messages = (await eventsOf(namespace, uid)).map((event) =>
        `${event.type} ${event.reason} ${event.message}`
      );
      assert.deepEqual(messages.sort(), [
        "Normal Logging Creation is processed: 1 succeeded; 0 failed.",
        "Normal Logging Handler 'createFn' succeeded.",
        "Normal Logging hello",
      ]);
      assert.ok(events.length >= 3);
    } finally {
      await operator.stop();
    }
  });
});

Deno.test("a temporary failure is posted as an Error Event when posting.loggers is on", async () => {
  await withPostingSink(async () => {
    const { client } = await testCluster();
    const namespace = await freshNamespace(client, "error-events");
    const registry = new kopf.Registry();
    kopf.on.create("kopfexamples", { registry }, function createFn({ retry }) {
      if (retry === 0) throw new kopf.TemporaryError("later", { delay: 1 });
    });
    const settings = new kopf.Settings();
    settings.posting.loggers = true;
    const operator = await runOperator(registry, namespace, { settings });
    try {
      const uid = (await createExample(client, namespace, "t")).metadata.uid!;
      const events = await eventually("the Error Event", async () => {
        const events = await eventsOf(namespace, uid);
        return events.some((event) => event.type === "Error") ? events : undefined;
      });
      const error = events.find((event) => event.type === "Error")!;
      assert.equal(error.reason, "Logging");
      assert.equal(error.message, "Handler 'createFn' failed temporarily: later");
    } finally {
      await operator.stop();
    }
  });
});

Deno.test("by default no log line is posted as an Event (Kopf 1.44)", async () => {
  await withPostingSink(async () => {
    const { client } = await testCluster();
    const namespace = await freshNamespace(client, "no-log-events");
    const registry = new kopf.Registry();
    kopf.on.create("kopfexamples", { registry }, function createFn({ logger }) {
      logger.info("hello");
      return "done";
    });
    const operator = await runOperator(registry, namespace);
    try {
      const uid = (await createExample(client, namespace, "d")).metadata.uid!;
      await eventually("the creation", async () => {
        const body = await getExample(client, namespace, "d");
        return (body.status as Record<string, unknown> | undefined)?.createFn;
      });
      await new Promise((resolve) => setTimeout(resolve, 1000));
      assert.deepEqual(await eventsOf(namespace, uid), []);
    } finally {
      await operator.stop();
    }
  });
});

Deno.test("with posting.loggers on, an arbitrary exception is posted as an Error Event with its stack", async () => {
  await withPostingSink(async () => {
    const { client } = await testCluster();
    const namespace = await freshNamespace(client, "exception-events");
    const registry = new kopf.Registry();
    kopf.on.create("kopfexamples", { registry, backoff: 1 }, function createFn({ retry }) {
      if (retry === 0) throw new RangeError("boom");
    });
    const settings = new kopf.Settings();
    settings.posting.loggers = true;
    const operator = await runOperator(registry, namespace, { settings });
    try {
      const uid = (await createExample(client, namespace, "x")).metadata.uid!;
      const events = await eventually("the Error Event", async () => {
        const events = await eventsOf(namespace, uid);
        return events.some((event) => event.type === "Error") ? events : undefined;
      });
      const error = events.find((event) => event.type === "Error")!;
      assert.equal(error.reason, "Logging");
      assert.ok(
        error.message.startsWith("Handler 'createFn' failed with an exception. Will retry in 1 s."),
        error.message,
      );
      assert.match(error.message, /RangeError: boom\n\s+at /, "the stack is in the message");
      assert.ok(error.message.length <= 1024);
    } finally {
      await operator.stop();
    }
  });
});

Deno.test("an on.event handler's failure is logged locally, never posted, even with posting.loggers on", async () => {
  await withPostingSink(async () => {
    const { client } = await testCluster();
    const namespace = await freshNamespace(client, "event-failure");
    const registry = new kopf.Registry();
    let calls = 0;
    kopf.on.event("kopfexamples", { registry }, function failingFn() {
      calls++;
      throw new Error("boom");
    });
    kopf.on.create("kopfexamples", { registry }, function createFn({ logger }) {
      logger.info("posted");
    });
    const settings = new kopf.Settings();
    settings.posting.loggers = true;
    const operator = await runOperator(registry, namespace, { settings });
    try {
      const uid = (await createExample(client, namespace, "e")).metadata.uid!;
      await eventually("the create handler's Event", async () => {
        const events = await eventsOf(namespace, uid);
        return events.some((event) => event.message === "posted") || undefined;
      });
      await eventually("the event handler to be called", () => calls >= 1 || undefined);
      await new Promise((resolve) => setTimeout(resolve, 1000));
      const messages = (await eventsOf(namespace, uid)).map((event) => event.message);
      assert.deepEqual(messages.filter((message) => message.includes("failingFn")), [], messages.join("\n"));
    } finally {
      await operator.stop();
    }
  });
});

Deno.test("posting.level warning: no Events for successes, but failures are posted; explicit info() is held back too", async () => {
  await withPostingSink(async () => {
    const { client } = await testCluster();
    const namespace = await freshNamespace(client, "level-events");
    const registry = new kopf.Registry();
    kopf.on.create("kopfexamples", { registry }, function createFn({ body, retry }) {
      kopf.info(body, { reason: "Hello", message: `attempt ${retry}` });
      if (retry === 0) throw new kopf.TemporaryError("later", { delay: 1 });
      return "done";
    });
    const settings = new kopf.Settings();
    settings.posting.loggers = true;
    settings.posting.level = "warning";
    const operator = await runOperator(registry, namespace, { settings });
    try {
      const uid = (await createExample(client, namespace, "lv")).metadata.uid!;
      await eventually("the creation", async () => {
        const body = await getExample(client, namespace, "lv");
        return (body.status as Record<string, unknown> | undefined)?.createFn;
      });
      await new Promise((resolve) => setTimeout(resolve, 1000));
      const messages = (await eventsOf(namespace, uid)).map((event) => `${event.type} ${event.message}`);
      assert.deepEqual(messages, ["Error Handler 'createFn' failed temporarily: later"]);
    } finally {
      await operator.stop();
    }
  });
});
