import assert from "node:assert/strict";
import { configure, type LogLevel, type LogRecord, reset } from "@logtape/logtape";
import type { EventWriter } from "../api/events.ts";
import { ObjectLogger } from "../logging/object_logger.ts";
import type { KubernetesObject } from "../model/body.ts";
import { PostingSettings } from "../settings/posting.ts";
import { EventPoster, postsLogRecords } from "./posting.ts";
import { runWithPoster } from "./posting_context.ts";
import { eventTypeOfLevel, POSTING_SINK_ID, postingSink, postLogRecord } from "./posting_sink.ts";

const BODY: KubernetesObject = {
  apiVersion: "kopf.dev/v1",
  kind: "KopfExample",
  metadata: { name: "kex1", namespace: "ns1", uid: "uid-1" },
};
const REF = { apiVersion: "kopf.dev/v1", kind: "KopfExample", name: "kex1", uid: "uid-1", namespace: "ns1" };

function recorder(): { created: Record<string, unknown>[]; writer: EventWriter } {
  const created: Record<string, unknown>[] = [];
  const writer: EventWriter = {
    create: (_namespace, body) => {
      created.push(body as Record<string, unknown>);
      return Promise.resolve({ ...body, metadata: { ...body.metadata, name: `e${created.length}` } });
    },
    patch: () => Promise.reject(new Error("unexpected patch")),
  };
  return { created, writer };
}

function record(level: LogLevel, message: string, properties: Record<string, unknown> = { object: REF }): LogRecord {
  return {
    category: ["kopf", "objects"],
    level,
    message: [message],
    rawMessage: message,
    timestamp: Date.now(),
    properties,
  };
}

function loggersOn(): PostingSettings {
  const settings = new PostingSettings();
  settings.loggers = true;
  return settings;
}

/** Sends the objects' records to the posting sink alone (undone by LogTape's `reset()`). */
async function postObjectRecords(): Promise<void> {
  await configure({
    sinks: { [POSTING_SINK_ID]: postingSink },
    loggers: [
      { category: ["kopf", "objects"], lowestLevel: "trace", sinks: [POSTING_SINK_ID] },
      { category: ["logtape", "meta"], lowestLevel: "warning", sinks: [] },
    ],
    reset: true,
  });
}

Deno.test("log levels map to Kopf's Event types", () => {
  const types = (["trace", "debug", "info", "warning", "error", "fatal"] as const).map(eventTypeOfLevel);
  assert.deepEqual(types, ["Debug", "Debug", "Normal", "Warning", "Error", "Fatal"]);
});

Deno.test("object records at or above posting.level become Logging Events when loggers are on", async () => {
  const { created, writer } = recorder();
  const poster = new EventPoster(writer, loggersOn());
  assert.equal(postLogRecord(poster, record("debug", "not posted")), false);
  assert.equal(postLogRecord(poster, record("info", "hello")), true);
  assert.equal(postLogRecord(poster, record("error", "failed", { object: REF, error: new Error("boom") })), true);
  await poster.close();
  assert.equal(created.length, 2);
  assert.deepEqual(
    { type: created[0].type, reason: created[0].reason, message: created[0].message },
    { type: "Normal", reason: "Logging", message: "hello" },
  );
  assert.deepEqual(created[0].involvedObject, REF);
  assert.equal(created[1].type, "Error");
  assert.match(created[1].message as string, /^failed\nError: boom\n\s+at /, "with the stack, as Kopf adds tracebacks");
});

Deno.test("nothing is posted when loggers are off, posting is disabled, the record is local or not about an object", async () => {
  const { writer } = recorder();
  const off = new EventPoster(writer, new PostingSettings());
  assert.equal(postLogRecord(off, record("error", "loggers are off by default")), false);

  const disabled = loggersOn();
  disabled.enabled = false;
  const closed = new EventPoster(writer, disabled);
  assert.equal(postLogRecord(closed, record("error", "disabled")), false);

  const poster = new EventPoster(writer, loggersOn());
  assert.equal(postLogRecord(poster, record("error", "local", { object: REF, local: true })), false);
  assert.equal(postLogRecord(poster, record("error", "no object", {})), false);
  assert.equal(postLogRecord(poster, record("error", "empty object", { object: {} })), false);
  for (const each of [off, closed, poster]) await each.close();
});

Deno.test("the sink asks the open posters first: their settings read live, a closed poster no more", async () => {
  const { created, writer } = recorder();
  const settings = new PostingSettings();
  const poster = new EventPoster(writer, settings);
  await postObjectRecords();
  try {
    assert.equal(postsLogRecords(), false, "loggers are off by default");
    runWithPoster(poster, () => new ObjectLogger(BODY).info("not posted: loggers off"));
    settings.loggers = true; // e.g. by a startup handler, after the poster was made
    assert.equal(postsLogRecords(), true);
    runWithPoster(poster, () => new ObjectLogger(BODY).info("posted: loggers on"));
    await poster.close();
    assert.equal(postsLogRecords(), false, "a closed poster posts nothing");
  } finally {
    await reset();
  }
  assert.deepEqual(created.map(({ message }) => message), ["posted: loggers on"]);
});

Deno.test("the sink posts the records of an ObjectLogger through the poster of the running operator", async () => {
  const { created, writer } = recorder();
  const poster = new EventPoster(writer, loggersOn());
  await postObjectRecords();
  try {
    new ObjectLogger(BODY).info("outside of the operator: not posted");
    await runWithPoster(poster, async () => {
      await Promise.resolve();
      const logger = new ObjectLogger(BODY);
      logger.debug("below the level");
      logger.info("Handler 'createFn' succeeded.");
      logger.warning("a {brace} stays literal");
    });
    await poster.close();
  } finally {
    await reset();
  }
  assert.deepEqual(created.map(({ type, reason, message }) => `${type} ${reason} ${message}`), [
    "Normal Logging Handler 'createFn' succeeded.",
    "Warning Logging a {brace} stays literal",
  ]);
});
