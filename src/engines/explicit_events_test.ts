import assert from "node:assert/strict";
import type { EventWriter } from "../api/events.ts";
import type { KubernetesObject } from "../model/body.ts";
import { PostingSettings } from "../settings/posting.ts";
import { event, exception, info, warn } from "./explicit_events.ts";
import { EventPoster } from "./posting.ts";
import { currentPoster, runWithPoster } from "./posting_context.ts";

const BODY: KubernetesObject = {
  apiVersion: "kopf.dev/v1",
  kind: "KopfExample",
  metadata: { name: "kex1", namespace: "ns1", uid: "uid-1" },
};

/** Records the Events a poster creates. */
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

async function postWith(settings: PostingSettings, fn: () => void): Promise<Record<string, unknown>[]> {
  const { created, writer } = recorder();
  const poster = new EventPoster(writer, settings);
  await runWithPoster(poster, async () => {
    await Promise.resolve(); // the context survives awaits
    fn();
  });
  await poster.close();
  return created.map(({ type, reason, message }) => ({ type, reason, message }));
}

Deno.test("event, info, warn and exception post Events of their types", async () => {
  class MyError extends Error {}
  const events = await postWith(new PostingSettings(), () => {
    event(BODY, { type: "SomeType", reason: "SomeReason", message: "m" });
    info(BODY, { reason: "Hello", message: "world" });
    warn(BODY, { reason: "Careful" });
    exception(BODY, { message: "Oops:", error: new RangeError("too far") });
    exception(BODY, { error: new MyError("mine") });
    exception(BODY, { reason: "Custom", message: "only a message" });
  });
  assert.deepEqual(events, [
    { type: "SomeType", reason: "SomeReason", message: "m" },
    { type: "Normal", reason: "Hello", message: "world" },
    { type: "Warning", reason: "Careful", message: "" },
    { type: "Error", reason: "RangeError", message: "Oops: too far" },
    { type: "Error", reason: "MyError", message: "mine" },
    { type: "Error", reason: "Custom", message: "only a message" },
  ]);
});

Deno.test("the functions accept many objects, each gets its own Event", async () => {
  const { created, writer } = recorder();
  const poster = new EventPoster(writer);
  const other = { ...BODY, metadata: { ...BODY.metadata, name: "kex2", uid: "uid-2" } };
  runWithPoster(poster, () => info([BODY, [other]], { reason: "Both" }));
  await poster.close();
  assert.deepEqual(created.map((body) => (body.involvedObject as { uid: string }).uid), ["uid-1", "uid-2"]);
});

Deno.test("posting.enabled = false disables all of them, warn() included", async () => {
  const settings = new PostingSettings();
  settings.enabled = false;
  const events = await postWith(settings, () => {
    event(BODY, { type: "Normal", reason: "R" });
    info(BODY, { reason: "R" });
    warn(BODY, { reason: "R" });
    exception(BODY, { error: new Error("e") });
  });
  assert.deepEqual(events, []);
});

Deno.test("posting.level filters by type: Normal=info, Warning=warning, Error=error; other types pass", async () => {
  const settings = new PostingSettings();
  settings.level = "warning";
  const events = await postWith(settings, () => {
    info(BODY, { reason: "Info" });
    event(BODY, { type: "Normal", reason: "NormalEvent" });
    warn(BODY, { reason: "Warn" });
    exception(BODY, { reason: "Exc" });
    event(BODY, { type: "Custom", reason: "CustomEvent" });
  });
  assert.deepEqual(events.map((e) => e.reason), ["Warn", "Exc", "CustomEvent"]);

  settings.level = "fatal";
  const none = await postWith(settings, () => {
    warn(BODY, { reason: "Warn" });
    exception(BODY, { reason: "Exc" });
  });
  assert.deepEqual(none, []);
});

Deno.test("outside an operator every function throws a LookupError that says where to call it from", () => {
  assert.equal(currentPoster(), undefined);
  const calls: [string, () => void][] = [
    ["info", () => info(BODY, { reason: "Nowhere" })],
    ["warn", () => warn(BODY, { reason: "Nowhere" })],
    ["exception", () => exception(BODY, { error: new Error("x") })],
    ["event", () => event(BODY, { type: "Normal", reason: "Nowhere" })],
  ];
  for (const [name, call] of calls) {
    assert.throws(call, { name: "LookupError", message: new RegExp(`kopf\\.${name}\\(\\) needs a running operator`) });
  }
});
