/**
 * Operator activities against a real API server: startup
 * handlers run before anything touches the API and may change the settings and the memo; a
 * startup failing for good stops the operator (exit code 1) before any object is touched;
 * cleanup handlers run after the streams have stopped, on SIGTERM (exit code 0), on the stop
 * flag and after fatal errors; and stopping is bounded: a second signal, the ultimate timeout and
 * the cleanup timeout.
 */

import assert from "node:assert/strict";
import * as kopf from "@kopf/kopf";
import { loadKubeconfig } from "../src/api/kubeconfig.ts";
import { createExample, freshNamespace, getExample, settle, testCluster } from "./support/cluster.ts";
import { eventually } from "./support/eventually.ts";
import { KopfProcess } from "./support/kopf_process.ts";
import { runOperator } from "./support/operator.ts";
import { TcpProxy } from "./support/tcp_proxy.ts";

/** Credentials of the test cluster whose server is `https://127.0.0.1:<port>` instead. */
async function credentialsAt(port: number): Promise<kopf.OperatorOptions["credentials"]> {
  const { credentials } = await testCluster();
  const text = await Deno.readTextFile(Deno.env.get("KOPF_TEST_KUBECONFIG")!);
  const path = await Deno.makeTempFile({ suffix: ".kubeconfig" });
  await Deno.writeTextFile(path, text.replaceAll(credentials.server, `https://127.0.0.1:${port}`));
  return await loadKubeconfig({ path });
}

function indexOf(lines: string[], pattern: RegExp): number {
  return lines.findIndex((line) => pattern.test(line));
}

Deno.test("kopf run: startup runs first and configures, objects see its memo, cleanup runs on SIGTERM, exit 0", async () => {
  const { client } = await testCluster();
  const namespace = await freshNamespace(client, "activities");
  await createExample(client, namespace, "before");
  await using operator = await KopfProcess.start(namespace, ["tests/fixtures/activities/lifecycle.ts"]);
  await operator.waitForLine(/Handler 'createFn' succeeded/);
  const body = await eventually("the creation handled with the custom finalizer", async () => {
    const body = await getExample(client, namespace, "before");
    return (body.status as Record<string, unknown> | undefined)?.createFn ? body : undefined;
  });
  assert.deepEqual((body.status as Record<string, unknown>).createFn, { greeting: "hello from startup" });
  assert.deepEqual(body.metadata.finalizers, ["example.com/custom-finalizer"], "the startup handler's setting");

  const status = await operator.stop("SIGTERM");
  const lines = operator.lines;
  assert.equal(status.code, 0, operator.output);
  const startupLine = indexOf(lines, /kopf\.activities\.st.*Startup handler here: startup Settings$/);
  const succeeded = indexOf(lines, /Activity 'configure' succeeded\./);
  const firstHandler = indexOf(lines, /Handler '.*' succeeded\./);
  assert.ok(startupLine >= 0 && succeeded > startupLine && firstHandler > succeeded, operator.output);
  const signal = indexOf(lines, /Signal SIGTERM is received\. Operator is stopping\./);
  const bye = indexOf(lines, /Cleanup handler says bye: cleanup hello from startup$/);
  const stopped = indexOf(lines, /Operator has stopped\./);
  assert.ok(signal >= 0 && bye > signal && stopped > bye, operator.output);
  assert.ok(lines.some((line) => /Activity 'farewell' succeeded\./.test(line)), operator.output);
});

Deno.test("kopf run: a startup handler failing for good exits 1 naming it, touching no object, no cleanup", async () => {
  const { client } = await testCluster();
  const namespace = await freshNamespace(client, "failstart");
  await createExample(client, namespace, "untouched");
  await using operator = await KopfProcess.start(namespace, ["tests/fixtures/activities/failing_startup.ts"]);
  const status = await operator.exited;
  assert.equal(status.code, 1, operator.output);
  assert.equal(
    operator.lines.at(-1),
    "kopf: Startup handler 'failingStartup' failed: cannot start without the database",
    operator.output,
  );
  assert.ok(operator.lines.some((line) => /Activity 'failingStartup' failed permanently/.test(line)));
  assert.ok(!operator.output.includes("Cleanup handler must not run"), operator.output);
  const body = await getExample(client, namespace, "untouched");
  assert.deepEqual(body.metadata.finalizers ?? [], []);
  assert.deepEqual(Object.keys(body.metadata.annotations ?? {}).filter((key) => key.startsWith("kopf")), []);
  assert.equal(body.status, undefined);
});

Deno.test("kopf run: SIGTERM, the cleanup hangs, a second SIGTERM exits at once with code 143", async () => {
  const { client } = await testCluster();
  const namespace = await freshNamespace(client, "second");
  await using operator = await KopfProcess.start(namespace, ["tests/fixtures/activities/slow_cleanup.ts"]);
  await operator.waitForLine(/Activity 'configure' succeeded\./);
  // stop() sends the signal at once and resolves at the exit: the first one is not awaited.
  const first = operator.stop("SIGTERM");
  await operator.waitForLine(/Cleanup is starting\./);
  // A repeat within a second of the first is a copy of the same stop (Ctrl+C under `deno task`).
  await settle(1.5);
  const sent = Date.now();
  const status = await operator.stop("SIGTERM");
  assert.equal((await first).code, 143);
  assert.equal(status.code, 143, operator.output);
  assert.ok(Date.now() - sent < 5000, "at once");
  assert.ok(operator.lines.some((line) => /Signal SIGTERM is received again while stopping/.test(line)));
  assert.ok(!operator.output.includes("Cleanup has finished."));
});

Deno.test("kopf run: settings.process.ultimateExitingTimeout ends a stop that hangs, code 143", async () => {
  const { client } = await testCluster();
  const namespace = await freshNamespace(client, "ultimate");
  await using operator = await KopfProcess.start(namespace, ["tests/fixtures/activities/slow_cleanup.ts"], {
    KOPF_TEST_ULTIMATE: "2",
  });
  await operator.waitForLine(/Activity 'configure' succeeded\./);
  const sent = Date.now();
  const status = await operator.stop("SIGTERM");
  const took = Date.now() - sent;
  assert.equal(status.code, 143, operator.output);
  assert.ok(took >= 2000 && took < 10000, `took ${took} ms`);
  assert.ok(operator.lines.some((line) => /has not stopped within 2 s/.test(line)), operator.output);
});

Deno.test("kopf run: settings.process.cleanupTimeout abandons a hanging cleanup handler; exit 0", async () => {
  const { client } = await testCluster();
  const namespace = await freshNamespace(client, "cleanupto");
  await using operator = await KopfProcess.start(namespace, ["tests/fixtures/activities/slow_cleanup.ts"], {
    KOPF_TEST_CLEANUP_TIMEOUT: "1",
  });
  await operator.waitForLine(/Activity 'configure' succeeded\./);
  const sent = Date.now();
  const status = await operator.stop("SIGTERM");
  const took = Date.now() - sent;
  assert.equal(status.code, 0, operator.output);
  assert.ok(took >= 1000 && took < 10000, `took ${took} ms`);
  assert.ok(
    operator.lines.some((line) => /Activity 'slowCleanup' is abandoned unfinished/.test(line)),
    operator.output,
  );
  assert.ok(operator.lines.some((line) => /The cleanup activity has failed; the operator stops anyway/.test(line)));
});

Deno.test("in-process: startup runs before any connection, ready comes after it, memo and settings carry over", async () => {
  const { client } = await testCluster();
  const namespace = await freshNamespace(client, "inproc");
  const port = Number(new URL(client.credentials.server).port);
  await using proxy = new TcpProxy(port);
  const registry = new kopf.Registry();
  const order: string[] = [];
  let openDuringStartup = -1;
  kopf.on.startup({ registry }, async function first({ memo, settings }) {
    await kopf.sleep(0.3);
    openDuringStartup = proxy.open;
    memo.fromStartup = "yes";
    settings.persistence.finalizer = "example.com/inproc";
    order.push("startup");
  });
  kopf.on.create("kopfexamples", { registry }, function createFn({ memo }) {
    return { fromStartup: memo.fromStartup, own: memo.own };
  });
  kopf.on.delete("kopfexamples", { registry }, function deleteFn() {});
  kopf.on.cleanup({ registry }, function last({ memo }) {
    order.push(`cleanup ${memo.fromStartup}`);
  });
  const memo: kopf.AnyMemo = { own: "operator memo" };
  const operator = await runOperator(registry, namespace, {
    credentials: await credentialsAt(proxy.port),
    memo,
  });
  try {
    order.push("running");
    assert.equal(openDuringStartup, 0, "no connection to the API before the startup handlers finished");
    await createExample(client, namespace, "a");
    const body = await eventually("the creation handled", async () => {
      const body = await getExample(client, namespace, "a");
      return (body.status as Record<string, unknown> | undefined)?.createFn ? body : undefined;
    });
    assert.deepEqual((body.status as Record<string, unknown>).createFn, {
      fromStartup: "yes",
      own: "operator memo",
    });
    assert.deepEqual(body.metadata.finalizers, ["example.com/inproc"]);
    assert.equal(memo.fromStartup, "yes", "the operator's memo is the one given");
  } finally {
    await operator.stop();
  }
  // runOperator returns when `ready` is called.
  assert.deepEqual(order, ["startup", "running", "cleanup yes"]);
});

Deno.test("in-process: a failed startup rejects with an ActivityError before any connection", async () => {
  const { client } = await testCluster();
  const namespace = await freshNamespace(client, "inprocfail");
  const port = Number(new URL(client.credentials.server).port);
  await using proxy = new TcpProxy(port);
  const registry = new kopf.Registry();
  let attempts = 0;
  kopf.on.startup({ registry, retries: 3, backoff: 0.1 }, function flaky() {
    attempts++;
    throw new Error("still broken");
  });
  kopf.on.cleanup({ registry }, function notRun() {
    throw new Error("cleanup must not run after a failed startup");
  });
  kopf.on.event("kopfexamples", { registry }, function seen() {});
  await assert.rejects(
    runOperator(registry, namespace, { credentials: await credentialsAt(proxy.port) }),
    (error: Error) => error instanceof kopf.ActivityError && /^Startup handler 'flaky' failed: /.test(error.message),
  );
  assert.equal(attempts, 3);
  assert.equal(proxy.open, 0);
});

Deno.test("in-process: cleanup runs after a fatal error too, and the error still rejects", async () => {
  const { client } = await testCluster();
  const namespace = await freshNamespace(client, "fatal");
  // A port nothing listens on: take one from the OS, then close it.
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = listener.addr.port;
  listener.close();
  const registry = new kopf.Registry();
  const calls: string[] = [];
  kopf.on.event("kopfexamples", { registry }, function seen() {});
  kopf.on.cleanup({ registry }, function first() {
    calls.push("first");
    throw new kopf.PermanentError("cleanup failures are logged, not raised");
  });
  kopf.on.cleanup({ registry }, function second() {
    calls.push("second");
  });
  const settings = new kopf.Settings();
  settings.networking.errorBackoffs = [];
  await assert.rejects(
    runOperator(registry, namespace, { credentials: await credentialsAt(port), settings }),
    /could not reach the API server/,
  );
  assert.deepEqual(calls, ["first", "second"]);
});

Deno.test("in-process: a stop while a startup handler is retrying ends the operator without cleanup", async () => {
  const registry = new kopf.Registry();
  const calls: string[] = [];
  kopf.on.startup({ registry }, function waiting() {
    calls.push("startup");
    throw new kopf.TemporaryError("not yet", { delay: 60 });
  });
  kopf.on.cleanup({ registry }, function notRun() {
    calls.push("cleanup");
  });
  const controller = new AbortController();
  const done = kopf.operator({ registry, standalone: true, signal: controller.signal });
  await eventually("the first attempt", () => calls.length ? true : undefined);
  const stopping = Date.now();
  controller.abort();
  await done;
  assert.ok(Date.now() - stopping < 1000);
  assert.deepEqual(calls, ["startup"]);
});
