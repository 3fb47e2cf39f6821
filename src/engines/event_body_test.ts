import assert from "node:assert/strict";
import { PostingSettings } from "../settings/posting.ts";
import { buildEventBody, eventNamespace, formatMicroTime, formatTime, truncateMessage } from "./event_body.ts";

const bytes = (text: string) => new TextEncoder().encode(text).length;

Deno.test("messages up to 1024 characters are kept; longer ones are cut as Kopf cuts them", () => {
  assert.equal(truncateMessage(""), "");
  const exact = "x".repeat(1024);
  assert.equal(truncateMessage(exact), exact);
  const long = Array.from({ length: 3000 }, (_, index) => String.fromCharCode(97 + index % 26)).join("");
  const cut = truncateMessage(long);
  assert.equal(cut.length, 1024);
  assert.equal(cut, long.slice(0, 511) + "..." + long.slice(-510));
});

Deno.test("multi-byte messages are cut to 1024 UTF-8 bytes on character boundaries", () => {
  const umlauts = "ä".repeat(1024); // 1024 characters, 2048 bytes: the API server refuses it
  const cut = truncateMessage(umlauts);
  assert.ok(bytes(cut) <= 1024, `${bytes(cut)} bytes`);
  assert.equal(cut, "ä".repeat(255) + "..." + "ä".repeat(255));

  const emoji = "🙂".repeat(400); // surrogate pairs, 4 bytes each
  const cutEmoji = truncateMessage(emoji);
  assert.ok(bytes(cutEmoji) <= 1024);
  assert.ok(cutEmoji.startsWith("🙂") && cutEmoji.endsWith("🙂"));
  assert.equal(Array.from(cutEmoji.replace("...", "")).every((char) => char === "🙂"), true, "no half pairs");
});

Deno.test("timestamps: seconds for first/lastTimestamp, exactly six fractional digits for eventTime", () => {
  const ms = Date.UTC(2026, 0, 2, 3, 4, 5, 678);
  assert.equal(formatTime(ms), "2026-01-02T03:04:05Z");
  assert.equal(formatMicroTime(ms), "2026-01-02T03:04:05.678000Z");
});

Deno.test("Events about cluster-scoped objects go to the default namespace of the credentials, else default", () => {
  assert.equal(eventNamespace({ namespace: "ns1" }, "mine"), "ns1");
  assert.equal(eventNamespace({ kind: "Node" }, "mine"), "mine");
  assert.equal(eventNamespace({ kind: "Node" }), "default");
});

Deno.test("the Event body has Kopf's fields", () => {
  const settings = new PostingSettings();
  const first = Date.UTC(2026, 0, 2, 3, 4, 5, 678);
  const body = buildEventBody({
    ref: { apiVersion: "v1", kind: "Node", name: "n1", uid: "u1" },
    namespace: "default",
    type: "Normal",
    reason: "Hello",
    message: "world",
    count: 3,
    first,
    last: first + 60_000,
  }, settings);
  assert.deepEqual(body, {
    apiVersion: "v1",
    kind: "Event",
    metadata: { namespace: "default", generateName: "kopf-event-" },
    action: "Action?",
    type: "Normal",
    reason: "Hello",
    message: "world",
    reportingComponent: "kopf",
    reportingInstance: "dev",
    source: { component: "kopf" },
    involvedObject: { apiVersion: "v1", kind: "Node", name: "n1", uid: "u1", namespace: "default" },
    firstTimestamp: "2026-01-02T03:04:05Z",
    lastTimestamp: "2026-01-02T03:05:05Z",
    eventTime: "2026-01-02T03:04:05.678000Z",
    count: 3,
  });
});
