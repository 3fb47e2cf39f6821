/**
 * Daemons against a real API server: spawning with the finalizer, the
 * initial delay, exiting on their own, retries, the stop signal and its reasons on deletion, on
 * a filter mismatch and on the operator's exit (in-process, and `kopf run` on SIGTERM), the
 * cancellation stages, and the live body.
 */

import assert from "node:assert/strict";
import { reset } from "@logtape/logtape";
import * as kopf from "@kopf/kopf";
import type { StopCause } from "@kopf/kopf/advanced";
import { KopfRunner } from "../testing.ts";
import {
  createExample,
  deleteExample,
  exampleGone,
  freshNamespace,
  getExample,
  patchExample,
  testCluster,
} from "./support/cluster.ts";
import { eventually } from "./support/eventually.ts";
import { captureLogs } from "./support/logs.ts";
import { runOperator } from "./support/operator.ts";
import { backgroundEnded, backgroundRunning, EventProbe } from "./support/probe.ts";

const FINALIZER = "kopf.zalando.org/KopfFinalizerMarker";
const ROOT = new URL("..", import.meta.url).pathname;
const EXITING = "tests/fixtures/daemons/exiting.ts";

function indexOf(lines: readonly string[], pattern: RegExp): number {
  return lines.findIndex((line) => pattern.test(line));
}

Deno.test("a daemon starts for an object soon after it appears, and the object gets the finalizer", async () => {
  const { client } = await testCluster();
  const namespace = await freshNamespace(client, "daemon");
  const registry = new kopf.Registry();
  const ticks: string[] = [];
  kopf.daemon("kopfexamples", { registry }, async function ticker({ name, stopped }) {
    while (!stopped.aborted) {
      ticks.push(name!);
      await kopf.sleep(0.2, stopped);
    }
  });
  const operator = await runOperator(registry, namespace);
  try {
    await createExample(client, namespace, "d1");
    await eventually("ticks", () => ticks.length >= 3 || undefined);
    const body = await getExample(client, namespace, "d1");
    assert.ok(body.metadata.finalizers?.includes(FINALIZER), `finalizers: ${body.metadata.finalizers}`);
    assert.ok(ticks.every((name) => name === "d1"));
    await deleteExample(client, namespace, "d1");
    await exampleGone(client, namespace, "d1");
  } finally {
    await operator.stop();
  }
});

Deno.test("initialDelay: the first call comes no sooner than the delay after the object appears", async () => {
  const { client } = await testCluster();
  const namespace = await freshNamespace(client, "daemon");
  const registry = new kopf.Registry();
  const calls: number[] = [];
  kopf.daemon("kopfexamples", { registry, initialDelay: 3 }, async function delayed({ stopped }) {
    calls.push(Date.now());
    while (!stopped.aborted) await kopf.sleep(10, stopped);
  });
  const operator = await runOperator(registry, namespace);
  try {
    const created = Date.now();
    await createExample(client, namespace, "d2");
    await eventually("the first call", () => calls.length > 0 || undefined);
    // A lower bound only: a slow machine makes the gap longer, never shorter.
    assert.ok(calls[0] - created >= 3000, `called ${calls[0] - created} ms after the creation`);
  } finally {
    await operator.stop();
  }
});

Deno.test("a daemon that returns is done: its result is stored, it is not called again, and it no longer holds the finalizer", async () => {
  const { client } = await testCluster();
  const namespace = await freshNamespace(client, "daemon");
  const registry = new kopf.Registry();
  let calls = 0;
  kopf.daemon("kopfexamples", { registry }, async function once({ stopped, patch }) {
    calls++;
    await kopf.sleep(1, stopped);
    patch.status.note = "patched by the daemon";
    return { finished: true };
  });
  const probe = new EventProbe(registry);
  const operator = await runOperator(registry, namespace);
  try {
    await createExample(client, namespace, "d3");
    const body = await eventually("the result and no finalizer", async () => {
      const body = await getExample(client, namespace, "d3");
      const status = body.status as Record<string, unknown> | undefined;
      const released = !body.metadata.finalizers?.includes(FINALIZER);
      return (status?.once as { finished?: boolean } | undefined)?.finished && released ? body : undefined;
    });
    assert.equal((body.status as Record<string, unknown>).note, "patched by the daemon");
    await backgroundEnded("daemon");
    await patchExample(client, namespace, "d3", { spec: { touched: 1 } });
    await probe.caughtUp(namespace, "d3");
    assert.equal(backgroundRunning("daemon"), 0, "not started again");
    assert.equal(calls, 1);
  } finally {
    await operator.stop();
  }
});

Deno.test("a daemon failing with TemporaryError is called again after the delay, with retry counting up", async () => {
  const { client } = await testCluster();
  const namespace = await freshNamespace(client, "daemon");
  const registry = new kopf.Registry();
  const retries: number[] = [];
  kopf.daemon("kopfexamples", { registry }, function flaky({ retry }) {
    retries.push(retry);
    if (retry < 3) throw new kopf.TemporaryError("not yet", { delay: 0.5 });
    return { attempts: retry + 1 };
  });
  const operator = await runOperator(registry, namespace);
  try {
    await createExample(client, namespace, "d4");
    await eventually("the result", async () => {
      const status = (await getExample(client, namespace, "d4")).status as Record<string, unknown> | undefined;
      return status?.flaky ?? undefined;
    });
    await backgroundEnded("daemon");
    assert.deepEqual(retries, [0, 1, 2, 3]);
  } finally {
    await operator.stop();
  }
});

Deno.test("a daemon failing permanently is not called again", async () => {
  const { client } = await testCluster();
  const namespace = await freshNamespace(client, "daemon");
  const registry = new kopf.Registry();
  let calls = 0;
  kopf.daemon("kopfexamples", { registry }, function broken() {
    calls++;
    throw new kopf.PermanentError("no way");
  });
  const probe = new EventProbe(registry);
  const operator = await runOperator(registry, namespace);
  try {
    await createExample(client, namespace, "d5");
    await eventually("the call", () => calls > 0 || undefined);
    // Having ended for good, it no longer holds the finalizer.
    await eventually("the finalizer's removal", async () => {
      const body = await getExample(client, namespace, "d5");
      return !body.metadata.finalizers?.includes(FINALIZER) || undefined;
    });
    await backgroundEnded("daemon");
    await probe.caughtUp(namespace, "d5");
    assert.equal(backgroundRunning("daemon"), 0, "not started again");
    assert.equal(calls, 1);
  } finally {
    await operator.stop();
  }
});

Deno.test("deleting the object stops its daemon at once (resourceDeleted) and the object goes away", async () => {
  const { client } = await testCluster();
  const namespace = await freshNamespace(client, "daemon");
  const registry = new kopf.Registry();
  const reasons: StopCause[][] = [];
  let running = false;
  kopf.daemon("kopfexamples", { registry }, async function polite({ stopped }) {
    running = true;
    while (!stopped.aborted) await kopf.sleep(30, stopped);
    reasons.push((stopped.reason as kopf.StopReason).causes);
  });
  const lines = await captureLogs();
  const operator = await runOperator(registry, namespace);
  try {
    await createExample(client, namespace, "d6");
    await eventually("the daemon", () => running || undefined);
    await eventually("the finalizer", async () => {
      return (await getExample(client, namespace, "d6")).metadata.finalizers?.includes(FINALIZER) || undefined;
    });
    await deleteExample(client, namespace, "d6");
    await exampleGone(client, namespace, "d6");
    assert.deepEqual(reasons, [["resourceDeleted"]]);
    // It exited within the instant-exit turns: the deletion never had to wait for it.
    assert.ok(!lines.some((line) => line.includes("is still exiting")), lines.join("\n"));
  } finally {
    await operator.stop();
    await reset();
  }
});

Deno.test("a daemon that ignores the stop: cancellationTimeout leaves it orphaned and releases the object", async () => {
  const { client } = await testCluster();
  const namespace = await freshNamespace(client, "daemon");
  const registry = new kopf.Registry();
  const release = new AbortController();
  let running = false;
  kopf.daemon("kopfexamples", { registry, cancellationTimeout: 1 }, async function stubborn() {
    running = true;
    await kopf.sleep(120, release.signal);
  });
  const lines = await captureLogs();
  const operator = await runOperator(registry, namespace);
  try {
    await createExample(client, namespace, "d7");
    await eventually("the daemon", () => running || undefined);
    await eventually("the finalizer", async () => {
      return (await getExample(client, namespace, "d7")).metadata.finalizers?.includes(FINALIZER) || undefined;
    });
    await deleteExample(client, namespace, "d7");
    await exampleGone(client, namespace, "d7");
    assert.ok(lines.some((line) => line.includes("Daemon 'stubborn' did not exit in time. Leaving it orphaned.")));
  } finally {
    release.abort();
    await operator.stop();
    await reset();
  }
});

Deno.test("a daemon that ignores the stop and has no cancellationTimeout holds the deletion until it exits", async () => {
  const { client } = await testCluster();
  const namespace = await freshNamespace(client, "daemon");
  const registry = new kopf.Registry();
  const release = new AbortController();
  let running = false;
  kopf.daemon("kopfexamples", { registry, cancellationPolling: 7 }, async function slow() {
    running = true;
    await kopf.sleep(120, release.signal);
  });
  const settings = new kopf.Settings();
  const lines = await captureLogs();
  const probe = new EventProbe(registry);
  const operator = await runOperator(registry, namespace, { settings });
  try {
    await createExample(client, namespace, "d8");
    await eventually("the daemon", () => running || undefined);
    await eventually("the finalizer", async () => {
      return (await getExample(client, namespace, "d8")).metadata.finalizers?.includes(FINALIZER) || undefined;
    });
    await deleteExample(client, namespace, "d8");
    await eventually("the waiting message", () => {
      return lines.some((line) => line.includes("Daemon 'slow' is still exiting. The next check is in 7 seconds.")) ||
        undefined;
    });
    const body = await probe.caughtUp(namespace, "d8");
    assert.ok(body.metadata.deletionTimestamp && body.metadata.finalizers?.includes(FINALIZER));
    // Once the daemon exits, the object is looked at again at once, not at the next poll.
    release.abort();
    await exampleGone(client, namespace, "d8");
  } finally {
    release.abort();
    await operator.stop();
    await reset();
  }
});

Deno.test("stopping the operator stops the daemons (operatorExiting) and the operator finishes", async () => {
  const { client } = await testCluster();
  const namespace = await freshNamespace(client, "daemon");
  const registry = new kopf.Registry();
  const reasons: StopCause[][] = [];
  let running = 0;
  kopf.daemon("kopfexamples", { registry }, async function waiting({ stopped }) {
    running++;
    await kopf.sleep(60, stopped);
    reasons.push((stopped.reason as kopf.StopReason).causes);
  });
  const operator = await runOperator(registry, namespace);
  let stopped = false;
  try {
    await createExample(client, namespace, "d9a");
    await createExample(client, namespace, "d9b");
    await eventually("two daemons", () => running === 2 || undefined);
    await operator.stop();
    stopped = true;
    assert.deepEqual(reasons, [["operatorExiting"], ["operatorExiting"]]);
    // The finalizers stay: the objects are still served by whoever runs next.
    const body = await getExample(client, namespace, "d9a");
    assert.ok(body.metadata.finalizers?.includes(FINALIZER));
  } finally {
    if (!stopped) await operator.stop();
  }
});

Deno.test("a daemon is stopped when its filters stop matching (filtersMismatch) and started again when they match", async () => {
  const { client } = await testCluster();
  const namespace = await freshNamespace(client, "daemon");
  const registry = new kopf.Registry();
  const log: string[] = [];
  kopf.daemon("kopfexamples", { registry, labels: { run: "yes" } }, async function labelled({ stopped }) {
    log.push("start");
    while (!stopped.aborted) await kopf.sleep(30, stopped);
    log.push(`stop ${(stopped.reason as kopf.StopReason).causes.join(",")}`);
  });
  const operator = await runOperator(registry, namespace);
  try {
    await client.request({
      method: "POST",
      path: `/apis/kopf.dev/v1/namespaces/${namespace}/kopfexamples`,
      body: { apiVersion: "kopf.dev/v1", kind: "KopfExample", metadata: { name: "d10", labels: { run: "yes" } } },
    });
    await eventually("the start", () => log.length === 1 || undefined);
    await patchExample(client, namespace, "d10", { metadata: { labels: { run: "no" } } });
    await eventually("the stop", () => log.length === 2 || undefined);
    await patchExample(client, namespace, "d10", { metadata: { labels: { run: "yes" } } });
    await eventually("the second start", () => log.length === 3 || undefined);
    assert.deepEqual(log, ["start", "stop filtersMismatch", "start"]);
  } finally {
    await operator.stop();
  }
});

Deno.test("a daemon sees the latest state of its object, also through values destructured at its start", async () => {
  const { client } = await testCluster();
  const namespace = await freshNamespace(client, "daemon");
  const registry = new kopf.Registry();
  const seen: unknown[] = [];
  kopf.daemon("kopfexamples", { registry }, async function reader({ stopped, spec, body }) {
    while (!stopped.aborted) {
      seen.push([spec.field, (body.spec as Record<string, unknown>).field]);
      await kopf.sleep(0.1, stopped);
    }
  });
  const operator = await runOperator(registry, namespace);
  try {
    await createExample(client, namespace, "d11", { field: "before" });
    await eventually("the first value", () => seen.length > 0 || undefined);
    await patchExample(client, namespace, "d11", { spec: { field: "after" } });
    await eventually("the new value", () => JSON.stringify(seen.at(-1)) === '["after","after"]' || undefined);
    assert.deepEqual(seen[0], ["before", "before"]);
  } finally {
    await operator.stop();
  }
});

Deno.test("kopf run: SIGTERM stops the daemons (operatorExiting), the cleanup runs after them, exit 0", async () => {
  const { client, kubeconfig } = await testCluster();
  const namespace = await freshNamespace(client, "daemon-exit");
  await createExample(client, namespace, "e1");
  await createExample(client, namespace, "e2");
  // The daemons sleep for 600 s: only their stop wakes them. A stop not done within 60 s ends
  // in SIGKILL (runner.killed) — a bound for a hang, not a timing.
  await using runner = await KopfRunner.start(["run", "--standalone", "-n", namespace, EXITING], {
    kubeconfig,
    cwd: ROOT,
    stopTimeout: 60,
  });
  await runner.waitFor(/Daemon 'waiting' has started for e1\./);
  await runner.waitFor(/Daemon 'waiting' has started for e2\./);
  await eventually("the finalizers", async () => {
    for (const name of ["e1", "e2"]) {
      if (!(await getExample(client, namespace, name)).metadata.finalizers?.includes(FINALIZER)) return undefined;
    }
    return true;
  });
  await runner.stop(); // SIGTERM
  assert.equal(runner.killed, false, runner.output);
  assert.equal(runner.exitCode, 0, runner.output);

  const lines = runner.lines;
  const stops = lines.filter((line) => /Daemon 'waiting' has stopped for /.test(line));
  assert.deepEqual(
    stops.map((line) => line.match(/has stopped for (\w+): (.*)\.$/)?.slice(1).join(" ")).sort(),
    ["e1 operatorExiting", "e2 operatorExiting"],
    runner.output,
  );
  const signal = indexOf(lines, /Signal SIGTERM is received\. Operator is stopping\./);
  const firstStop = lines.indexOf(stops[0]);
  const lastStop = lines.indexOf(stops[1]);
  const bye = indexOf(lines, /Cleanup handler says bye\./);
  const stopped = indexOf(lines, /Operator has stopped\./);
  assert.ok(signal >= 0 && firstStop > signal, runner.output);
  assert.ok(bye > lastStop && stopped > bye, `the cleanup runs after the daemons have stopped:\n${runner.output}`);
  assert.ok(!runner.output.includes("Leaving it orphaned"), runner.output);
  // The finalizers stay: the objects are still served by whoever runs next.
  for (const name of ["e1", "e2"]) {
    assert.ok((await getExample(client, namespace, name)).metadata.finalizers?.includes(FINALIZER));
  }
});

Deno.test("kopf run: on SIGTERM, a daemon that ignores its stop is left orphaned; the cleanup still runs, exit 0", async () => {
  const { client, kubeconfig } = await testCluster();
  const namespace = await freshNamespace(client, "daemon-exit");
  await client.request({
    method: "POST",
    path: `/apis/kopf.dev/v1/namespaces/${namespace}/kopfexamples`,
    body: { apiVersion: "kopf.dev/v1", kind: "KopfExample", metadata: { name: "s1", labels: { stubborn: "yes" } } },
  });
  await using runner = await KopfRunner.start(["run", "--standalone", "-n", namespace, EXITING], {
    kubeconfig,
    cwd: ROOT,
    stopTimeout: 60,
  });
  await runner.waitFor(/Daemon 'waiting' has started for s1\./);
  await runner.waitFor(/Daemon 'stubborn' has started for s1\./);
  await runner.stop(); // SIGTERM
  assert.equal(runner.killed, false, runner.output);
  assert.equal(runner.exitCode, 0, runner.output);

  const lines = runner.lines;
  const polite = indexOf(lines, /Daemon 'waiting' has stopped for s1: operatorExiting\./);
  const orphaned = indexOf(lines, /Daemon 'stubborn' did not exit in time\. Leaving it orphaned\./);
  const bye = indexOf(lines, /Cleanup handler says bye\./);
  const stopped = indexOf(lines, /Operator has stopped\./);
  assert.ok(polite >= 0 && orphaned >= 0, runner.output);
  assert.ok(bye > polite && bye > orphaned && stopped > bye, runner.output);
  assert.ok(!runner.output.includes("Daemon 'stubborn' has ended"), runner.output);
});
