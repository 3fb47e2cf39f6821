/**
 * Timers against a real API server: intervals, sharp grids, idle
 * periods, the initial delay, one-shot timers, errors rescheduling the next call, stopping on
 * deletion, and no request at all for a result that the object already has.
 */

import assert from "node:assert/strict";
import * as kopf from "@kopf/kopf";
import {
  createExample,
  deleteExample,
  exampleGone,
  freshNamespace,
  getExample,
  patchExample,
  settle,
  testCluster,
} from "./support/cluster.ts";
import { eventually } from "./support/eventually.ts";
import { runOperator } from "./support/operator.ts";
import { backgroundEnded, backgroundRunning, EventProbe } from "./support/probe.ts";

type Status = Record<string, unknown>;

async function statusOf(namespace: string, name: string): Promise<Status> {
  const { client } = await testCluster();
  return ((await getExample(client, namespace, name)).status ?? {}) as Status;
}

Deno.test("interval: a timer is called again and again, and its results reach the status", async () => {
  const { client } = await testCluster();
  const namespace = await freshNamespace(client, "timer");
  const registry = new kopf.Registry();
  kopf.timer("kopfexamples", { registry, interval: 0.5 }, function counter({ memo }) {
    memo.n = ((memo.n as number | undefined) ?? 0) + 1;
    return memo.n as number;
  });
  const operator = await runOperator(registry, namespace);
  try {
    await createExample(client, namespace, "t1");
    await eventually(
      "three calls",
      async () => ((await statusOf(namespace, "t1")).counter as number) >= 3 || undefined,
    );
  } finally {
    await operator.stop();
  }
});

Deno.test("a timer never runs twice at once for one object, also when a call outlasts the interval", async () => {
  const { client } = await testCluster();
  const namespace = await freshNamespace(client, "timer");
  const registry = new kopf.Registry();
  const active = new Map<string, number>();
  let most = 0;
  let calls = 0;
  for (const sharp of [false, true]) {
    const id = `slow-${sharp}`;
    kopf.timer("kopfexamples", { registry, interval: 0.2, sharp, id }, async function slow() {
      active.set(id, (active.get(id) ?? 0) + 1);
      most = Math.max(most, active.get(id)!);
      calls++;
      await kopf.sleep(0.5);
      active.set(id, active.get(id)! - 1);
    });
  }
  const operator = await runOperator(registry, namespace);
  try {
    await createExample(client, namespace, "t2");
    await eventually("several calls", () => calls >= 6 || undefined);
    assert.equal(most, 1, `at most one call per timer at a time, saw ${most} at once`);
  } finally {
    await operator.stop();
  }
});

Deno.test("idle: a timer waits until the object has not changed for so long; changes of its status do not count", async () => {
  const { client } = await testCluster();
  const namespace = await freshNamespace(client, "timer");
  const registry = new kopf.Registry();
  const calls: number[] = [];
  kopf.timer("kopfexamples", { registry, idle: 4, interval: 0.5 }, function quiet() {
    calls.push(Date.now());
    return { calls: calls.length };
  });
  const operator = await runOperator(registry, namespace);
  try {
    await createExample(client, namespace, "t3", { step: 0 });
    for (let step = 1; step <= 6; step++) {
      // Not a wait: the pace of the changes is the scenario.
      await settle(1);
      await patchExample(client, namespace, "t3", { spec: { step } });
    }
    // A change every second keeps a 4-second idle period from ever passing.
    assert.equal(calls.length, 0);
    const quietSince = Date.now();
    await eventually("calls after the changes stop", () => calls.length >= 3 || undefined);
    assert.ok(calls[0] - quietSince >= 3000, `the first call came ${calls[0] - quietSince} ms after the last change`);
    // The timer's own status results are no changes: it keeps being called.
    await eventually("more calls", () => calls.length >= 6 || undefined);
  } finally {
    await operator.stop();
  }
});

Deno.test("initialDelay: the first call comes no sooner than the delay", async () => {
  const { client } = await testCluster();
  const namespace = await freshNamespace(client, "timer");
  const registry = new kopf.Registry();
  const calls: number[] = [];
  kopf.timer("kopfexamples", { registry, interval: 0.5, initialDelay: 3 }, function late() {
    calls.push(Date.now());
  });
  const operator = await runOperator(registry, namespace);
  try {
    const created = Date.now();
    await createExample(client, namespace, "t4");
    await eventually("the first call", () => calls.length > 0 || undefined);
    assert.ok(calls[0] - created >= 3000, `called ${calls[0] - created} ms after the creation`);
  } finally {
    await operator.stop();
  }
});

Deno.test("a timer with neither interval nor idle is called exactly once per object", async () => {
  const { client } = await testCluster();
  const namespace = await freshNamespace(client, "timer");
  const registry = new kopf.Registry();
  const calls: string[] = [];
  kopf.timer("kopfexamples", { registry }, function once({ name }) {
    calls.push(name!);
  });
  const probe = new EventProbe(registry);
  const operator = await runOperator(registry, namespace);
  try {
    await createExample(client, namespace, "t5a");
    await createExample(client, namespace, "t5b");
    await eventually("both calls", () => calls.length >= 2 || undefined);
    await backgroundEnded("timer");
    await patchExample(client, namespace, "t5a", { spec: { touched: true } });
    await probe.caughtUp(namespace, "t5a");
    assert.equal(backgroundRunning("timer"), 0, "not started again");
    assert.deepEqual(calls.sort(), ["t5a", "t5b"]);
  } finally {
    await operator.stop();
  }
});

Deno.test("errors: a failing timer is retried after its backoff, and the retry counter restarts after a success", async () => {
  const { client } = await testCluster();
  const namespace = await freshNamespace(client, "timer");
  const registry = new kopf.Registry();
  const retries: number[] = [];
  kopf.timer("kopfexamples", { registry, interval: 1, backoff: 0.3 }, function shaky({ retry }) {
    retries.push(retry);
    if (retry < 2) throw new Error("shaky");
  });
  const operator = await runOperator(registry, namespace);
  try {
    await createExample(client, namespace, "t6");
    await eventually("two rounds", () => retries.length >= 6 || undefined);
    assert.deepEqual(retries.slice(0, 6), [0, 1, 2, 0, 1, 2]);
  } finally {
    await operator.stop();
  }
});

Deno.test("a timer failing permanently is not called again and releases the object", async () => {
  const { client } = await testCluster();
  const namespace = await freshNamespace(client, "timer");
  const registry = new kopf.Registry();
  let calls = 0;
  kopf.timer("kopfexamples", { registry, interval: 0.2 }, function doomed() {
    calls++;
    throw new kopf.PermanentError("never");
  });
  const probe = new EventProbe(registry);
  const operator = await runOperator(registry, namespace);
  try {
    await createExample(client, namespace, "t7");
    await eventually("the finalizer's removal", async () => {
      const body = await getExample(client, namespace, "t7");
      return (calls > 0 && !body.metadata.finalizers?.length) || undefined;
    });
    await backgroundEnded("timer");
    await probe.caughtUp(namespace, "t7");
    assert.equal(backgroundRunning("timer"), 0, "not started again");
    assert.equal(calls, 1);
  } finally {
    await operator.stop();
  }
});

Deno.test("deleting an object stops its timer and the object goes away", async () => {
  const { client } = await testCluster();
  const namespace = await freshNamespace(client, "timer");
  const registry = new kopf.Registry();
  const calls: string[] = [];
  kopf.timer("kopfexamples", { registry, interval: 30 }, function rare({ name }) {
    calls.push(name!);
  });
  const operator = await runOperator(registry, namespace);
  try {
    await createExample(client, namespace, "t8");
    await eventually("the first call", () => calls.length > 0 || undefined);
    const body = await getExample(client, namespace, "t8");
    assert.ok(body.metadata.finalizers?.includes("kopf.zalando.org/KopfFinalizerMarker"));
    await deleteExample(client, namespace, "t8");
    await exampleGone(client, namespace, "t8");
    assert.equal(calls.length, 1);
  } finally {
    await operator.stop();
  }
});

Deno.test("a timer whose result and patch the object already has sends no request (budget)", async () => {
  const { client } = await testCluster();
  const namespace = await freshNamespace(client, "timer");
  const registry = new kopf.Registry();
  let calls = 0;
  kopf.timer("kopfexamples", { registry, interval: 0.2 }, function steady({ patch }) {
    calls++;
    patch.status.phase = "Steady";
    return { ok: true };
  });
  const probe = new EventProbe(registry);
  const operator = await runOperator(registry, namespace);
  try {
    await createExample(client, namespace, "t9");
    await eventually("the first results", async () => {
      const status = await statusOf(namespace, "t9");
      return status.phase === "Steady" && status.steady ? true : undefined;
    });
    await probe.caughtUp(namespace, "t9");
    const counters = operator.running.client.counters;
    const before = counters.snapshot();
    const callsBefore = calls;
    await eventually("three more calls", () => calls - callsBefore >= 3);
    const after = counters.snapshot();
    assert.ok(calls - callsBefore >= 3, `the timer kept running: ${calls - callsBefore} calls`);
    assert.deepEqual(after, before);
  } finally {
    await operator.stop();
  }
});
