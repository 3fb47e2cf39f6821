import assert from "node:assert/strict";
import { ApiNotFoundError, ApiUnprocessableError } from "../api/errors.ts";
import type { EventWriter } from "../api/events.ts";
import type { KubernetesObject } from "../model/body.ts";
import { PostingSettings } from "../settings/posting.ts";
import { EventPoster } from "./posting.ts";

const POD = { apiVersion: "v1", kind: "Pod", name: "p", uid: "u1", namespace: "ns" };
const SLOW = { type: "Warning", reason: "Slow", message: "it is slow" };

interface Call {
  verb: "create" | "patch";
  namespace: string;
  name?: string;
  body: Record<string, unknown>;
}

/** Stores Events in memory; each request can be held until released, and made to fail. */
class FakeWriter implements EventWriter {
  readonly calls: Call[] = [];
  readonly stored = new Map<string, Record<string, unknown>>();
  fail: Error | undefined;
  #hold: PromiseWithResolvers<void> | undefined;
  #serial = 0;

  hold(): void {
    this.#hold = Promise.withResolvers();
  }
  release(): void {
    this.#hold?.resolve();
    this.#hold = undefined;
  }

  async create(namespace: string, body: KubernetesObject, signal?: AbortSignal): Promise<KubernetesObject> {
    this.calls.push({ verb: "create", namespace, body: body as Record<string, unknown> });
    await this.#wait(signal);
    const name = `kopf-event-${++this.#serial}`;
    const stored = { ...body, metadata: { ...body.metadata, name } };
    this.stored.set(name, stored);
    return stored;
  }

  async patch(
    namespace: string,
    name: string,
    patch: Record<string, unknown>,
    signal?: AbortSignal,
  ): Promise<KubernetesObject> {
    this.calls.push({ verb: "patch", namespace, name, body: patch });
    await this.#wait(signal);
    const stored = this.stored.get(name);
    if (!stored) throw new ApiNotFoundError(`PATCH events/${name}`, 404, { reason: "NotFound" });
    Object.assign(stored, patch);
    return stored as KubernetesObject;
  }

  async #wait(signal?: AbortSignal): Promise<void> {
    if (this.#hold) {
      const aborted = new Promise<never>((_, reject) => signal?.addEventListener("abort", () => reject(signal.reason)));
      await Promise.race([this.#hold.promise, aborted]);
    }
    if (this.fail) throw this.fail;
  }

  verbs(): string[] {
    return this.calls.map((call) => call.verb);
  }
}

function setup(options: { window?: number; capacity?: number } = {}) {
  const writer = new FakeWriter();
  const settings = new PostingSettings();
  if (options.window !== undefined) settings.aggregationWindow = options.window;
  if (options.capacity !== undefined) settings.aggregationCacheSize = options.capacity;
  const clock = { now: Date.UTC(2026, 0, 1) };
  const poster = new EventPoster(writer, settings, { now: () => clock.now, defaultNamespace: "home" });
  return { writer, settings, clock, poster };
}

Deno.test("the first Event is created with Kopf's fields, without blocking the caller", async () => {
  const { writer, poster } = setup();
  poster.enqueue(POD, { type: "Normal", reason: "Hello", message: "world" });
  assert.equal(writer.calls.length, 0, "enqueue returns before anything is sent");
  await poster.flush();
  assert.deepEqual(writer.verbs(), ["create"]);
  const [call] = writer.calls;
  assert.equal(call.namespace, "ns");
  assert.equal(call.body.reason, "Hello");
  assert.equal(call.body.count, 1);
  assert.deepEqual(call.body.involvedObject, POD);
});

Deno.test("a synchronous burst of identical Events becomes one Event with the count of the burst", async () => {
  const { writer, poster } = setup();
  for (let index = 0; index < 10; index++) poster.enqueue(POD, SLOW);
  await poster.flush();
  assert.deepEqual(writer.verbs(), ["create"]);
  assert.equal(writer.calls[0].body.count, 10);
});

Deno.test("repeats arriving while the Event is being sent become one PATCH of count and lastTimestamp", async () => {
  const { writer, poster, clock } = setup();
  writer.hold();
  poster.enqueue(POD, SLOW);
  await new Promise((resolve) => setTimeout(resolve, 0)); // the create is in flight
  assert.deepEqual(writer.verbs(), ["create"]);
  for (let index = 0; index < 9; index++) {
    clock.now += 1000;
    poster.enqueue(POD, SLOW);
  }
  assert.equal(poster.queued, 1, "the nine repeats wait as one");
  writer.release();
  await poster.flush();
  assert.deepEqual(writer.verbs(), ["create", "patch"]);
  assert.deepEqual(writer.calls[1].body, { count: 10, lastTimestamp: "2026-01-01T00:00:09Z" });
  assert.equal(writer.calls[1].name, "kopf-event-1");
  assert.equal([...writer.stored.values()][0].count, 10);

  clock.now += 1000;
  poster.enqueue(POD, SLOW);
  await poster.flush();
  assert.deepEqual(writer.verbs(), ["create", "patch", "patch"]);
  assert.equal(writer.calls[2].body.count, 11);
});

Deno.test("different objects, types, reasons or messages make different Events", async () => {
  const { writer, poster } = setup();
  poster.enqueue(POD, SLOW);
  poster.enqueue({ ...POD, uid: "u2", name: "q" }, SLOW);
  poster.enqueue(POD, { ...SLOW, type: "Normal" });
  poster.enqueue(POD, { ...SLOW, reason: "Fast" });
  poster.enqueue(POD, { ...SLOW, message: "other" });
  await poster.flush();
  assert.deepEqual(writer.verbs(), ["create", "create", "create", "create", "create"]);
});

Deno.test("after the window since the last occurrence, an identical Event is created anew", async () => {
  const { writer, poster, clock } = setup();
  poster.enqueue(POD, SLOW);
  await poster.flush();
  clock.now += 599_000;
  poster.enqueue(POD, SLOW);
  await poster.flush();
  clock.now += 599_000; // within 10 minutes of the previous occurrence
  poster.enqueue(POD, SLOW);
  await poster.flush();
  clock.now += 600_001;
  poster.enqueue(POD, SLOW);
  await poster.flush();
  assert.deepEqual(writer.verbs(), ["create", "patch", "patch", "create"]);
  assert.equal(writer.calls[3].body.count, 1);
});

Deno.test("aggregation off (window 0): every occurrence is created, as Kopf does", async () => {
  const { writer, poster } = setup({ window: 0 });
  poster.enqueue(POD, SLOW);
  poster.enqueue(POD, SLOW);
  await poster.flush();
  poster.enqueue(POD, SLOW);
  await poster.flush();
  assert.deepEqual(writer.verbs(), ["create", "create", "create"]);
  assert.deepEqual(writer.calls.map((call) => call.body.count), [1, 1, 1]);
});

Deno.test("an expired Event (404 on PATCH) is created anew", async () => {
  const { writer, poster } = setup();
  poster.enqueue(POD, SLOW);
  await poster.flush();
  writer.stored.clear(); // the API server's event TTL passed
  poster.enqueue(POD, SLOW);
  await poster.flush();
  assert.deepEqual(writer.verbs(), ["create", "patch", "create"]);
  assert.equal(writer.calls[2].body.count, 1);
  poster.enqueue(POD, SLOW);
  await poster.flush();
  assert.equal(writer.calls[3].name, "kopf-event-2", "the new Event is the one updated afterwards");
});

Deno.test("failures are logged and the Event dropped; later Events are still sent", async () => {
  const { writer, poster } = setup();
  writer.fail = new ApiUnprocessableError("POST events", 422, { message: "reason: Required value" });
  poster.enqueue(POD, { type: "Normal", reason: "", message: "no reason" });
  await poster.flush();
  writer.fail = undefined;
  poster.enqueue(POD, SLOW);
  await poster.flush();
  assert.deepEqual(writer.verbs(), ["create", "create"]);
  assert.equal(writer.stored.size, 1);
});

Deno.test("Events about Events are dropped; cluster-scoped objects use the default namespace", async () => {
  const { writer, poster } = setup();
  poster.enqueue({ apiVersion: "v1", kind: "Event", name: "e", uid: "ue", namespace: "ns" }, SLOW);
  poster.enqueue({ apiVersion: "v1", kind: "Node", name: "n1", uid: "un" }, SLOW);
  await poster.flush();
  assert.deepEqual(writer.verbs(), ["create"]);
  assert.equal(writer.calls[0].namespace, "home");
  assert.deepEqual(writer.calls[0].body.involvedObject, {
    apiVersion: "v1",
    kind: "Node",
    name: "n1",
    uid: "un",
    namespace: "home",
  });
});

Deno.test("long messages are truncated before sending and before aggregating", async () => {
  const { writer, poster } = setup();
  poster.enqueue(POD, { ...SLOW, message: "a".repeat(600) + "b".repeat(600) });
  poster.enqueue(POD, { ...SLOW, message: "a".repeat(600) + "c" + "b".repeat(600) }); // the same once cut
  await poster.flush();
  assert.deepEqual(writer.verbs(), ["create"]);
  assert.equal(writer.calls[0].body.message, "a".repeat(511) + "..." + "b".repeat(510));
  assert.equal(writer.calls[0].body.count, 2);
});

Deno.test("the aggregation memory is bounded by aggregationCacheSize", async () => {
  const { writer, poster } = setup({ capacity: 2 });
  for (const message of ["m1", "m2", "m3", "m1"]) {
    poster.enqueue(POD, { ...SLOW, message });
    await poster.flush();
  }
  assert.deepEqual(writer.verbs(), ["create", "create", "create", "create"], "m1 was forgotten");
  poster.enqueue(POD, { ...SLOW, message: "m3" });
  await poster.flush();
  assert.equal(writer.verbs().at(-1), "patch");
});

Deno.test("close() sends what is queued, then refuses new Events", async () => {
  const { writer, poster } = setup();
  poster.enqueue(POD, SLOW);
  poster.enqueue(POD, { ...SLOW, reason: "Other" });
  await poster.close();
  assert.deepEqual(writer.verbs(), ["create", "create"]);
  poster.enqueue(POD, { ...SLOW, reason: "Late" });
  await poster.flush();
  assert.equal(writer.calls.length, 2);
});

Deno.test("close() abandons what cannot be sent within its timeout", async () => {
  const { writer, poster } = setup();
  writer.hold();
  poster.enqueue(POD, SLOW);
  poster.enqueue(POD, { ...SLOW, reason: "Other" });
  const started = performance.now();
  await poster.close(0.2);
  assert.ok(performance.now() - started < 2000);
  assert.ok(poster.idle);
  assert.deepEqual(writer.verbs(), ["create"], "the second was dropped, the first cancelled");
});
