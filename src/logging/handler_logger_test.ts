import assert from "node:assert/strict";
import { configure, getLogger, type LogRecord, reset } from "@logtape/logtape";
import { formatRecord } from "./configure.ts";
import { LogTapeHandlerLogger } from "./handler_logger.ts";
import { immediateSink } from "./immediate_sink.ts";

/** Runs `fn` with the `kopf` category sent to a sink that keeps the records. */
async function capturing(fn: () => void): Promise<LogRecord[]> {
  const records: LogRecord[] = [];
  await configure({
    reset: true,
    sinks: { keep: (record: LogRecord) => records.push(record) },
    loggers: [
      { category: ["kopf"], lowestLevel: "trace", sinks: ["keep"] },
      { category: ["logtape", "meta"], lowestLevel: "fatal", sinks: [] },
    ],
  });
  try {
    fn();
  } finally {
    await reset();
  }
  return records;
}

Deno.test("a handler's message is taken as literal text, braces and all", async () => {
  const records = await capturing(() => {
    const logger = new LogTapeHandlerLogger(getLogger(["kopf", "objects"]).with({ object: { name: "kex" } }));
    logger.info("spec is {field: 1} and {{double}}");
    logger.warning("a {placeholder}");
  });
  assert.deepEqual(
    records.map((record) => [record.level, formatRecord(record, "plain", true)]),
    [["info", "[kex] spec is {field: 1} and {{double}}"], ["warning", "[kex] a {placeholder}"]],
  );
});

Deno.test("an exception's message is literal and its error goes below it", async () => {
  const error = new RangeError("boom");
  const records = await capturing(() => {
    const logger = new LogTapeHandlerLogger(getLogger(["kopf", "objects"]));
    logger.exception("failed with {x}", error);
    logger.exception("failed without an error");
  });
  assert.equal(records[0].properties.error, error);
  assert.match(formatRecord(records[0], "plain", false), /^failed with \{x\}\nRangeError: boom\n\s+at /);
  assert.equal(formatRecord(records[1], "plain", false), "failed without an error");
});

Deno.test("an immediate sink is handed LogTape's record itself; another sink a copy of it", async () => {
  const seen: Record<string, LogRecord> = {};
  await configure({
    reset: true,
    sinks: {
      copied: (record: LogRecord) => void (seen.copied = record),
      immediate: immediateSink((record: LogRecord) => void (seen.immediate = record)),
    },
    loggers: [
      // In this order: once a copy is made for one sink, LogTape hands it to the sinks after it too.
      { category: ["kopf"], lowestLevel: "info", sinks: ["immediate", "copied"] },
      { category: ["logtape", "meta"], lowestLevel: "fatal", sinks: [] },
    ],
  });
  try {
    getLogger(["kopf", "test"]).info("{name} is here", { name: "kex" });
  } finally {
    await reset();
  }
  assert.deepEqual(seen.immediate.properties, { name: "kex" });
  assert.deepEqual(seen.copied.properties, { name: "kex" });
  // Were the mark ignored (e.g. by a newer LogTape), both would get the same copy, made once.
  assert.notEqual(seen.immediate, seen.copied);
});
