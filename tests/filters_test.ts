/**
 * Handler filters against a real API server: labels and annotations (exact values, presence
 * markers, per-value callbacks), field/value, old/new, `when`, the callback combinators, and
 * stealth objects that no handler matches.
 */

import assert from "node:assert/strict";
import * as kopf from "@kopf/kopf";
import { resourcePath } from "../src/api/paths.ts";
import type { KubernetesObject } from "../src/model/body.ts";
import { freshNamespace, getExample, KOPFEXAMPLES, patchExample, testCluster } from "./support/cluster.ts";
import { eventually } from "./support/eventually.ts";
import { runOperator } from "./support/operator.ts";
import { EventProbe } from "./support/probe.ts";

const DIFF_BASE = "kopf.zalando.org/last-handled-configuration";

interface KexOptions {
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  spec?: Record<string, unknown>;
}

/** Creates a kopfexample with labels and annotations. */
async function createKex(namespace: string, name: string, options: KexOptions = {}): Promise<KubernetesObject> {
  const { client } = await testCluster();
  return await client.request<KubernetesObject>({
    method: "POST",
    path: resourcePath(KOPFEXAMPLES, { namespace }),
    body: {
      apiVersion: "kopf.dev/v1",
      kind: "KopfExample",
      metadata: { name, labels: options.labels, annotations: options.annotations },
      spec: options.spec ?? {},
    },
  });
}

/** Waits until the object's diff-base is stored, i.e. its creation is fully handled. */
async function handled(namespace: string, name: string): Promise<KubernetesObject> {
  const { client } = await testCluster();
  return await eventually(`${name} to be handled`, async () => {
    const body = await getExample(client, namespace, name);
    return body.metadata.annotations?.[DIFF_BASE] !== undefined ? body : undefined;
  });
}

/** Registers an unfiltered creation handler that tells when an object's creation was handled. */
function controlHandler(registry: kopf.Registry, seen: string[]): void {
  kopf.on.create("kopfexamples", { registry }, function controlFn({ name }) {
    seen.push(name!);
  });
}

Deno.test("labels: an exact value matches only that value", async () => {
  const { client } = await testCluster();
  const namespace = await freshNamespace(client, "labels");
  const registry = new kopf.Registry();
  const seen: string[] = [];
  const matched: string[] = [];
  controlHandler(registry, seen);
  kopf.on.create("kopfexamples", { registry, labels: { a: "b" } }, function labelledFn({ name }) {
    matched.push(name!);
  });
  const probe = new EventProbe(registry);
  const operator = await runOperator(registry, namespace);
  try {
    await createKex(namespace, "ab", { labels: { a: "b" } });
    await createKex(namespace, "ac", { labels: { a: "c" } });
    await createKex(namespace, "empty", { labels: { a: "" } });
    await createKex(namespace, "none");
    await createKex(namespace, "other", { labels: { x: "b" } });
    await eventually("all creations", () => seen.length >= 5 || undefined);
    for (const name of ["ab", "ac", "empty", "none", "other"]) await probe.caughtUp(namespace, name);
    assert.deepEqual(matched, ["ab"]);
  } finally {
    await operator.stop();
  }
});

Deno.test("presence markers: PRESENT accepts an empty value; ABSENT is suppressed by skip=''", async () => {
  const { client } = await testCluster();
  const namespace = await freshNamespace(client, "markers");
  const registry = new kopf.Registry();
  const seen: string[] = [];
  const calls: string[] = [];
  controlHandler(registry, seen);
  kopf.on.create("kopfexamples", { registry, annotations: { skip: kopf.ABSENT } }, function absentFn({ name }) {
    calls.push(`absent ${name}`);
  });
  kopf.on.create("kopfexamples", { registry, labels: { p: kopf.PRESENT } }, function presentFn({ name }) {
    calls.push(`present ${name}`);
  });
  const updates: string[] = [];
  kopf.on.update("kopfexamples", { registry }, function anyUpdateFn({ name }) {
    updates.push(name!);
  });
  kopf.on.update(
    "kopfexamples",
    { registry, annotations: { skip: kopf.ABSENT } },
    function unskippedUpdateFn({ name }) {
      calls.push(`update ${name}`);
    },
  );
  const probe = new EventProbe(registry);
  const operator = await runOperator(registry, namespace);
  try {
    await createKex(namespace, "plain");
    await createKex(namespace, "skipped", { annotations: { skip: "" } });
    await createKex(namespace, "marked", { labels: { p: "" } });
    await eventually("all creations", () => seen.length >= 3 || undefined);
    for (const name of ["plain", "skipped", "marked"]) await handled(namespace, name);

    // Annotating an object with skip="" later suppresses its update handler; others still run.
    await patchExample(client, namespace, "plain", { metadata: { annotations: { skip: "" } } });
    await eventually("the annotation change", () => updates.includes("plain") || undefined);
    await patchExample(client, namespace, "plain", { spec: { x: 1 } });
    await patchExample(client, namespace, "marked", { spec: { x: 1 } });
    await eventually("the updates", () => updates.filter((name) => name === "plain").length >= 2 || undefined);
    await eventually("the update of marked", () => updates.includes("marked") || undefined);
    for (const name of ["plain", "skipped", "marked"]) await probe.caughtUp(namespace, name);
    assert.deepEqual(calls.sort(), ["absent marked", "absent plain", "present marked", "update marked"]);
  } finally {
    await operator.stop();
  }
});

Deno.test("per-value callbacks: called with the value (undefined if absent) and the context", async () => {
  const { client } = await testCluster();
  const namespace = await freshNamespace(client, "callbacks");
  const registry = new kopf.Registry();
  const seen: string[] = [];
  const calls: string[] = [];
  const values: [string | undefined, unknown][] = [];
  controlHandler(registry, seen);
  kopf.on.create(
    "kopfexamples",
    {
      registry,
      labels: {
        n: (value, context) => {
          values.push([context.name, value]);
          return value !== undefined && Number(value) > 5;
        },
      },
    },
    function labelFn({ name }) {
      calls.push(`label ${name}`);
    },
  );
  kopf.on.create(
    "kopfexamples",
    { registry, field: "spec.size", value: (value) => typeof value === "number" && value > 10 },
    function sizeFn({ name }) {
      calls.push(`size ${name}`);
    },
  );
  const probe = new EventProbe(registry);
  const operator = await runOperator(registry, namespace);
  try {
    await createKex(namespace, "n6", { labels: { n: "6" }, spec: { size: 20 } });
    await createKex(namespace, "n3", { labels: { n: "3" }, spec: { size: 5 } });
    await createKex(namespace, "none");
    await eventually("all creations", () => seen.length >= 3 || undefined);
    for (const name of ["n6", "n3", "none"]) await probe.caughtUp(namespace, name);
    assert.deepEqual(calls.sort(), ["label n6", "size n6"]);
    assert.ok(values.some(([name, value]) => name === "none" && value === undefined), JSON.stringify(values));
    assert.ok(values.some(([name, value]) => name === "n3" && value === "3"), JSON.stringify(values));
  } finally {
    await operator.stop();
  }
});

Deno.test("field/value on update: either the old or the new value may match", async () => {
  const { client } = await testCluster();
  const namespace = await freshNamespace(client, "value");
  const registry = new kopf.Registry();
  const updates: string[] = [];
  const matched: string[] = [];
  kopf.on.update("kopfexamples", { registry }, function anyUpdateFn({ diff }) {
    updates.push(JSON.stringify(diff));
  });
  kopf.on.update("kopfexamples", { registry, field: "spec.x", value: "on" }, function switchFn({ old, new: now }) {
    matched.push(`${old}->${now}`);
  });
  await createKex(namespace, "s", { spec: { x: "on" } });
  const probe = new EventProbe(registry);
  const operator = await runOperator(registry, namespace);
  try {
    await handled(namespace, "s");
    for (const [index, value] of ["off", "on", "a", "b"].entries()) {
      await patchExample(client, namespace, "s", { spec: { x: value } });
      await eventually(`the update to ${value}`, () => updates.length > index || undefined);
    }
    await probe.caughtUp(namespace, "s");
    assert.equal(updates.length, 4, updates.join("\n"));
    assert.deepEqual(matched, ["on->off", "off->on", "on->a"], "a → b matches on neither side");
  } finally {
    await operator.stop();
  }
});

Deno.test("old=ABSENT, new=PRESENT: the handler fires only when the field is added", async () => {
  const { client } = await testCluster();
  const namespace = await freshNamespace(client, "old-new");
  const registry = new kopf.Registry();
  const updates: string[] = [];
  const added: unknown[] = [];
  kopf.on.update("kopfexamples", { registry }, function anyUpdateFn({ diff }) {
    updates.push(JSON.stringify(diff));
  });
  kopf.on.update(
    "kopfexamples",
    { registry, field: "spec.x", old: kopf.ABSENT, new: kopf.PRESENT },
    function addedFn({ old, new: now }) {
      added.push([old, now]);
    },
  );
  await createKex(namespace, "a", { spec: { y: 1 } });
  const probe = new EventProbe(registry);
  const operator = await runOperator(registry, namespace);
  try {
    await handled(namespace, "a");
    // Added, changed, removed, added again, and an unrelated change.
    const patches = [{ x: 1 }, { x: 2 }, { x: null }, { x: 3 }, { y: 2 }];
    for (const [index, spec] of patches.entries()) {
      await patchExample(client, namespace, "a", { spec });
      await eventually(`the update ${JSON.stringify(spec)}`, () => updates.length > index || undefined);
    }
    await probe.caughtUp(namespace, "a");
    assert.equal(updates.length, 5, updates.join("\n"));
    assert.deepEqual(added, [[null, 1], [null, 3]], "added twice; changed, removed and unrelated changes do not fire");
  } finally {
    await operator.stop();
  }
});

Deno.test("when: a callback over the whole context selects the objects", async () => {
  const { client } = await testCluster();
  const namespace = await freshNamespace(client, "when");
  const registry = new kopf.Registry();
  const seen: string[] = [];
  const matched: string[] = [];
  controlHandler(registry, seen);
  kopf.on.create(
    "kopfexamples",
    { registry, when: ({ name }) => name!.startsWith("x-") },
    function prefixedFn({ name }) {
      matched.push(name!);
    },
  );
  const probe = new EventProbe(registry);
  const operator = await runOperator(registry, namespace);
  try {
    await createKex(namespace, "x-1");
    await createKex(namespace, "y-1");
    await createKex(namespace, "x-2");
    await eventually("all creations", () => seen.length >= 3 || undefined);
    for (const name of ["x-1", "y-1", "x-2"]) await probe.caughtUp(namespace, name);
    assert.deepEqual(matched.sort(), ["x-1", "x-2"]);
  } finally {
    await operator.stop();
  }
});

Deno.test({
  name: "when: the callback also sees the cause's reason",
  fn: async () => {
    const { client } = await testCluster();
    const namespace = await freshNamespace(client, "when-reason");
    const registry = new kopf.Registry();
    const seen: string[] = [];
    const reasons: unknown[] = [];
    controlHandler(registry, seen);
    kopf.on.create(
      "kopfexamples",
      {
        registry,
        when: ({ reason }) => {
          reasons.push(reason);
          return reason === "create";
        },
      },
      function byReasonFn({ name }) {
        seen.push(`byReason ${name}`);
      },
    );
    const probe = new EventProbe(registry);
    const operator = await runOperator(registry, namespace);
    try {
      await createKex(namespace, "r");
      await eventually("the creation", () => seen.includes("r") || undefined);
      await probe.caughtUp(namespace, "r");
      assert.ok(reasons.includes("create"), `the reasons seen: ${JSON.stringify(reasons)}`);
      assert.ok(seen.includes("byReason r"));
    } finally {
      await operator.stop();
    }
  },
});

Deno.test("combinators: not, anyOf, allOf, noneOf over whole-body and per-value callbacks", async () => {
  const { client } = await testCluster();
  const namespace = await freshNamespace(client, "combinators");
  const registry = new kopf.Registry();
  const seen: string[] = [];
  const calls: string[] = [];
  controlHandler(registry, seen);
  kopf.on.create("kopfexamples", { registry, when: kopf.not(({ name }) => name === "a") }, function notAFn({ name }) {
    calls.push(`notA ${name}`);
  });
  const front = (value: unknown) => value === "front";
  const back = (value: unknown) => value === "back";
  kopf.on.create(
    "kopfexamples",
    { registry, labels: { tier: kopf.anyOf([front, back]) } },
    function anyTierFn({ name }) {
      calls.push(`any ${name}`);
    },
  );
  kopf.on.create(
    "kopfexamples",
    { registry, when: kopf.allOf([({ name }) => name !== "a", ({ labels }) => labels.tier === "front"]) },
    function allFn({ name }) {
      calls.push(`all ${name}`);
    },
  );
  kopf.on.create(
    "kopfexamples",
    { registry, labels: { tier: kopf.noneOf([front, back]) } },
    function noneFn({ name }) {
      calls.push(`none ${name}`);
    },
  );
  const probe = new EventProbe(registry);
  const operator = await runOperator(registry, namespace);
  try {
    await createKex(namespace, "a", { labels: { tier: "front" } });
    await createKex(namespace, "b", { labels: { tier: "back" } });
    await createKex(namespace, "c", { labels: { tier: "front" } });
    await createKex(namespace, "d");
    await eventually("all creations", () => seen.length >= 4 || undefined);
    for (const name of ["a", "b", "c", "d"]) await probe.caughtUp(namespace, name);
    assert.deepEqual(calls.sort(), [
      "all c",
      "any a",
      "any b",
      "any c",
      "none d",
      "notA b",
      "notA c",
      "notA d",
    ]);
  } finally {
    await operator.stop();
  }
});

Deno.test("stealth objects: no state for objects no handler matches; matching later is a creation", async () => {
  const { client } = await testCluster();
  const namespace = await freshNamespace(client, "stealth");
  const registry = new kopf.Registry();
  const events: string[] = [];
  const calls: string[] = [];
  // Event handlers tell when the operator has seen the object; they do not make it "ours".
  kopf.on.event("kopfexamples", { registry }, function eventFn({ name, type }) {
    events.push(`${type} ${name}`);
  });
  kopf.on.create("kopfexamples", { registry, labels: { x: "y" } }, function createFn({ name, reason }) {
    calls.push(`${reason} ${name}`);
  });
  kopf.on.update("kopfexamples", { registry, labels: { x: "y" } }, function updateFn({ name, reason }) {
    calls.push(`${reason} ${name}`);
  });
  kopf.on.delete("kopfexamples", { registry, labels: { x: "y" } }, function deleteFn() {});
  const probe = new EventProbe(registry);
  const operator = await runOperator(registry, namespace);
  try {
    await createKex(namespace, "s", { spec: { a: 1 } });
    await eventually("the object to be seen", () => events.includes("ADDED s") || undefined);
    await patchExample(client, namespace, "s", { spec: { a: 2 } });
    await eventually("the change to be seen", () => events.includes("MODIFIED s") || undefined);
    await probe.caughtUp(namespace, "s");
    let body = await getExample(client, namespace, "s");
    const ours = Object.keys(body.metadata.annotations ?? {}).filter((key) => key.startsWith("kopf.zalando.org/"));
    assert.deepEqual(ours, [], "no kopf.zalando.org/* annotations");
    assert.equal(body.metadata.finalizers, undefined, "no finalizer");
    assert.equal(body.status, undefined, "no status");
    assert.deepEqual(calls, []);

    await patchExample(client, namespace, "s", { metadata: { labels: { x: "y" } } });
    await eventually("the creation", () => calls.length >= 1 || undefined);
    body = await handled(namespace, "s");
    body = await probe.caughtUp(namespace, "s");
    assert.deepEqual(calls, ["create s"], "seen as new: on.create, not on.update");
    assert.ok(body.metadata.finalizers?.includes("kopf.zalando.org/KopfFinalizerMarker"));
  } finally {
    await operator.stop();
  }
});

Deno.test("filter callbacks get the context without param/retry/started/runtime, and whole-object old/new", async () => {
  const { client } = await testCluster();
  const namespace = await freshNamespace(client, "filter-context");
  const registry = new kopf.Registry();
  const seen: string[] = [];
  const fired: string[] = [];
  const contexts: Record<string, unknown>[] = [];
  controlHandler(registry, seen);
  kopf.on.update("kopfexamples", { registry }, function anyUpdateFn({ name }) {
    seen.push(`update ${name}`);
  });
  kopf.on.field(
    "kopfexamples",
    {
      registry,
      field: "spec.a",
      param: "p",
      when: (context) => {
        contexts.push({ ...context });
        return context.reason === "update";
      },
    },
    function fieldFn({ reason, old, new: now }) {
      fired.push(`${reason} ${old} ${now}`);
    },
  );
  const probe = new EventProbe(registry);
  const operator = await runOperator(registry, namespace);
  try {
    await createKex(namespace, "w", { spec: { a: 1 } });
    await handled(namespace, "w");
    await probe.caughtUp(namespace, "w");
    assert.deepEqual(fired, [], "not on creation");
    await patchExample(client, namespace, "w", { spec: { a: 2 } });
    await eventually("the update", () => seen.includes("update w") || undefined);
    await eventually("the field handler", () => fired.length >= 1 || undefined);
    await probe.caughtUp(namespace, "w");
    assert.deepEqual(fired, ["update 1 2"]);

    const last = contexts.at(-1)!;
    for (const key of ["param", "retry", "started", "runtime"]) {
      assert.equal(last[key], undefined, `${key} is not given to filters`);
    }
    for (const key of ["body", "spec", "meta", "name", "namespace", "labels", "annotations", "reason", "diff"]) {
      assert.equal(key in last, true, `${key} is given to filters`);
    }
    assert.deepEqual((last.old as Record<string, unknown>).spec, { a: 1 }, "old is the whole essence, not the field");
    assert.deepEqual((last.new as Record<string, unknown>).spec, { a: 2 }, "new is the whole essence, not the field");
  } finally {
    await operator.stop();
  }
});
