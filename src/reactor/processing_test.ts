/**
 * The cycle without a cluster: a scripted API server that keeps one object and applies the
 * cycle's merge-patches and finalizer JSON-patches to it, so each test reads what a cycle wrote
 * and what it asked for next.
 */

import assert from "node:assert/strict";
import * as kopf from "../../mod.ts";
import { KOPFEXAMPLES } from "../../tests/support/cluster.ts";
import { FakeApi, json, mergePatch } from "../../tests/support/fake_api.ts";
import type { JsonObject, KubernetesObject } from "../model/body.ts";
import type { Resource } from "../model/resource.ts";
import type { ChangeHandler, EventHandler } from "../handling/handlers.ts";
import { allAtOnce } from "../handling/lifecycles.ts";
import { Settings } from "../settings/settings.ts";
import { sensitiveFieldsOf } from "../state/sensitive.ts";
import { type CycleDeps, newMemory, type ObjectMemory, type ObjectWork, processObject } from "./processing.ts";
import { takeOwnEcho } from "./own_echoes.ts";

const FINALIZER = "kopf.zalando.org/KopfFinalizerMarker";
const LAST_HANDLED = "kopf.zalando.org/last-handled-configuration";

// Without a status subresource: each cycle's patch is one request, which the tests count.
const EXAMPLES: Resource = { ...KOPFEXAMPLES, subresources: [] };
const SECRETS: Resource = { ...EXAMPLES, group: "", plural: "secrets", kind: "Secret", singular: "secret" };

interface Write {
  type: string;
  body: unknown;
}

/** A server holding one object: merge-patches are merged into it, finalizer JSON-patches applied. */
class OneObjectServer implements AsyncDisposable {
  object: KubernetesObject;
  readonly writes: Write[] = [];
  readonly api: FakeApi;
  #version = 1;

  constructor(object: KubernetesObject) {
    this.object = structuredClone(object);
    this.api = new FakeApi(async (request) => {
      const type = request.headers.get("content-type") ?? "";
      const body = await request.json();
      this.writes.push({ type, body });
      if (type.includes("merge")) this.object = mergePatch(this.object, body) as KubernetesObject;
      else this.#applyJsonPatch(body);
      this.object.metadata.resourceVersion = String(++this.#version);
      return json(this.object);
    });
  }

  #applyJsonPatch(operations: { op: string; path: string; value?: unknown }[]): void {
    const metadata = this.object.metadata;
    for (const { op, path, value } of operations) {
      if (op === "add" && path.endsWith("/finalizers")) metadata.finalizers = value as string[];
      else if (op === "add") (metadata.finalizers ??= []).push(value as string);
      else if (op === "remove") metadata.finalizers?.splice(Number(path.split("/").pop()), 1);
    }
  }

  [Symbol.asyncDispose](): Promise<void> {
    return this.api[Symbol.asyncDispose]();
  }
}

function handlersOf(register: (registry: kopf.Registry) => void): ChangeHandler[] {
  const registry = new kopf.Registry();
  register(registry);
  return registry.handlers.filter((handler): handler is ChangeHandler => handler.kind === "change");
}

function depsFor(server: OneObjectServer, changeHandlers: ChangeHandler[], resource = EXAMPLES): CycleDeps {
  return {
    client: server.api.client,
    resource,
    settings: new Settings(),
    lifecycle: allAtOnce,
    eventHandlers: [],
    changeHandlers,
    backgroundHandlers: [],
    indices: {},
    sensitive: sensitiveFieldsOf(resource),
    signal: new AbortController().signal,
  };
}

function example(extra: Partial<KubernetesObject> = {}): KubernetesObject {
  return {
    apiVersion: "kopf.dev/v1",
    kind: "KopfExample",
    metadata: { name: "x", namespace: "ns", uid: "uid-x", resourceVersion: "1" },
    spec: { size: 1 },
    ...extra,
  };
}

/** Runs one cycle for the server's current object, as a MODIFIED event. */
function cycle(server: OneObjectServer, memory: ObjectMemory, deps: CycleDeps) {
  return processObject({ kind: "event", type: "MODIFIED", object: structuredClone(server.object) }, memory, deps);
}

Deno.test("a creation: the handler's result and the diff-base in one merge-patch, no progress left", async () => {
  await using server = new OneObjectServer(example());
  const calls: unknown[] = [];
  const handlers = handlersOf((registry) => {
    kopf.on.create("kopfexamples", { registry }, function created({ spec }) {
      calls.push(spec);
      return { done: true };
    });
  });
  const outcome = await cycle(server, newMemory({}, false), depsFor(server, handlers));
  assert.deepEqual(calls, [{ size: 1 }]);
  assert.deepEqual(outcome, {});
  assert.equal(server.writes.length, 1);
  assert.deepEqual(server.object.status, { created: { done: true } });
  assert.equal(server.object.metadata.annotations?.[LAST_HANDLED], '{"spec":{"size":1}}\n');
  assert.equal(server.object.metadata.annotations?.["kopf.zalando.org/created"], undefined);
});

Deno.test("the finalizer comes first, alone; the handlers run in the next cycle; then nothing is left to do", async () => {
  await using server = new OneObjectServer(example());
  let runs = 0;
  const handlers = handlersOf((registry) => {
    kopf.on.create("kopfexamples", { registry }, function created() {
      runs++;
    });
    kopf.on.delete("kopfexamples", { registry }, function deleted() {});
  });
  const memory = newMemory({}, false);
  const deps = depsFor(server, handlers);
  deps.settings.persistence.consistencyTimeout = 0;
  await cycle(server, memory, deps);
  assert.equal(runs, 0);
  assert.deepEqual(server.object.metadata.finalizers, [FINALIZER]);
  assert.match(server.writes[0].type, /json-patch/);
  await cycle(server, memory, deps);
  assert.equal(runs, 1);
  const writes = server.writes.length;
  await cycle(server, memory, deps);
  assert.equal(server.writes.length, writes, "an unchanged object costs no write");
  assert.equal(runs, 1);
});

Deno.test("a deletion runs the delete handler, then releases the finalizer without other bookkeeping", async () => {
  const deleting = example({
    metadata: {
      ...example().metadata,
      deletionTimestamp: "2026-01-01T00:00:00Z",
      finalizers: [FINALIZER],
      annotations: { [LAST_HANDLED]: '{"spec":{"size":1}}\n' },
    },
  });
  await using server = new OneObjectServer(deleting);
  const handlers = handlersOf((registry) => {
    kopf.on.delete("kopfexamples", { registry }, function deleted() {
      return { never: "stored" };
    });
  });
  await cycle(server, newMemory({}, false), depsFor(server, handlers));
  assert.equal(server.writes.length, 1);
  assert.match(server.writes[0].type, /json-patch/);
  assert.deepEqual(server.object.metadata.finalizers, []);
  assert.equal(server.object.status, undefined);
});

Deno.test("a temporary error asks for a wake-up and records the retry; the next cycle succeeds", async () => {
  await using server = new OneObjectServer(example());
  let runs = 0;
  const handlers = handlersOf((registry) => {
    kopf.on.create("kopfexamples", { registry }, function flaky() {
      if (++runs === 1) throw new kopf.TemporaryError("not yet", { delay: 7 });
    });
  });
  const memory = newMemory({}, false);
  const deps = depsFor(server, handlers);
  deps.settings.persistence.consistencyTimeout = 0;
  const first = await cycle(server, memory, deps);
  assert.ok(first.wakeupAfter! > 6 && first.wakeupAfter! <= 7, `${first.wakeupAfter}`);
  const progress = JSON.parse(server.object.metadata.annotations!["kopf.zalando.org/flaky"]);
  assert.equal(progress.retries, 1);
  assert.equal(server.object.metadata.annotations?.[LAST_HANDLED], undefined);
  // Due now: the recorded delay is moved into the past.
  progress.delayed = "2000-01-01T00:00:00.000000+00:00";
  server.object.metadata.annotations!["kopf.zalando.org/flaky"] = JSON.stringify(progress);
  const second = await cycle(server, memory, deps);
  assert.deepEqual(second, {});
  assert.equal(runs, 2);
  assert.equal(server.object.metadata.annotations?.["kopf.zalando.org/flaky"], undefined);
  assert.ok(server.object.metadata.annotations?.[LAST_HANDLED]);
});

Deno.test("until the watch shows the operator's own last write, handling waits; an event that replaced it ends the wait", async () => {
  await using server = new OneObjectServer(example());
  let runs = 0;
  const handlers = handlersOf((registry) => {
    kopf.on.create("kopfexamples", { registry }, function created() {
      runs++;
    });
  });
  const memory: ObjectMemory = {
    ...newMemory({}, false),
    expectedVersion: "99",
    consistencyDeadline: Date.now() + 60_000,
  };
  const outcome = await cycle(server, memory, depsFor(server, handlers));
  assert.equal(runs, 0);
  assert.ok(outcome.wakeupAfter! > 0 && outcome.wakeupAfter! <= 60);
  assert.equal(server.writes.length, 0);
  // A newer event that took the place of the write's own in the object's queue (squashChanges) carries its version.
  const work = {
    kind: "event" as const,
    type: "MODIFIED",
    object: structuredClone(server.object),
    replaced: ["98", "99"],
  };
  assert.deepEqual(await processObject(work, memory, depsFor(server, handlers)), {});
  assert.equal(runs, 1);
  assert.equal(server.writes.length, 1);
  assert.equal(memory.expectedVersion, server.object.metadata.resourceVersion, "now waiting for this cycle's write");
});

Deno.test("an event before the echo of the operator's own write leaves the finalizer to that echo", async () => {
  await using server = new OneObjectServer(example());
  const handlers = handlersOf((registry) => {
    kopf.on.delete("kopfexamples", { registry }, function deleted() {});
  });
  const memory: ObjectMemory = {
    ...newMemory({}, false),
    expectedVersion: "99",
    consistencyDeadline: Date.now() + 60_000,
  };
  // Older than the write the operator waits for: its finalizer patch would be refused (a stale resourceVersion).
  const outcome = await cycle(server, memory, depsFor(server, handlers));
  assert.ok(outcome.wakeupAfter! > 0 && outcome.wakeupAfter! <= 60, "woken up if the echo never comes");
  assert.equal(server.writes.length, 0);
  const echo = { kind: "event" as const, type: "MODIFIED", object: { ...structuredClone(server.object) } };
  echo.object.metadata.resourceVersion = "99";
  await processObject(echo, memory, depsFor(server, handlers));
  assert.equal(server.writes.length, 1, "the finalizer, on the echo");
  assert.ok(server.object.metadata.finalizers?.length);
});

Deno.test("a superseded event runs no change handler and writes nothing", async () => {
  await using server = new OneObjectServer(example());
  let runs = 0;
  const handlers = handlersOf((registry) => {
    kopf.on.create("kopfexamples", { registry }, function created() {
      runs++;
    });
  });
  const work = { kind: "event" as const, type: "ADDED", object: structuredClone(server.object) };
  assert.deepEqual(await processObject(work, newMemory({}, false), depsFor(server, handlers), true), {});
  assert.equal(runs, 0);
  assert.equal(server.writes.length, 0);
});

Deno.test("a Secret's diff-base holds digests; one held in clear is replaced without running a handler", async () => {
  const clear = `${JSON.stringify({ data: { key: "c2VjcmV0" }, type: "Opaque" })}\n`;
  const secret: KubernetesObject = {
    apiVersion: "v1",
    kind: "Secret",
    metadata: {
      name: "s",
      namespace: "ns",
      uid: "uid-s",
      resourceVersion: "1",
      annotations: { [LAST_HANDLED]: clear },
    },
    data: { key: "c2VjcmV0" },
    type: "Opaque",
  };
  await using server = new OneObjectServer(secret);
  const seen: unknown[] = [];
  const handlers = handlersOf((registry) => {
    kopf.on.update("secrets", { registry }, function updated({ old, new: now, diff }) {
      seen.push({ old, new: now, diff });
    });
  });
  const memory = newMemory({}, false);
  const deps = depsFor(server, handlers, SECRETS);
  deps.settings.persistence.consistencyTimeout = 0;
  await cycle(server, memory, deps);
  assert.deepEqual(seen, [], "the same essence: nothing changed");
  const stored = server.object.metadata.annotations![LAST_HANDLED];
  assert.ok(!stored.includes("c2VjcmV0"), stored);
  assert.match(stored, /"key":"sha256:[0-9a-f]{64}"/);

  server.object.data = { key: "bmV3" } as JsonObject;
  await cycle(server, memory, deps);
  assert.equal(seen.length, 1);
  const text = JSON.stringify(seen);
  assert.ok(!text.includes("c2VjcmV0") && !text.includes("bmV3"), text);
  assert.ok(!server.object.metadata.annotations![LAST_HANDLED].includes("bmV3"));
});

Deno.test("the echo of a creation handler's own annotation is written only where some handler takes updates", async () => {
  for (const takesUpdates of [false, true]) {
    await using server = new OneObjectServer(example());
    const handlers = handlersOf((registry) => {
      kopf.on.create("kopfexamples", { registry }, function created({ patch }) {
        patch.metadata.annotations["example.com/seen"] = "yes";
      });
      if (takesUpdates) kopf.on.resume("kopfexamples", { registry }, function resumed() {});
    });
    const memory = newMemory({}, false);
    const deps = depsFor(server, handlers);
    deps.settings.persistence.consistencyTimeout = 0;
    await cycle(server, memory, deps);
    assert.equal(server.writes.length, 1);
    assert.equal(server.object.metadata.annotations?.["example.com/seen"], "yes");
    await cycle(server, memory, deps);
    assert.equal(server.writes.length, takesUpdates ? 2 : 1, `takes updates: ${takesUpdates}`);
    const stored = takesUpdates
      ? '{"spec":{"size":1},"metadata":{"annotations":{"example.com/seen":"yes"}}}\n'
      : '{"spec":{"size":1}}\n';
    assert.equal(server.object.metadata.annotations?.[LAST_HANDLED], stored);
  }
});

/** The server's current object as the watch would bring it back: a MODIFIED event. */
function echo(server: OneObjectServer, extra: Partial<Extract<ObjectWork, { kind: "event" }>> = {}): ObjectWork {
  return { kind: "event", type: "MODIFIED", object: structuredClone(server.object), ...extra };
}

Deno.test("the echoes of a settling cycle's writes (both parts with a status subresource) are taken without a cycle", async () => {
  await using server = new OneObjectServer(example());
  let runs = 0;
  const handlers = handlersOf((registry) => {
    kopf.on.create("kopfexamples", { registry }, function created() {
      runs++;
      return { done: true };
    });
  });
  const memory = newMemory({}, false);
  const deps = depsFor(server, handlers, KOPFEXAMPLES);
  await cycle(server, memory, deps);
  assert.equal(server.writes.length, 2, "the annotations, then the status");
  assert.deepEqual(memory.ownEchoes, ["2", "3"]);
  assert.equal(memory.expectedVersion, "3");
  // The watch brings both; the second replaced the first while it waited.
  assert.equal(takeOwnEcho(echo(server, { replaced: ["2"] }), memory), true);
  assert.equal(memory.expectedVersion, undefined, "the consistency wait ends with the echo");
  assert.deepEqual(memory.ownEchoes, []);
  // Anything else afterwards is processed.
  assert.equal(takeOwnEcho(echo(server), memory), false);
  assert.equal(memory.ownEchoes, undefined);
  assert.equal(runs, 1);
});

Deno.test("the echoes of both writes, queued one behind the other, are each taken without a cycle", async () => {
  await using server = new OneObjectServer(example());
  const handlers = handlersOf((registry) => {
    kopf.on.create("kopfexamples", { registry }, function created() {
      return { done: true };
    });
  });
  const memory = newMemory({}, false);
  const deps = depsFor(server, handlers, KOPFEXAMPLES);
  await cycle(server, memory, deps);
  assert.deepEqual(memory.ownEchoes, ["2", "3"]);
  // The first echo as the watch brought it (the annotations' write), with the second waiting behind it.
  const first = echo(server);
  first.object.metadata.resourceVersion = "2";
  assert.equal(takeOwnEcho(first, memory), true, "the first echo, newer work behind it");
  assert.deepEqual(memory.ownEchoes, ["3"]);
  assert.equal(takeOwnEcho(echo(server), memory), true, "the second echo");
  assert.deepEqual(memory.ownEchoes, []);
  assert.equal(memory.expectedVersion, undefined, "the consistency wait ends with the last echo");
});

Deno.test("an echo is processed when it may carry more than the cycle's writes", async () => {
  const cases: [string, Partial<Extract<ObjectWork, { kind: "event" }>>][] = [
    ["it replaced someone else's change", { replaced: ["2", "17"] }],
    ["a relisting found it", { relisted: true }],
    ["it is the object leaving the selection", { left: true }],
    ["it comes as ADDED", { type: "ADDED" }],
  ];
  for (const [title, extra] of cases) {
    await using server = new OneObjectServer(example());
    const handlers = handlersOf((registry) => kopf.on.create("kopfexamples", { registry }, function created() {}));
    const memory = newMemory({}, false);
    const deps = depsFor(server, handlers);
    await cycle(server, memory, deps);
    assert.deepEqual(memory.ownEchoes, ["2"], title);
    assert.equal(takeOwnEcho(echo(server, extra), memory), false, title);
    assert.equal(memory.ownEchoes, undefined, `${title}: the echoes are unknown from then on`);
  }
});

Deno.test("a cycle whose echo could change something leaves its echoes to be processed", async () => {
  const cases: [string, (registry: kopf.Registry) => void, (deps: CycleDeps) => void][] = [
    [
      "a handler patches the spec",
      (registry) =>
        kopf.on.create("kopfexamples", { registry }, function created({ patch }) {
          patch.spec = { size: 2 };
        }),
      () => {},
    ],
    [
      "a handler patches a label",
      (registry) =>
        kopf.on.create("kopfexamples", { registry }, function created({ patch }) {
          patch.metadata.labels = { seen: "yes" };
        }),
      () => {},
    ],
    [
      "a handler patches an annotation of its own",
      (registry) =>
        kopf.on.create("kopfexamples", { registry }, function created({ patch }) {
          patch.metadata.annotations["example.com/seen"] = "yes";
        }),
      () => {},
    ],
    [
      "a filter is a callback (it may read the status)",
      (registry) => kopf.on.create("kopfexamples", { registry, when: () => true }, function created() {}),
      () => {},
    ],
    [
      "a label filter is a callback",
      (registry) => kopf.on.create("kopfexamples", { registry, labels: { app: () => true } }, function created() {}),
      () => {},
    ],
    ["a handler asks to be retried", (registry) =>
      kopf.on.create("kopfexamples", { registry }, function created() {
        throw new kopf.TemporaryError("later", { delay: 5 });
      }), () => {}],
    ["the finalizer is added", (registry) => {
      kopf.on.create("kopfexamples", { registry }, function created() {});
      kopf.on.delete("kopfexamples", { registry }, function deleted() {});
    }, () => {}],
    [
      "event handlers see every event",
      (registry) => kopf.on.create("kopfexamples", { registry }, function created() {}),
      (deps) => {
        const registry = new kopf.Registry();
        kopf.on.event("kopfexamples", { registry }, function seen() {});
        deps.eventHandlers = registry.handlers.filter((handler): handler is EventHandler => handler.kind === "event");
      },
    ],
  ];
  for (const [title, register, adjust] of cases) {
    await using server = new OneObjectServer(example());
    const memory = newMemory({}, false);
    const deps = depsFor(server, handlersOf(register));
    adjust(deps);
    await cycle(server, memory, deps);
    assert.ok(server.writes.length >= 1, `${title}: written`);
    assert.equal(memory.ownEchoes, undefined, title);
  }
});
