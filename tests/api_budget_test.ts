/**
 * The API budget: writes per object lifecycle, counted by verb, against Kopf 1.44.6's measured
 * figures (shared/reference/kopf-source.md §3.3, a CRD with a status subresource): never more
 * writes than Kopf, strictly fewer where Kopf runs several handlers or retries, none when idle.
 */

import assert from "node:assert/strict";
import * as kopf from "@kopf/kopf";
import { ApiNotFoundError } from "../src/api/errors.ts";
import type { RequestCounters } from "../src/api/counters.ts";
import {
  createExample,
  deleteExample,
  freshNamespace,
  getExample,
  patchExample,
  settle,
  testCluster,
} from "./support/cluster.ts";
import { eventually } from "./support/eventually.ts";
import { runOperator } from "./support/operator.ts";
import { EventProbe, queuesDrained } from "./support/probe.ts";

/** Writes so far: patches of any kind (merge, status, JSON) and created Events. */
function writes(counters: RequestCounters): number {
  return counters.count({ verb: "patch" }) + counters.count({ verb: "create" }) + counters.count({ verb: "update" });
}

/** Runs a create / update / delete lifecycle of one object and returns the writes of each phase. */
async function lifecycle(
  registry: kopf.Registry,
  until: { created: (status: Record<string, unknown>) => boolean },
  settings?: kopf.Settings,
): Promise<{ create: number; update: number; delete: number; idle: number }> {
  const { client } = await testCluster();
  const namespace = await freshNamespace(client, "budget");
  const probe = new EventProbe(registry);
  const operator = await runOperator(registry, namespace, settings ? { settings } : {});
  const counters = operator.running.client.counters;
  try {
    let before = writes(counters);
    await createExample(client, namespace, "b", { x: 1 });
    await eventually("the creation to be handled", async () => {
      const body = await getExample(client, namespace, "b");
      const handled = body.metadata.annotations?.["kopf.zalando.org/last-handled-configuration"];
      return handled && until.created((body.status ?? {}) as Record<string, unknown>) || undefined;
    });
    await probe.caughtUp(namespace, "b");
    const create = writes(counters) - before;

    // Not a wait but the stretch of time observed: idle means nothing is written while nothing changes.
    before = writes(counters);
    await settle(3);
    const idle = writes(counters) - before;

    before = writes(counters);
    await patchExample(client, namespace, "b", { spec: { x: 2 } });
    // Handled or not (an operator without update handlers writes nothing for it): seen and done.
    await probe.caughtUp(namespace, "b");
    const update = writes(counters) - before;

    before = writes(counters);
    await deleteExample(client, namespace, "b");
    await eventually("the object to be gone", async () => {
      try {
        await getExample(client, namespace, "b");
        return undefined;
      } catch (error) {
        if (error instanceof ApiNotFoundError) return true;
        throw error;
      }
    });
    await probe.deleted(namespace, "b");
    return { create, update, delete: writes(counters) - before, idle };
  } finally {
    await operator.stop();
  }
}

Deno.test("crud, create returns a dict: 3 / 1 / 1 writes, as Kopf 1.44.6 (3P / 1P / 1P)", async () => {
  const registry = new kopf.Registry();
  kopf.on.create("kopfexamples", { registry }, function createFn() {
    return { message: "hello" };
  });
  kopf.on.update("kopfexamples", { registry }, function updateFn() {});
  kopf.on.delete("kopfexamples", { registry }, function deleteFn() {});
  const figures = await lifecycle(registry, { created: (status) => status.createFn !== undefined });
  assert.deepEqual(figures, { create: 3, update: 1, delete: 1, idle: 0 });
});

Deno.test("a create handler next to a slow one: one checkpoint (2 writes) records it before the slow one ends", async () => {
  // Without checkpoints (the one-patch-per-cycle economy of fast cycles), a crash during the slow
  // handler would re-run the fast one; the checkpoint costs one patch of the main object and one
  // of its status (the fast handler's record and its result).
  const run = async (checkpointDelay: number | null) => {
    const registry = new kopf.Registry();
    kopf.on.create("kopfexamples", { registry }, function fastFn() {
      return { fast: true };
    });
    kopf.on.create("kopfexamples", { registry }, async function slowFn({ signal }) {
      await kopf.sleep(4, signal);
    });
    const settings = new kopf.Settings();
    settings.persistence.checkpointDelay = checkpointDelay;
    return await lifecycle(registry, { created: (status) => status.fastFn !== undefined }, settings);
  };
  const without = await run(null);
  const checkpointed = await run(1);
  assert.deepEqual(without, { create: 2, update: 0, delete: 0, idle: 0 });
  assert.deepEqual(checkpointed, { create: 4, update: 0, delete: 0, idle: 0 });
});

Deno.test("3 create + 2 update + 2 delete handlers: 2 / 1 / 1 writes, fewer than Kopf 1.44.6 (4P / 2P / 3P)", async () => {
  const registry = new kopf.Registry();
  for (const id of ["c1", "c2", "c3"]) kopf.on.create("kopfexamples", { registry, id }, () => {});
  for (const id of ["u1", "u2"]) kopf.on.update("kopfexamples", { registry, id }, () => {});
  for (const id of ["d1", "d2"]) kopf.on.delete("kopfexamples", { registry, id }, () => {});
  const figures = await lifecycle(registry, { created: () => true });
  assert.deepEqual(figures, { create: 2, update: 1, delete: 1, idle: 0 });
  assert.ok(figures.create < 4 && figures.update < 2 && figures.delete < 3);
});

Deno.test("one create handler failing temporarily twice: 3 writes, fewer than Kopf 1.44.6 (5P)", async () => {
  const registry = new kopf.Registry();
  kopf.on.create("kopfexamples", { registry }, function flakyFn({ retry }) {
    if (retry < 2) throw new kopf.TemporaryError("later", { delay: 1 });
  });
  const figures = await lifecycle(registry, { created: () => true });
  assert.equal(figures.create, 3);
  assert.ok(figures.create < 5);
  assert.equal(figures.idle, 0);
});

Deno.test("a create handler logging five lines: 1 / 0 writes, Kopf 1.44.6 1P / 1P (no Events)", async () => {
  const registry = new kopf.Registry();
  kopf.on.create("kopfexamples", { registry }, function chattyFn({ logger }) {
    for (let line = 1; line <= 5; line++) logger.info(`line ${line}`);
  });
  const figures = await lifecycle(registry, { created: () => true });
  assert.equal(figures.create, 1);
  assert.equal(figures.update, 0, "no handler takes the change: no diff-base for it (Kopf: 1P)");
});

Deno.test("on.event only: no writes at all, as Kopf 1.44.6", async () => {
  const registry = new kopf.Registry();
  let events = 0;
  kopf.on.event("kopfexamples", { registry }, function countFn() {
    events++;
  });
  const { client } = await testCluster();
  const namespace = await freshNamespace(client, "budget-events");
  const operator = await runOperator(registry, namespace);
  try {
    await createExample(client, namespace, "e");
    await patchExample(client, namespace, "e", { spec: { x: 1 } });
    await deleteExample(client, namespace, "e");
    await eventually("three events", () => events >= 3 || undefined);
    await queuesDrained();
    assert.equal(writes(operator.running.client.counters), 0);
  } finally {
    await operator.stop();
  }
});

Deno.test("a patch that changes nothing is never sent", async () => {
  const registry = new kopf.Registry();
  let events = 0;
  kopf.on.event("kopfexamples", { registry }, function readyFn({ patch }) {
    events++;
    patch.status.phase = "Ready";
  });
  const { client } = await testCluster();
  const namespace = await freshNamespace(client, "budget-noop");
  const operator = await runOperator(registry, namespace);
  try {
    await createExample(client, namespace, "n");
    await eventually("the phase", async () => {
      const body = await getExample(client, namespace, "n");
      return (body.status as Record<string, unknown> | undefined)?.phase === "Ready" || undefined;
    });
    await patchExample(client, namespace, "n", { spec: { x: 1 } });
    await eventually("the events of the echo and the change", () => events >= 3 || undefined);
    await queuesDrained();
    assert.equal(writes(operator.running.client.counters), 1, "only the first event changed the phase");
  } finally {
    await operator.stop();
  }
});

Deno.test("4 explicit events in a create handler: 1 patch + 4 Events, as Kopf 1.44.6 (1P+4E)", async () => {
  const registry = new kopf.Registry();
  kopf.on.create("kopfexamples", { registry }, function eventsFn({ body }) {
    kopf.info(body, { reason: "SomeReason", message: "Some message" });
    kopf.warn(body, { reason: "SomeReason", message: "Some warning" });
    kopf.event(body, { type: "Normal", reason: "Custom", message: "A custom event" });
    kopf.exception(body, { reason: "SomeReason", message: "An exception", error: new Error("boom") });
  });
  const probe = new EventProbe(registry);
  const { client } = await testCluster();
  const namespace = await freshNamespace(client, "budget-events");
  const operator = await runOperator(registry, namespace);
  try {
    await createExample(client, namespace, "ev");
    await eventually("the creation to be handled", async () => {
      const body = await getExample(client, namespace, "ev");
      return body.metadata.annotations?.["kopf.zalando.org/last-handled-configuration"];
    });
    const counters = operator.running.client.counters;
    await eventually("four Events", () => counters.count({ verb: "create", resource: "events" }) >= 4 || undefined);
    await probe.caughtUp(namespace, "ev");
    await operator.stop(); // the operator sends what its poster holds before it stops
    assert.equal(counters.count({ verb: "patch" }), 1);
    assert.equal(counters.count({ verb: "create", resource: "events" }), 4);
  } finally {
    await operator.stop();
  }
});

Deno.test("a create handler with 2 sub-handlers: 1 / 0 writes, fewer than Kopf 1.44.6 (2P / 1P)", async () => {
  const registry = new kopf.Registry();
  kopf.on.create("kopfexamples", { registry }, function parentFn({ subhandler }) {
    subhandler({ id: "item1" }, () => {});
    subhandler({ id: "item2" }, () => {});
  });
  const figures = await lifecycle(registry, { created: () => true });
  assert.equal(figures.create, 1);
  assert.equal(figures.update, 0, "no handler takes the change: no diff-base for it (Kopf: 1P)");
  assert.equal(figures.idle, 0);
});
