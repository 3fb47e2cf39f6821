/**
 * Daemons and timers at scale against a real API server: 1,000 objects, each with a timer that
 * returns an unchanged value, cost no writes after the first tick; daemons for 1,000 objects
 * start, and stop cleanly when the objects are deleted, leaving no finalizer behind.
 */

import assert from "node:assert/strict";
import * as kopf from "@kopf/kopf";
import type { Verb } from "../src/api/counters.ts";
import { resourcePath } from "../src/api/paths.ts";
import type { KubernetesObject } from "../src/model/body.ts";
import { createExample, freshNamespace, KOPFEXAMPLES, testCluster } from "./support/cluster.ts";
import { eventually } from "./support/eventually.ts";
import { runOperator } from "./support/operator.ts";

const COUNT = 1000;
const WRITES: Verb[] = ["create", "update", "patch", "delete", "deletecollection"];

async function createMany(namespace: string): Promise<void> {
  const { client } = await testCluster();
  const names = Array.from({ length: COUNT }, (_, index) => `kex-${String(index).padStart(4, "0")}`);
  for (let start = 0; start < names.length; start += 25) {
    await Promise.all(names.slice(start, start + 25).map((name) => createExample(client, namespace, name)));
  }
}

async function listExamples(namespace: string): Promise<KubernetesObject[]> {
  const { client } = await testCluster();
  const list = await client.request<{ items: KubernetesObject[] }>({
    path: resourcePath(KOPFEXAMPLES, { namespace }),
  });
  return list.items;
}

Deno.test("1,000 objects with a timer at interval 1 returning an unchanged value: no writes after the first tick", async () => {
  const { client } = await testCluster();
  const namespace = await freshNamespace(client, "scale");
  await createMany(namespace);
  const registry = new kopf.Registry();
  let calls = 0;
  kopf.timer("kopfexamples", { registry, interval: 1 }, function steady() {
    calls++;
    return { steady: true };
  });
  const operator = await runOperator(registry, namespace);
  try {
    await eventually("every object's first result", async () => {
      const items = await listExamples(namespace);
      return items.every((item) => (item.status as { steady?: unknown } | undefined)?.steady) || undefined;
    }, { seconds: 180 });
    const counters = operator.running.client.counters;
    const writes = () => WRITES.map((verb) => counters.count({ verb })).reduce((a, b) => a + b, 0);
    const before = writes();
    const callsBefore = calls;
    await eventually("two more ticks of every timer", () => calls - callsBefore >= 2 * COUNT, { seconds: 180 });
    assert.ok(calls - callsBefore >= 2 * COUNT, `the timers kept ticking: ${calls - callsBefore} calls`);
    assert.equal(writes() - before, 0, `writes after the first tick: ${JSON.stringify(counters.snapshot())}`);
  } finally {
    await operator.stop();
  }
});

Deno.test("daemons for 1,000 objects start, and stop cleanly when the objects are deleted: no finalizer is left", async () => {
  const { client } = await testCluster();
  const namespace = await freshNamespace(client, "scale");
  await createMany(namespace);
  const registry = new kopf.Registry();
  let started = 0;
  let exited = 0;
  const reasons = new Set<string>();
  kopf.daemon("kopfexamples", { registry }, async function watcher({ stopped }) {
    started++;
    while (!stopped.aborted) await kopf.sleep(30, stopped);
    reasons.add((stopped.reason as kopf.StopReason).causes.join(","));
    exited++;
  });
  const operator = await runOperator(registry, namespace);
  try {
    await eventually("every daemon", () => started === COUNT || undefined, { seconds: 180 });
    await client.request({ method: "DELETE", path: resourcePath(KOPFEXAMPLES, { namespace }) });
    await eventually(
      "every object to be gone",
      async () => (await listExamples(namespace)).length === 0 || undefined,
      { seconds: 180 },
    );
    assert.equal(exited, COUNT);
    assert.deepEqual([...reasons], ["resourceDeleted"]);
  } finally {
    await operator.stop();
  }
});
