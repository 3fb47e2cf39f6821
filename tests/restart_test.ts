/**
 * Restarts against a real API server: an object deleted while the operator was stopped is
 * handled when it starts again; and an operator killed with SIGKILL in the
 * middle of a handler resumes from what it had persisted: succeeded handlers are not re-run,
 * delayed ones keep their retry count and start time, and deletions made while it was dead are
 * not left stuck.
 */

import assert from "node:assert/strict";
import * as kopf from "@kopf/kopf";
import type { KubernetesObject } from "../src/model/body.ts";
import {
  createExample,
  deleteExample,
  exampleGone,
  freshNamespace,
  getExample,
  testCluster,
} from "./support/cluster.ts";
import { eventually } from "./support/eventually.ts";
import { KopfProcess } from "./support/kopf_process.ts";
import { runOperator } from "./support/operator.ts";

const FINALIZER = "kopf.zalando.org/KopfFinalizerMarker";
const DIFF_BASE = "kopf.zalando.org/last-handled-configuration";

type Status = Record<string, unknown>;

Deno.test("an object deleted while the operator is down stays until it starts, then its delete handler runs", async () => {
  const { client } = await testCluster();
  const namespace = await freshNamespace(client, "down");
  const registry = new kopf.Registry();
  const calls: string[] = [];
  kopf.on.create("kopfexamples", { registry }, function createFn({ name }) {
    calls.push(`create ${name}`);
  });
  kopf.on.delete("kopfexamples", { registry }, function deleteFn({ name }) {
    calls.push(`delete ${name}`);
  });
  let operator = await runOperator(registry, namespace);
  try {
    await createExample(client, namespace, "a");
    await eventually("the creation to be handled", async () => {
      const body = await getExample(client, namespace, "a");
      return body.metadata.annotations?.[DIFF_BASE] && body.metadata.finalizers?.includes(FINALIZER) || undefined;
    });
  } finally {
    await operator.stop();
  }

  await deleteExample(client, namespace, "a");
  await new Promise((resolve) => setTimeout(resolve, 1000));
  const stuck = await getExample(client, namespace, "a");
  assert.ok(stuck.metadata.deletionTimestamp, "being deleted");
  assert.deepEqual(stuck.metadata.finalizers, [FINALIZER], "held by our finalizer while no operator runs");
  assert.deepEqual(calls, ["create a"]);

  operator = await runOperator(registry, namespace);
  try {
    await exampleGone(client, namespace, "a");
    assert.deepEqual(calls, ["create a", "delete a"]);
  } finally {
    await operator.stop();
  }
});

interface Invocation {
  handler: string;
  name: string;
  retry: number;
  phase: "first" | "second";
  started?: string;
  sleeping?: boolean;
}

async function invocations(path: string): Promise<Invocation[]> {
  const text = await Deno.readTextFile(path).catch(() => "");
  return text.split("\n").filter(Boolean).map((line) => JSON.parse(line));
}

Deno.test("SIGKILL mid-handler: succeeded handlers are not re-run, delayed ones resume, deletions are not stuck", async () => {
  const { client } = await testCluster();
  const namespace = await freshNamespace(client, "sigkill");
  const log = await Deno.makeTempFile({ prefix: "kopf-restart-", suffix: ".jsonl" });
  const handlers = "tests/fixtures/restart_handlers.ts";
  const calls = async (handler: string, name: string) =>
    (await invocations(log)).filter((entry) => entry.handler === handler && entry.name === name);

  // Phase 1: x's handlers get a first cycle persisted, then slowFn hangs in its second attempt; y is fully handled.
  const first = await KopfProcess.start(namespace, [handlers], {
    KOPF_TEST_INVOCATIONS: log,
    KOPF_TEST_PHASE: "first",
  });
  let beforeKill: KubernetesObject;
  try {
    await createExample(client, namespace, "x");
    await createExample(client, namespace, "y");
    await eventually("y to be fully handled", async () => {
      const body = await getExample(client, namespace, "y");
      return body.metadata.annotations?.[DIFF_BASE] ? true : undefined;
    });
    await eventually("slowFn to hang in its second attempt", async () => {
      return (await calls("slowFn", "x")).some((entry) => entry.sleeping) || undefined;
    });
    beforeKill = await getExample(client, namespace, "x");
  } catch (error) {
    await first.stop("SIGKILL");
    throw new Error(`${error}\n--- output ---\n${first.output}`);
  }
  const killed = await first.stop("SIGKILL");
  assert.equal(killed.signal, "SIGKILL");

  const annotations = beforeKill.metadata.annotations ?? {};
  const aRecord = JSON.parse(annotations["kopf.zalando.org/aFn"]);
  const tempRecord = JSON.parse(annotations["kopf.zalando.org/tempFn"]);
  assert.equal(aRecord.success, true, "aFn's success was persisted before the kill");
  assert.equal((beforeKill.status as Status).aFn !== undefined, true);
  assert.equal(tempRecord.retries, 1);
  assert.ok(tempRecord.delayed, "tempFn is delayed");
  assert.equal(annotations[DIFF_BASE], undefined, "x's creation is not finished");

  // While the operator is dead, y is deleted: our finalizer holds it.
  await deleteExample(client, namespace, "y");
  const held = await getExample(client, namespace, "y");
  assert.ok(held.metadata.deletionTimestamp && held.metadata.finalizers?.includes(FINALIZER));

  // Phase 2: a fresh process resumes from the state on the objects.
  const second = await KopfProcess.start(namespace, [handlers], {
    KOPF_TEST_INVOCATIONS: log,
    KOPF_TEST_PHASE: "second",
  });
  try {
    await exampleGone(client, namespace, "y");
    await eventually("x's creation to finish", async () => {
      const body = await getExample(client, namespace, "x");
      return body.metadata.annotations?.[DIFF_BASE] ? body : undefined;
    }, { seconds: 120 });
    await new Promise((resolve) => setTimeout(resolve, 1000));
  } catch (error) {
    throw new Error(`${error}\n--- output ---\n${second.output}`);
  } finally {
    await second.stop("SIGTERM");
  }

  const all = await invocations(log);
  const text = all.map((entry) => JSON.stringify(entry)).join("\n");
  assert.deepEqual((await calls("aFn", "x")).map((entry) => entry.phase), ["first"], `aFn not re-run:\n${text}`);
  assert.deepEqual((await calls("aFn", "y")).map((entry) => entry.phase), ["first"], text);

  const temp = await calls("tempFn", "x");
  assert.deepEqual(temp.map((entry) => [entry.phase, entry.retry]), [["first", 0], ["second", 1]], text);
  assert.equal(temp[1].retry, tempRecord.retries, "the stored retry count");
  assert.equal(temp[1].started, temp[0].started, "the stored start of the first attempt");
  assert.equal(temp[1].started!.slice(0, 23), tempRecord.started.slice(0, 23));

  // The attempt that was killed was never recorded: it is re-run with the same retry number.
  const slow = (await calls("slowFn", "x")).filter((entry) => !entry.sleeping);
  assert.deepEqual(slow.map((entry) => [entry.phase, entry.retry]), [["first", 0], ["first", 1], ["second", 1]], text);

  assert.deepEqual((await calls("deleteFn", "y")).map((entry) => entry.phase), ["second"], text);

  const x = await getExample(client, namespace, "x");
  assert.deepEqual((x.status as Status).tempFn, { retry: 1 });
  assert.deepEqual((x.status as Status).slowFn, { retry: 1 });
  const progress = Object.keys(x.metadata.annotations ?? {}).filter((key) =>
    key.startsWith("kopf.zalando.org/") && key !== DIFF_BASE
  );
  assert.deepEqual(progress, [], "progress purged once done");
  await Deno.remove(log);
});

Deno.test("SIGKILL 4 s into a slow handler: its sibling that finished at once is not re-run after the restart", async () => {
  const { client } = await testCluster();
  const namespace = await freshNamespace(client, "checkpoint");
  const log = await Deno.makeTempFile({ prefix: "kopf-checkpoint-", suffix: ".jsonl" });
  const handlers = "tests/fixtures/checkpoint_handlers.ts";
  const calls = async (handler: string) => (await invocations(log)).filter((entry) => entry.handler === handler);

  const first = await KopfProcess.start(namespace, [handlers], {
    KOPF_TEST_INVOCATIONS: log,
    KOPF_TEST_PHASE: "first",
  });
  try {
    await createExample(client, namespace, "c");
    await eventually("slowFn to start", async () => (await calls("slowFn")).length > 0 || undefined);
  } catch (error) {
    await first.stop("SIGKILL");
    throw new Error(`${error}\n--- output ---\n${first.output}`);
  }
  // The scenario of the report: the kill comes while the 15 s handler runs, after its sibling's
  // success is written (if it never is, slowFn finishes before the kill and is not re-run below).
  // The checkpoint writes the object, then its status subresource: both are awaited.
  const beforeKill = await eventually("instantFn's success and result to be written", async () => {
    const body = await getExample(client, namespace, "c");
    const record = JSON.parse(body.metadata.annotations?.["kopf.zalando.org/instantFn"] ?? "null");
    return record?.success && (body.status as Status | undefined)?.instantFn !== undefined ? body : undefined;
  });
  const killed = await first.stop("SIGKILL");
  assert.equal(killed.signal, "SIGKILL");

  const second = await KopfProcess.start(namespace, [handlers], {
    KOPF_TEST_INVOCATIONS: log,
    KOPF_TEST_PHASE: "second",
  });
  try {
    // The status subresource is patched after the object itself: both writes of the cycle are done.
    await eventually("c's creation to finish", async () => {
      const body = await getExample(client, namespace, "c");
      return body.metadata.annotations?.[DIFF_BASE] && (body.status as Status | undefined)?.slowFn ? body : undefined;
    }, { seconds: 120 });
  } catch (error) {
    throw new Error(`${error}\n--- output ---\n${second.output}`);
  } finally {
    await second.stop("SIGTERM");
  }

  const text = (await invocations(log)).map((entry) => JSON.stringify(entry)).join("\n");
  assert.deepEqual((await calls("instantFn")).map((entry) => entry.phase), ["first"], `instantFn not re-run:\n${text}`);
  const record = JSON.parse(beforeKill.metadata.annotations?.["kopf.zalando.org/instantFn"] ?? "null");
  assert.equal(record?.success, true, `instantFn's success was written while slowFn ran:\n${text}`);
  assert.deepEqual((beforeKill.status as Status).instantFn, { instant: true });
  assert.deepEqual((await calls("slowFn")).map((entry) => entry.phase), ["first", "second"], text);
  const body = await getExample(client, namespace, "c");
  assert.deepEqual(body.status as Status, { instantFn: { instant: true }, slowFn: { slow: true } });
  await Deno.remove(log);
});
