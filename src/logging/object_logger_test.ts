import assert from "node:assert/strict";
import { configure, type LogRecord, reset, type Sink } from "@logtape/logtape";
import { configureLogging, emitObjectRecord } from "./configure.ts";
import { immediateSink } from "./immediate_sink.ts";
import { ObjectLogger } from "./object_logger.ts";

const BODY = { apiVersion: "kopf.dev/v1", kind: "KopfExample", metadata: { name: "kex", namespace: "ns", uid: "u1" } };
const REF = { apiVersion: "kopf.dev/v1", kind: "KopfExample", name: "kex", uid: "u1", namespace: "ns" };

/** Logs a line of every kind through an object's logger, and one through a logger whose lines are never posted. */
function logLines(): void {
  const logger = new ObjectLogger(BODY);
  logger.debug("a debug line");
  logger.info("spec is {field: 1}");
  logger.warn("a warning");
  logger.exception("it failed", new RangeError("boom"));
  new ObjectLogger(BODY, { local: true }).info("never posted");
}

/** What a sink sees of a record: its level, category, message, properties, and the error's message. */
function shape(record: LogRecord): unknown[] {
  const { error, ...properties } = record.properties;
  return [record.level, record.category.join("."), record.message, properties, (error as Error | undefined)?.message];
}

Deno.test("under the framework's configuration, object records reach its sinks as LogTape would hand them over", async () => {
  const seen: Record<string, unknown[][]> = {};
  for (const direct of [true, false]) {
    const lines: string[] = [];
    const posted: LogRecord[] = [];
    // Without the mark of a sink that reads records at once, the configuration goes through LogTape.
    const keep = (record: LogRecord) => void posted.push(record);
    const posting: Sink = direct ? immediateSink(keep) : keep;
    await configureLogging({ level: "info", format: "plain", write: (line) => lines.push(line), postingSink: posting });
    try {
      logLines();
    } finally {
      await reset();
    }
    assert.deepEqual(lines, [
      "[ns/kex] spec is {field: 1}",
      "[ns/kex] a warning",
      `[ns/kex] it failed\n${(posted[3].properties.error as Error).stack}`,
      "[ns/kex] never posted",
    ]);
    seen[String(direct)] = posted.map(shape);
    for (const record of posted) assert.ok(record.timestamp > 0 && Array.isArray(record.rawMessage));
  }
  const expected = [
    ["debug", "kopf.objects", ["a debug line"], { object: REF }, undefined],
    ["info", "kopf.objects", ["spec is {field: 1}"], { object: REF }, undefined],
    ["warning", "kopf.objects", ["a warning"], { object: REF }, undefined],
    ["error", "kopf.objects", ["it failed"], { object: REF }, "boom"],
    ["info", "kopf.objects", ["never posted"], { object: REF, local: true }, undefined],
  ];
  assert.deepEqual(seen.true, expected, "straight to the sinks");
  assert.deepEqual(seen.false, expected, "through LogTape");
});

Deno.test("under the program's own LogTape configuration, object records go through LogTape to its sinks", async () => {
  const records: LogRecord[] = [];
  await configureLogging({ level: "debug", write: () => assert.fail("the framework's console is not configured now") });
  await configure({
    reset: true,
    sinks: { keep: (record: LogRecord) => records.push(record) },
    loggers: [
      { category: ["kopf"], lowestLevel: "warning", sinks: ["keep"] },
      { category: ["logtape", "meta"], lowestLevel: "fatal", sinks: [] },
    ],
  });
  try {
    logLines();
  } finally {
    await reset();
  }
  assert.deepEqual(records.map((record) => [record.level, record.message]), [
    ["warning", ["a warning"]],
    ["error", ["it failed"]],
  ]);
});

Deno.test("a sink that throws does not keep the record from the others, and is reported as LogTape reports it", async () => {
  const lines: string[] = [];
  const failing = immediateSink((_record: LogRecord) => {
    throw new Error("the sink is broken");
  });
  await configureLogging({ level: "info", format: "plain", write: (line) => lines.push(line), postingSink: failing });
  try {
    new ObjectLogger(BODY).info("still shown");
  } finally {
    await reset();
  }
  assert.equal(lines[0], "[ns/kex] still shown");
  assert.match(lines[1], /^Failed to emit a log record to sink [\s\S]*: the sink is broken\n/);
});

Deno.test("records skip LogTape only under the framework's configuration with sinks that read them at once", async () => {
  const straight = () => emitObjectRecord("trace", "probe", { object: REF, local: true });
  try {
    await configureLogging({ level: "info", write: () => {}, postingSink: immediateSink(() => {}) });
    assert.equal(straight(), true, "the framework's configuration, its posting sink reading records at once");
    await configureLogging({ level: "info", write: () => {} });
    assert.equal(straight(), true, "the framework's configuration without a posting sink");
    await configureLogging({ level: "info", write: () => {}, postingSink: () => {} });
    assert.equal(straight(), false, "a posting sink that may keep records gets LogTape's copies");
    await configure({ reset: true, sinks: {}, loggers: [{ category: ["logtape", "meta"], sinks: [] }] });
    assert.equal(straight(), false, "the program's own configuration");
  } finally {
    await reset();
  }
  assert.equal(straight(), false, "no configuration at all");
});
