import assert from "node:assert/strict";
import { configure, getLogger, type LogRecord, reset } from "@logtape/logtape";
import { configureDefaultLogging, configureLogging, formatRecord, localRecordShown } from "./configure.ts";

function record(message: unknown[], properties: Record<string, unknown>): LogRecord {
  return {
    category: ["kopf", "test"],
    level: "error",
    message,
    rawMessage: "",
    timestamp: Date.UTC(2026, 0, 1),
    properties,
  };
}

Deno.test("a value shown in the message is not printed again below it", () => {
  const line = formatRecord(record(["Keep-alive failed: ", "HTTP 503", ""], { error: "HTTP 503" }), "plain", false);
  assert.equal(line, "Keep-alive failed: HTTP 503");
});

Deno.test("an exception's stack goes below the message", () => {
  const error = new RangeError("boom");
  const line = formatRecord(record(["Handler failed: ", error, ""], { error }), "plain", false);
  assert.match(line, /^Handler failed: boom\nRangeError: boom\n\s+at /);
});

Deno.test("a value the message does not show is printed below it", () => {
  const line = formatRecord(record(["Something failed."], { error: "HTTP 503" }), "plain", false);
  assert.equal(line, "Something failed.\nHTTP 503");
});

Deno.test("configurations asked for at the same time take effect one after another; the default is configured once", async () => {
  await reset();
  try {
    const defaults = await Promise.all([1, 2, 3].map(() => configureDefaultLogging({ write: () => {} })));
    assert.deepEqual(defaults, [true, false, false]);
    const seen: string[] = [];
    await Promise.all(
      ["first", "last"].map((name) =>
        configureLogging({ format: "plain", write: (line) => seen.push(`${name}: ${line}`) })
      ),
    );
    getLogger(["kopf", "test"]).info("hello");
    assert.deepEqual(seen, ["last: hello"]);
  } finally {
    await reset();
  }
});

Deno.test("a record never posted is made only at the console's level, unless the program configured LogTape", async () => {
  await reset();
  try {
    await configureLogging({ level: "info", write: () => {} });
    assert.equal(localRecordShown("debug"), false, "below the console's level: no sink would show it");
    assert.equal(localRecordShown("warning"), true);
    await configureLogging({ level: "debug", write: () => {} });
    assert.equal(localRecordShown("debug"), true, "--verbose shows it");
    await configure({ reset: true, sinks: {}, loggers: [{ category: ["logtape", "meta"], sinks: [] }] });
    assert.equal(localRecordShown("debug"), true, "the program's own configuration may show anything");
  } finally {
    await reset();
  }
});
