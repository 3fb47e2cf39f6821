/**
 * A first operator end to end, in process: on.create and on.event against a real API server.
 */

import assert from "node:assert/strict";
import * as kopf from "@kopf/kopf";
import { runOperator } from "./support/operator.ts";
import { createExample, freshNamespace, getExample, patchExample, testCluster } from "./support/cluster.ts";
import { eventually } from "./support/eventually.ts";

Deno.test("on.create runs once per object, stores its result in status, and applies the patch", async () => {
  const { client } = await testCluster();
  const namespace = await freshNamespace(client, "create");
  await createExample(client, namespace, "listed", { size: 1 });

  const registry = new kopf.Registry();
  const calls: string[] = [];
  kopf.on.create("kopfexamples", { registry }, function createFn({ name, spec, patch, reason, retry, resource }) {
    calls.push(`${name} ${reason} ${retry} ${resource.plural}`);
    patch.metadata.labels.handled = "yes";
    patch.status.phase = "Ready";
    return { message: "hello", size: spec.size };
  });
  const operator = await runOperator(registry, namespace);
  try {
    await createExample(client, namespace, "created", { size: 2 });
    for (const [name, size] of [["listed", 1], ["created", 2]] as const) {
      const body = await eventually(`status.createFn of ${name}`, async () => {
        const body = await getExample(client, namespace, name);
        return (body.status as Record<string, unknown> | undefined)?.createFn ? body : undefined;
      });
      const status = body.status as Record<string, unknown>;
      assert.deepEqual(status.createFn, { message: "hello", size });
      assert.equal(status.phase, "Ready");
      assert.equal(body.metadata.labels?.handled, "yes");
      const diffbase = body.metadata.annotations?.["kopf.zalando.org/last-handled-configuration"];
      assert.ok(diffbase?.endsWith("\n"), "the diff-base is stored as Kopf stores it");
      assert.deepEqual(JSON.parse(diffbase!).spec, { size });
    }
    // A later change is not a creation: the handler does not run again.
    await patchExample(client, namespace, "created", { spec: { size: 3 } });
    await patchExample(client, namespace, "created", { metadata: { labels: { touched: "yes" } } });
    await new Promise((resolve) => setTimeout(resolve, 1000));
    assert.deepEqual(calls.sort(), [`created create 0 kopfexamples`, `listed create 0 kopfexamples`]);
  } finally {
    await operator.stop();
  }
});

Deno.test("on.event sees listed objects with type null, then every change", async () => {
  const { client } = await testCluster();
  const namespace = await freshNamespace(client, "event");
  await createExample(client, namespace, "early");

  const registry = new kopf.Registry();
  const seen: string[] = [];
  kopf.on.event("kopfexamples", { registry }, function eventFn({ type, name, event, memo }) {
    memo.count = ((memo.count as number | undefined) ?? 0) + 1;
    assert.equal(event.type, type);
    seen.push(`${type} ${name} ${memo.count}`);
  });
  const operator = await runOperator(registry, namespace);
  try {
    await createExample(client, namespace, "late");
    await patchExample(client, namespace, "late", { spec: { x: 1 } });
    await eventually("three events", () => seen.length >= 3 || undefined);
    assert.deepEqual(seen, ["null early 1", "ADDED late 1", "MODIFIED late 2"]);
  } finally {
    await operator.stop();
  }
});

Deno.test("events of one object run one at a time; different objects run concurrently", async () => {
  const { client } = await testCluster();
  const namespace = await freshNamespace(client, "serial");
  const registry = new kopf.Registry();
  const active = new Map<string, number>();
  let overall = 0;
  let maxOverall = 0;
  let maxPerObject = 0;
  let handled = 0;
  kopf.on.event("kopfexamples", { registry }, async function slowFn({ name }) {
    active.set(name!, (active.get(name!) ?? 0) + 1);
    overall++;
    maxPerObject = Math.max(maxPerObject, active.get(name!)!);
    maxOverall = Math.max(maxOverall, overall);
    await new Promise((resolve) => setTimeout(resolve, 300));
    active.set(name!, active.get(name!)! - 1);
    overall--;
    handled++;
  });
  const operator = await runOperator(registry, namespace);
  try {
    const names = ["o1", "o2", "o3", "o4", "o5"];
    await Promise.all(names.map((name) => createExample(client, namespace, name)));
    for (let counter = 1; counter <= 3; counter++) {
      await Promise.all(names.map((name) => patchExample(client, namespace, name, { spec: { counter } })));
    }
    await eventually("all 20 events", () => handled >= 20 || undefined);
    assert.equal(maxPerObject, 1, "never two events of one object at once");
    assert.ok(maxOverall > 1, `different objects concurrently (max ${maxOverall})`);
  } finally {
    await operator.stop();
  }
});

Deno.test("a temporary error is retried after its delay, and only the failed handler is re-run", async () => {
  const { client } = await testCluster();
  const namespace = await freshNamespace(client, "retry");
  const registry = new kopf.Registry();
  const calls: string[] = [];
  kopf.on.create("kopfexamples", { registry }, function steadyFn() {
    calls.push("steady");
    return "fine";
  });
  kopf.on.create("kopfexamples", { registry }, function flakyFn({ retry }) {
    calls.push(`flaky ${retry}`);
    if (retry === 0) throw new kopf.TemporaryError("not yet", { delay: 1 });
    return { attempts: retry + 1 };
  });
  const operator = await runOperator(registry, namespace);
  try {
    await createExample(client, namespace, "x");
    const body = await eventually("status.flakyFn", async () => {
      const body = await getExample(client, namespace, "x");
      return (body.status as Record<string, unknown> | undefined)?.flakyFn ? body : undefined;
    });
    const status = body.status as Record<string, unknown>;
    assert.deepEqual(status.flakyFn, { attempts: 2 });
    assert.equal(status.steadyFn, "fine");
    assert.deepEqual(calls, ["steady", "flaky 0", "flaky 1"]);
    const annotations = Object.keys(body.metadata.annotations ?? {}).filter((key) =>
      key.startsWith("kopf.zalando.org/")
    );
    assert.deepEqual(annotations, ["kopf.zalando.org/last-handled-configuration"], "progress purged when done");
  } finally {
    await operator.stop();
  }
});

Deno.test("with nothing changing for 30 s, the operator sends no request besides its open watches", async () => {
  const { client } = await testCluster();
  const namespace = await freshNamespace(client, "idle");
  await createExample(client, namespace, "settled");
  const registry = new kopf.Registry();
  kopf.on.create("kopfexamples", { registry }, function createFn() {
    return "done";
  });
  kopf.on.event("kopfexamples", { registry }, function eventFn() {});
  const operator = await runOperator(registry, namespace);
  try {
    await eventually("the object to be handled", async () => {
      const body = await getExample(client, namespace, "settled");
      return (body.status as Record<string, unknown> | undefined)?.createFn ? true : undefined;
    });
    await new Promise((resolve) => setTimeout(resolve, 2000)); // let the echo of the last patch arrive
    const before = operator.running.client.counters.snapshot();
    await new Promise((resolve) => setTimeout(resolve, 30_000));
    const after = operator.running.client.counters.snapshot();
    assert.deepEqual(after, before, "no request at all in 30 s (the watch stays open)");
    assert.equal(after["watch kopfexamples"], 1, "one watch, opened once");
  } finally {
    await operator.stop();
  }
});

Deno.test("1,000 objects created before the operator starts are all seen: streamed through the watch, or by pages", async () => {
  const { client } = await testCluster();
  const namespace = await freshNamespace(client, "list");
  const names = Array.from({ length: 1000 }, (_, index) => `kex-${String(index).padStart(4, "0")}`);
  for (let start = 0; start < names.length; start += 25) {
    await Promise.all(names.slice(start, start + 25).map((name) => createExample(client, namespace, name)));
  }
  // Event handlers keep no state on the objects: each operator in turn finds all of them as listed.
  for (const streamingLists of [true, false]) {
    const registry = new kopf.Registry();
    const listed = new Set<string>();
    kopf.on.event("kopfexamples", { registry }, function listedFn({ type, name }) {
      if (type === null) listed.add(name!);
    });
    const settings = new kopf.Settings();
    settings.watching.streamingLists = streamingLists;
    settings.watching.listPageSize = 100;
    const operator = await runOperator(registry, namespace, { settings });
    try {
      await eventually("all listed objects to be handled", () => listed.size >= names.length || undefined);
      assert.deepEqual([...listed].sort(), names);
      const lists = operator.running.client.counters.count({ verb: "list", resource: "kopfexamples" });
      assert.equal(lists, streamingLists ? 0 : 10, streamingLists ? "no LIST at all" : "ten pages of 100, one listing");
    } finally {
      await operator.stop();
    }
  }
});
