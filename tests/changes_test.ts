/**
 * Change handlers against a real API server: creation, updates, field handlers, resuming,
 * results, errors and retries, lifecycles, causes and diffs.
 */

import assert from "node:assert/strict";
import { reset } from "@logtape/logtape";
import * as kopf from "@kopf/kopf";
import type { KubernetesObject } from "../src/model/body.ts";
import {
  createExample,
  freshNamespace,
  getExample,
  patchExample,
  testCluster,
  waitForStatusSet,
} from "./support/cluster.ts";
import { eventually } from "./support/eventually.ts";
import { runOperator } from "./support/operator.ts";
import { EventProbe, queueDepth, queuesDrained } from "./support/probe.ts";

type Status = Record<string, unknown>;

function statusOf(body: KubernetesObject): Status {
  return (body.status ?? {}) as Status;
}

Deno.test("on.update gets the diff of a spec change; a status-only change runs nothing", async () => {
  const { client } = await testCluster();
  const namespace = await freshNamespace(client, "update");
  const registry = new kopf.Registry();
  const calls: unknown[] = [];
  kopf.on.update("kopfexamples", { registry }, function updateFn({ reason, old, new: now, diff }) {
    calls.push(diff);
    return { reason, old: (old as Status).spec, new: (now as Status).spec, hasStatus: "status" in (now as Status) };
  });
  const probe = new EventProbe(registry);
  await createExample(client, namespace, "u", { x: 1 });
  const operator = await runOperator(registry, namespace);
  try {
    await eventually("the diff-base", async () => {
      const body = await getExample(client, namespace, "u");
      return body.metadata.annotations?.["kopf.zalando.org/last-handled-configuration"];
    });
    await client.request({
      method: "PATCH",
      path: `/apis/kopf.dev/v1/namespaces/${namespace}/kopfexamples/u/status`,
      body: { status: { unrelated: true } },
      contentType: "application/merge-patch+json",
    });
    await probe.caughtUp(namespace, "u");
    assert.equal(calls.length, 0, "a status change is not an update");
    await patchExample(client, namespace, "u", { spec: { x: 2 } });
    const body = await waitForStatusSet(namespace, "u", "updateFn");
    assert.deepEqual(statusOf(body).updateFn, { reason: "update", old: { x: 1 }, new: { x: 2 }, hasStatus: false });
    assert.deepEqual(calls, [[["change", ["spec", "x"], 1, 2]]]);
  } finally {
    await operator.stop();
  }
});

Deno.test("a field suffix makes the id; one function on two fields runs twice with its params", async () => {
  const { client } = await testCluster();
  const namespace = await freshNamespace(client, "field-id");
  const registry = new kopf.Registry();
  function fn({ param, old, new: now }: kopf.ChangeContext) {
    return { param, old, new: now };
  }
  kopf.on.update("kopfexamples", { registry, field: "spec.a", param: 1 }, fn);
  kopf.on.update("kopfexamples", { registry, field: "spec", param: 2 }, fn);
  await createExample(client, namespace, "f", { a: 1 });
  const operator = await runOperator(registry, namespace);
  try {
    await eventually("the diff-base", async () => {
      const body = await getExample(client, namespace, "f");
      return body.metadata.annotations?.["kopf.zalando.org/last-handled-configuration"];
    });
    await patchExample(client, namespace, "f", { spec: { a: 2 } });
    const body = await waitForStatusSet(namespace, "f", "fn/spec");
    const status = statusOf(await waitForStatusSet(namespace, "f", "fn/spec.a"));
    assert.deepEqual(status["fn/spec.a"], { param: 1, old: 1, new: 2 });
    assert.deepEqual(statusOf(body)["fn/spec"], { param: 2, old: { a: 1 }, new: { a: 2 } });
  } finally {
    await operator.stop();
  }
});

Deno.test("on.field fires on creation when the field is set and on its changes, not on others", async () => {
  const { client } = await testCluster();
  const namespace = await freshNamespace(client, "on-field");
  const registry = new kopf.Registry();
  const seen: string[] = [];
  kopf.on.field("kopfexamples", { registry, field: "spec.a" }, function fieldFn({ reason, old, new: now }) {
    seen.push(`${reason} ${old} ${now}`);
  });
  const probe = new EventProbe(registry);
  const operator = await runOperator(registry, namespace);
  try {
    await createExample(client, namespace, "x", { a: 1, b: 1 });
    await eventually("the creation", () => seen.length >= 1 || undefined);
    await patchExample(client, namespace, "x", { spec: { b: 2 } });
    await probe.caughtUp(namespace, "x");
    await patchExample(client, namespace, "x", { spec: { a: 2 } });
    await eventually("the change of spec.a", () => seen.length >= 2 || undefined);
    await probe.caughtUp(namespace, "x");
    assert.deepEqual(seen, ["create null 1", "update 1 2"]);
  } finally {
    await operator.stop();
  }
});

Deno.test("on.resume runs once for handled objects after a restart, never for new ones; create is not re-run", async () => {
  const { client } = await testCluster();
  const namespace = await freshNamespace(client, "resume");
  const registry = new kopf.Registry();
  const calls: string[] = [];
  kopf.on.create("kopfexamples", { registry }, function createFn({ name }) {
    calls.push(`create ${name}`);
  });
  kopf.on.resume("kopfexamples", { registry }, function resumeFn({ name, reason }) {
    calls.push(`${reason} ${name}`);
  });
  const probe = new EventProbe(registry);
  await createExample(client, namespace, "old");
  let operator = await runOperator(registry, namespace);
  await eventually("the creation", () => calls.includes("create old") || undefined);
  await probe.caughtUp(namespace, "old");
  await operator.stop();
  assert.deepEqual(calls, ["create old"]);

  operator = await runOperator(registry, namespace);
  try {
    await eventually("the resuming", () => calls.includes("resume old") || undefined);
    await createExample(client, namespace, "new");
    await eventually("the creation of the new one", () => calls.includes("create new") || undefined);
    await patchExample(client, namespace, "old", { spec: { touched: 1 } });
    await probe.caughtUp(namespace, "old");
    await probe.caughtUp(namespace, "new");
    assert.deepEqual(calls, ["create old", "resume old", "create new"]);
  } finally {
    await operator.stop();
  }
});

Deno.test("one function as create, resume and update shares one id: a change while the operator was down runs it once", async () => {
  const { client } = await testCluster();
  const namespace = await freshNamespace(client, "stacked");
  const registry = new kopf.Registry();
  const calls: string[] = [];
  function reconcile({ name, reason, spec }: kopf.ChangeContext) {
    calls.push(`${reason} ${name} ${spec.x}`);
    return { reason, x: spec.x };
  }
  kopf.on.create("kopfexamples", { registry }, reconcile);
  kopf.on.resume("kopfexamples", { registry }, reconcile);
  kopf.on.update("kopfexamples", { registry }, reconcile);
  const probe = new EventProbe(registry);
  await createExample(client, namespace, "changed", { x: 1 });
  await createExample(client, namespace, "unchanged", { x: 1 });
  let operator = await runOperator(registry, namespace);
  for (const name of ["changed", "unchanged"]) {
    await eventually(`the creation of ${name}`, async () => {
      const body = await getExample(client, namespace, name);
      const handled = body.metadata.annotations?.["kopf.zalando.org/last-handled-configuration"];
      return (handled && statusOf(body).reconcile) || undefined;
    });
  }
  for (const name of ["changed", "unchanged"]) await probe.caughtUp(namespace, name);
  await operator.stop();
  assert.deepEqual(calls.sort(), ["create changed 1", "create unchanged 1"]);

  calls.length = 0;
  await patchExample(client, namespace, "changed", { spec: { x: 2 } });
  operator = await runOperator(registry, namespace);
  try {
    await eventually("both objects handled again", () => calls.length >= 2 || undefined);
    await waitForStatusSet(namespace, "changed", "reconcile", (value) => (value as Status)?.x === 2);
    const body = await probe.caughtUp(namespace, "changed");
    await probe.caughtUp(namespace, "unchanged");
    // The changed object: one call as the update (not a resume and an update); the other: one resume.
    assert.deepEqual(calls.sort(), ["resume unchanged 1", "update changed 2"]);
    assert.deepEqual(statusOf(body).reconcile, { reason: "update", x: 2 });
    const ids = Object.keys(statusOf(body));
    assert.deepEqual(ids, ["reconcile"], "one id for the three registrations: one result");
  } finally {
    await operator.stop();
  }
});

Deno.test("changes made while the operator was down are handled as one update", async () => {
  const { client } = await testCluster();
  const namespace = await freshNamespace(client, "catch-up");
  const registry = new kopf.Registry();
  const updates: unknown[] = [];
  kopf.on.update("kopfexamples", { registry, field: "spec.x" }, function updateFn({ old, new: now }) {
    updates.push([old, now]);
  });
  const probe = new EventProbe(registry);
  await createExample(client, namespace, "c", { x: 1 });
  let operator = await runOperator(registry, namespace);
  await eventually("the diff-base", async () => {
    const body = await getExample(client, namespace, "c");
    return body.metadata.annotations?.["kopf.zalando.org/last-handled-configuration"];
  });
  await operator.stop();
  await patchExample(client, namespace, "c", { spec: { x: 2 } });
  await patchExample(client, namespace, "c", { spec: { x: 3 } });
  operator = await runOperator(registry, namespace);
  try {
    await eventually("the update", () => updates.length >= 1 || undefined);
    await probe.caughtUp(namespace, "c");
    assert.deepEqual(updates, [[1, 3]]);
  } finally {
    await operator.stop();
  }
});

Deno.test("results: mappings merge into status[id], other values replace it", async () => {
  const { client } = await testCluster();
  const namespace = await freshNamespace(client, "results");
  const registry = new kopf.Registry();
  kopf.on.create("kopfexamples", { registry }, function mapFn({ patch }) {
    patch.status.mapFn = { kept: true };
    return { a: 1 };
  });
  kopf.on.create("kopfexamples", { registry }, function numberFn() {
    return 100;
  });
  const operator = await runOperator(registry, namespace);
  try {
    await createExample(client, namespace, "r");
    const body = await waitForStatusSet(namespace, "r", "numberFn");
    assert.deepEqual(statusOf(body).mapFn, { kept: true, a: 1 });
    assert.equal(statusOf(body).numberFn, 100);
  } finally {
    await operator.stop();
  }
});

Deno.test("errors: permanent stops, temporary retries after its delay, retries and timeout give up", async () => {
  const { client } = await testCluster();
  const namespace = await freshNamespace(client, "errors");
  const registry = new kopf.Registry();
  const calls: Record<string, number[]> = { permanent: [], temporary: [], limited: [], exceptional: [] };
  kopf.on.create("kopfexamples", { registry }, function permanentFn({ retry }) {
    calls.permanent.push(retry);
    throw new kopf.PermanentError("no way");
  });
  kopf.on.create("kopfexamples", { registry }, function temporaryFn({ retry }) {
    calls.temporary.push(retry);
    if (retry < 2) throw new kopf.TemporaryError("later", { delay: 1 });
    return { retry };
  });
  kopf.on.create("kopfexamples", { registry, retries: 3, backoff: 0.5 }, function limitedFn({ retry }) {
    calls.limited.push(retry);
    throw new Error("always");
  });
  kopf.on.create("kopfexamples", { registry, errors: "permanent" }, function exceptionalFn({ retry }) {
    calls.exceptional.push(retry);
    throw new Error("once");
  });
  const operator = await runOperator(registry, namespace);
  try {
    await createExample(client, namespace, "e");
    const body = await eventually("the cause to finish", async () => {
      const body = await getExample(client, namespace, "e");
      const done = body.metadata.annotations?.["kopf.zalando.org/last-handled-configuration"];
      return done && statusOf(body).temporaryFn ? body : undefined;
    }, { seconds: 120 });
    assert.deepEqual(calls, { permanent: [0], temporary: [0, 1, 2], limited: [0, 1, 2], exceptional: [0] });
    assert.deepEqual(statusOf(body).temporaryFn, { retry: 2 });
    const progress = Object.keys(body.metadata.annotations ?? {}).filter((key) =>
      key.startsWith("kopf.zalando.org/") && !key.endsWith("last-handled-configuration")
    );
    assert.deepEqual(progress, [], "progress is purged once all handlers are finished");
  } finally {
    await operator.stop();
  }
});

Deno.test("the asap lifecycle runs one handler per cycle; the default runs all in one patch", async () => {
  const { client } = await testCluster();
  for (const [lifecycle, expectedWrites] of [[kopf.lifecycles.allAtOnce, 1], [kopf.lifecycles.asap, 2]] as const) {
    const namespace = await freshNamespace(client, "lifecycle");
    const registry = new kopf.Registry();
    kopf.on.create("kopfexamples", { registry }, function aFn() {
      return "a";
    });
    kopf.on.create("kopfexamples", { registry }, function bFn() {
      return "b";
    });
    const probe = new EventProbe(registry);
    const operator = await runOperator(registry, namespace, { lifecycle });
    try {
      await createExample(client, namespace, "l");
      await waitForStatusSet(namespace, "l", "bFn");
      await waitForStatusSet(namespace, "l", "aFn");
      await probe.caughtUp(namespace, "l");
      const counters = operator.running.client.counters;
      // One merge-patch of the object and one of its status per cycle.
      assert.equal(counters.count({ verb: "patch", resource: "kopfexamples" }), expectedWrites, lifecycle.name);
    } finally {
      await operator.stop();
    }
  }
});

Deno.test("a burst of changes: on.event sees every one, on.update ends with the last state", async () => {
  const { client } = await testCluster();
  const namespace = await freshNamespace(client, "burst");
  const registry = new kopf.Registry();
  const counters: number[] = [];
  let lastUpdate: unknown;
  kopf.on.event("kopfexamples", { registry }, function eventFn({ spec, type }) {
    if (type === "MODIFIED" && typeof spec.counter === "number" && spec.counter > 0) counters.push(spec.counter);
  });
  kopf.on.update("kopfexamples", { registry, field: "spec.counter" }, function updateFn({ new: now }) {
    lastUpdate = now;
  });
  await createExample(client, namespace, "b", { counter: 0 });
  const operator = await runOperator(registry, namespace);
  try {
    await eventually("the diff-base", async () => {
      const body = await getExample(client, namespace, "b");
      return body.metadata.annotations?.["kopf.zalando.org/last-handled-configuration"];
    });
    await Promise.all(Array.from({ length: 20 }, async (_, index) => {
      await new Promise((resolve) => setTimeout(resolve, index * 5));
      await patchExample(client, namespace, "b", { spec: { counter: index + 1 } });
    }));
    const final = (await getExample(client, namespace, "b")).spec as { counter: number };
    await eventually("the last state to be handled", () => lastUpdate === final.counter || undefined);
    await eventually("every change to be seen by on.event", () => new Set(counters).size >= 20 || undefined);
    assert.deepEqual([...new Set(counters)].sort((a, b) => a - b), Array.from({ length: 20 }, (_, index) => index + 1));
  } finally {
    await operator.stop();
  }
});

Deno.test("without on.event, an object's changes behind a long handler wait as one; the last state is handled", async () => {
  const { client } = await testCluster();
  const namespace = await freshNamespace(client, "squash");
  const registry = new kopf.Registry();
  const { promise: released, resolve: release } = Promise.withResolvers<void>();
  const seen: unknown[] = [];
  const created: string[] = [];
  kopf.on.create("kopfexamples", { registry }, function createFn({ name }) {
    created.push(name!);
  });
  kopf.on.update("kopfexamples", { registry, field: "spec.counter" }, async function updateFn({ new: now }) {
    seen.push(now);
    if (now === 1) await released;
  });
  const operator = await runOperator(registry, namespace);
  try {
    await createExample(client, namespace, "b", { counter: 0 });
    await eventually("b's diff-base", async () => {
      const body = await getExample(client, namespace, "b");
      return body.metadata.annotations?.["kopf.zalando.org/last-handled-configuration"];
    });
    await patchExample(client, namespace, "b", { spec: { counter: 1 } });
    await eventually("the update handler to hold", () => seen.length === 1 || undefined);
    for (let counter = 2; counter <= 20; counter++) await patchExample(client, namespace, "b", { spec: { counter } });
    // The watch delivers in order: once c is handled, all of b's changes have been queued.
    await createExample(client, namespace, "c", { counter: 0 });
    await eventually("c to be handled", () => created.includes("c") || undefined);
    await eventually("b's 19 waiting changes to be one", () => queueDepth() === 2 || undefined, { seconds: 20 });
    release();
    await eventually("the last state to be handled", () => seen.at(-1) === 20 || undefined);
    await queuesDrained();
    assert.deepEqual(seen, [1, 20]);
    const b = await getExample(client, namespace, "b");
    const stored = JSON.parse(b.metadata.annotations!["kopf.zalando.org/last-handled-configuration"]);
    assert.equal(stored.spec.counter, 20);
  } finally {
    release();
    await operator.stop();
  }
});

Deno.test("with asap, a handler retrying forever does not block the others", async () => {
  const { client } = await testCluster();
  const namespace = await freshNamespace(client, "independent");
  const registry = new kopf.Registry();
  kopf.on.create("kopfexamples", { registry }, function aFn() {
    throw new kopf.TemporaryError("never", { delay: 1 });
  });
  kopf.on.create("kopfexamples", { registry }, function bFn() {
    return "done";
  });
  const operator = await runOperator(registry, namespace, { lifecycle: kopf.lifecycles.asap });
  try {
    await createExample(client, namespace, "i");
    const body = await waitForStatusSet(namespace, "i", "bFn");
    assert.equal(statusOf(body).bFn, "done");
  } finally {
    await operator.stop();
  }
});

Deno.test("with asap, the first cycle stores a's success and b's pending record; b runs in the next", async () => {
  const { client } = await testCluster();
  const namespace = await freshNamespace(client, "asap");
  const lines: string[] = [];
  await kopf.configureLogging({ format: "plain", level: "debug", write: (line) => lines.push(line) });
  const registry = new kopf.Registry();
  let release: () => void = () => {};
  const gate = new Promise<void>((resolve) => release = resolve);
  let bStarted = false;
  kopf.on.create("kopfexamples", { registry }, function aFn() {
    return "a";
  });
  kopf.on.create("kopfexamples", { registry }, async function bFn() {
    bStarted = true;
    await gate;
    return "b";
  });
  const operator = await runOperator(registry, namespace, { lifecycle: kopf.lifecycles.asap });
  try {
    await createExample(client, namespace, "s");
    await eventually("bFn to be running", () => bStarted || undefined);
    const middle = await getExample(client, namespace, "s");
    const annotations = middle.metadata.annotations ?? {};
    const a = JSON.parse(annotations["kopf.zalando.org/aFn"]);
    const b = JSON.parse(annotations["kopf.zalando.org/bFn"]);
    assert.equal(a.success, true);
    assert.deepEqual(
      { ...b, started: typeof b.started },
      { started: "string", purpose: "create", retries: 0, success: false, failure: false },
    );
    assert.equal(statusOf(middle).aFn, "a");
    assert.equal(statusOf(middle).bFn, undefined);
    release();
    await waitForStatusSet(namespace, "s", "bFn");
    const succeededA = lines.findIndex((line) => line.includes("Handler 'aFn' succeeded."));
    const patching = lines.findIndex((line, index) => index > succeededA && line.includes("Patching with:"));
    const succeededB = lines.findIndex((line) => line.includes("Handler 'bFn' succeeded."));
    assert.ok(succeededA >= 0 && patching > succeededA && succeededB > patching, lines.join("\n"));
    assert.match(lines[patching], /kopf\.zalando\.org\/bFn/);
  } finally {
    release();
    await operator.stop();
    await reset();
  }
});

Deno.test("each cause reaches its handlers with its reason; a status-only change is no cause", async () => {
  const { client } = await testCluster();
  const namespace = await freshNamespace(client, "causes");
  const registry = new kopf.Registry();
  const reasons: string[] = [];
  const events: string[] = [];
  const record = ({ reason }: kopf.ChangeContext) => {
    reasons.push(reason);
  };
  kopf.on.create("kopfexamples", { registry, id: "createFn" }, record);
  kopf.on.update("kopfexamples", { registry, id: "updateFn" }, record);
  kopf.on.delete("kopfexamples", { registry, id: "deleteFn" }, record);
  kopf.on.event("kopfexamples", { registry }, function eventFn({ type, status }) {
    events.push(`${type} ${JSON.stringify(status.phase ?? null)}`);
  });
  const probe = new EventProbe(registry);
  const operator = await runOperator(registry, namespace);
  try {
    await createExample(client, namespace, "c", { x: 1 });
    await eventually("the creation", () => reasons.length >= 1 || undefined);
    await eventually("the diff-base", async () => {
      const body = await getExample(client, namespace, "c");
      return body.metadata.annotations?.["kopf.zalando.org/last-handled-configuration"];
    });
    await patchExample(client, namespace, "c", { spec: { x: 2 } });
    await eventually("the update", () => reasons.length >= 2 || undefined);
    await client.request({
      method: "PATCH",
      path: `/apis/kopf.dev/v1/namespaces/${namespace}/kopfexamples/c/status`,
      body: { status: { phase: "only-status" } },
      contentType: "application/merge-patch+json",
    });
    await eventually("the status change to be seen", () => events.some((e) => e.includes("only-status")) || undefined);
    await probe.caughtUp(namespace, "c");
    assert.deepEqual(reasons, ["create", "update"], "a status-only change is a no-op");
    await client.request({
      method: "DELETE",
      path: `/apis/kopf.dev/v1/namespaces/${namespace}/kopfexamples/c`,
    });
    await eventually("the deletion to be gone", () => events.some((e) => e.startsWith("DELETED")) || undefined);
    await queuesDrained();
    assert.deepEqual(reasons, ["create", "update", "delete"], "nothing for the final DELETED event (gone)");
  } finally {
    await operator.stop();
  }
});

Deno.test("diffs: a whole-object diff has full paths, a field handler's diff is re-rooted at its field", async () => {
  const { client } = await testCluster();
  const namespace = await freshNamespace(client, "diffs");
  const registry = new kopf.Registry();
  const whole: string[] = [];
  const scoped: string[] = [];
  kopf.on.create("kopfexamples", { registry }, function createFn({ diff }) {
    whole.push(JSON.stringify(diff));
  });
  kopf.on.update("kopfexamples", { registry }, function updateFn({ diff }) {
    whole.push(JSON.stringify(diff));
  });
  kopf.on.field("kopfexamples", { registry, field: "metadata.labels" }, function labelsFn({ diff }) {
    scoped.push(JSON.stringify(diff));
  });
  const probe = new EventProbe(registry);
  const operator = await runOperator(registry, namespace);
  try {
    await client.request({
      method: "POST",
      path: `/apis/kopf.dev/v1/namespaces/${namespace}/kopfexamples`,
      body: {
        apiVersion: "kopf.dev/v1",
        kind: "KopfExample",
        metadata: { name: "d", labels: { l1: "same", l2: "old", l3: "x" } },
        spec: { s: 1 },
      },
    });
    await eventually("the creation", () => whole.length >= 1 && scoped.length >= 1 || undefined);
    await eventually("the diff-base", async () => {
      const body = await getExample(client, namespace, "d");
      return body.metadata.annotations?.["kopf.zalando.org/last-handled-configuration"];
    });
    await patchExample(client, namespace, "d", { metadata: { labels: { l2: "new", l3: null, l4: "added" } } });
    await eventually("the update", () => whole.length >= 2 && scoped.length >= 2 || undefined);
    await probe.caughtUp(namespace, "d");
    // Kopf lists additions, then removals, then changes; the check is about the items, not their order.
    const items = (text: string) => (JSON.parse(text) as unknown[]).map((item) => JSON.stringify(item)).sort();
    const labels = { l1: "same", l2: "old", l3: "x" };
    assert.deepEqual(whole.map(items), [
      [JSON.stringify(["add", [], null, { spec: { s: 1 }, metadata: { labels } }])],
      [
        JSON.stringify(["add", ["metadata", "labels", "l4"], null, "added"]),
        JSON.stringify(["change", ["metadata", "labels", "l2"], "old", "new"]),
        JSON.stringify(["remove", ["metadata", "labels", "l3"], "x", null]),
      ],
    ]);
    assert.deepEqual(scoped.map(items), [
      [JSON.stringify(["add", [], null, labels])],
      [
        JSON.stringify(["add", ["l4"], null, "added"]),
        JSON.stringify(["change", ["l2"], "old", "new"]),
        JSON.stringify(["remove", ["l3"], "x", null]),
      ],
    ]);
  } finally {
    await operator.stop();
  }
});
