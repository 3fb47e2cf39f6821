/**
 * `timeout` as a hard deadline against a real API server: a change handler or a timer that never
 * finishes fails with a HandlerTimeoutError at its deadline (for good), its `signal` aborts, the
 * failure is logged, a handler that ignores the signal is left behind with a warning, and the
 * object's processing goes on — its deletion completes.
 */

import assert from "node:assert/strict";
import { reset } from "@logtape/logtape";
import * as kopf from "@kopf/kopf";
import {
  createExample,
  deleteExample,
  exampleGone,
  freshNamespace,
  getExample,
  testCluster,
} from "./support/cluster.ts";
import { eventually } from "./support/eventually.ts";
import { captureLogs } from "./support/logs.ts";
import { runOperator } from "./support/operator.ts";
import { EventProbe } from "./support/probe.ts";

/** A promise that never settles and holds no timer: a handler stuck on something that never answers. */
function never(): Promise<never> {
  return new Promise(() => {});
}

Deno.test("a create handler past its timeout fails for good at the deadline; deletion then completes", async () => {
  const { client } = await testCluster();
  const namespace = await freshNamespace(client, "hung");
  const lines = await captureLogs();
  const registry = new kopf.Registry();
  const calls: string[] = [];
  const signals: { aborted: boolean; timedOut: boolean }[] = [];
  kopf.on.create("kopfexamples", { registry, timeout: 2 }, async function hungFn() {
    calls.push("hungFn");
    await never();
  });
  kopf.on.create("kopfexamples", { registry, timeout: 2 }, async function politeFn({ signal }) {
    calls.push("politeFn");
    await kopf.sleep(600, signal);
    signals.push({ aborted: signal.aborted, timedOut: signal.reason instanceof kopf.HandlerTimeoutError });
    throw signal.reason;
  });
  kopf.on.delete("kopfexamples", { registry }, function deleteFn() {
    calls.push("deleteFn");
  });
  const probe = new EventProbe(registry);
  const operator = await runOperator(registry, namespace);
  try {
    await createExample(client, namespace, "h");
    const body = await eventually("both creation handlers to be given up", async () => {
      const body = await getExample(client, namespace, "h");
      const done = body.metadata.annotations?.["kopf.zalando.org/last-handled-configuration"];
      return done ? body : undefined;
    }, { seconds: 90 });
    assert.equal(body.metadata.annotations?.["kopf.zalando.org/hungFn"], undefined, "progress purged once done");
    const text = lines.join("\n");
    assert.match(text, /Handler 'hungFn' ignored its signal and is still running at its 2 s deadline/);
    assert.match(text, /Handler 'hungFn' failed permanently: Handler 'hungFn' has timed out after 2 s\./);
    assert.match(text, /Handler 'politeFn' failed permanently: Handler 'politeFn' has timed out after 2 s\./);
    assert.match(text, /Creation is processed: 0 succeeded; 2 failed\./);
    assert.doesNotMatch(
      text,
      /Handler 'politeFn' ignored its signal/,
      "a handler passing its signal on is not left behind",
    );
    assert.deepEqual(signals, [{ aborted: true, timedOut: true }]);

    await deleteExample(client, namespace, "h");
    await exampleGone(client, namespace, "h");
    await probe.deleted(namespace, "h");
    assert.deepEqual(calls, ["hungFn", "politeFn", "deleteFn"], "given up for good: not retried");
  } finally {
    await operator.stop();
    await reset();
  }
});

Deno.test("settings.execution.handlerTimeout bounds handlers without a timeout of their own", async () => {
  const { client } = await testCluster();
  const namespace = await freshNamespace(client, "default-timeout");
  const lines = await captureLogs();
  const registry = new kopf.Registry();
  kopf.on.create("kopfexamples", { registry }, async function slowFn({ signal }) {
    await kopf.sleep(600, signal);
    return { finished: true };
  });
  kopf.on.delete("kopfexamples", { registry }, function deleteFn() {});
  const settings = new kopf.Settings();
  settings.execution.handlerTimeout = 1;
  const operator = await runOperator(registry, namespace, { settings });
  try {
    await createExample(client, namespace, "d");
    await eventually("the timed-out line", () => lines.find((line) => /has timed out after 1 s/.test(line)), {
      seconds: 60,
    });
    await deleteExample(client, namespace, "d");
    await exampleGone(client, namespace, "d");
    assert.match(lines.join("\n"), /Handler 'slowFn' failed permanently: Handler 'slowFn' has timed out after 1 s\./);
  } finally {
    await operator.stop();
    await reset();
  }
});

Deno.test("a timer call past its timeout fails for good; the object's deletion is not held by it", async () => {
  const { client } = await testCluster();
  const namespace = await freshNamespace(client, "hung-timer");
  const lines = await captureLogs();
  const registry = new kopf.Registry();
  let calls = 0;
  kopf.timer("kopfexamples", { registry, interval: 1, timeout: 2 }, async function hungTimer() {
    calls++;
    await never();
  });
  const operator = await runOperator(registry, namespace);
  try {
    await createExample(client, namespace, "t");
    await eventually(
      "the timer to be given up",
      () => lines.find((line) => /Timer 'hungTimer' failed permanently/.test(line)),
      { seconds: 60 },
    );
    const text = lines.join("\n");
    assert.match(text, /Timer 'hungTimer' ignored its signal and is still running at its 2 s deadline/);
    assert.match(text, /Timer 'hungTimer' has timed out after 2 s\./);
    await deleteExample(client, namespace, "t");
    await exampleGone(client, namespace, "t");
    assert.equal(calls, 1, "a timer given up for good is not called again");
  } finally {
    await operator.stop();
    await reset();
  }
});

Deno.test("a daemon past its timeout is given up and left behind: a deletion is not held by it", async () => {
  const { client } = await testCluster();
  const namespace = await freshNamespace(client, "hung-daemon");
  const lines = await captureLogs();
  const registry = new kopf.Registry();
  let calls = 0;
  kopf.daemon("kopfexamples", { registry, timeout: 2 }, async function hungDaemon() {
    calls++;
    await never();
  });
  const operator = await runOperator(registry, namespace);
  try {
    await createExample(client, namespace, "d");
    await eventually(
      "the daemon to be given up",
      () => lines.find((line) => /Daemon 'hungDaemon' failed permanently/.test(line)),
      { seconds: 60 },
    );
    assert.match(lines.join("\n"), /Daemon 'hungDaemon' ignored its signal and is still running at its 2 s deadline/);
    await deleteExample(client, namespace, "d");
    await exampleGone(client, namespace, "d");
    assert.equal(calls, 1, "a daemon given up for good is not called again");
  } finally {
    await operator.stop();
    await reset();
  }
});

Deno.test("the operator's stop aborts a handler's signal: nothing is recorded, and the next operator runs it again", async () => {
  const { client } = await testCluster();
  const namespace = await freshNamespace(client, "stop-signal");
  const lines = await captureLogs();
  const calls: string[] = [];
  const registry = new kopf.Registry();
  kopf.on.create("kopfexamples", { registry }, async function waitingFn({ signal }) {
    calls.push(calls.length === 0 ? "first" : "again");
    if (calls.length === 1) await kopf.sleep(600, signal);
    return { finished: calls.length };
  });
  let operator = await runOperator(registry, namespace);
  try {
    await createExample(client, namespace, "s");
    await eventually("the handler to start", () => calls.length > 0 || undefined);
    await operator.stop();
    assert.match(
      lines.join("\n"),
      /Handler 'waitingFn' was interrupted: .*It will run again when the object is handled next\./,
    );
    const stopped = await getExample(client, namespace, "s");
    assert.equal((stopped.status as Record<string, unknown> | undefined)?.waitingFn, undefined, "no outcome recorded");

    operator = await runOperator(registry, namespace);
    const done = await eventually("the second run's result", async () => {
      const body = await getExample(client, namespace, "s");
      return (body.status as Record<string, unknown> | undefined)?.waitingFn;
    });
    assert.deepEqual(done, { finished: 2 });
    assert.deepEqual(calls, ["first", "again"]);
  } finally {
    await operator.stop();
    await reset();
  }
});
