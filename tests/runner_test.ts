/**
 * KopfRunner against the shared cluster: the documentation's example —
 * examples/obj.yaml handled by examples/01-minimal, deleted, stopped with exit code 0; a handler
 * file that fails at import re-raised as the runner's error; and settings given to the operator
 * through its handler file, since a child process takes no Settings object from the test.
 */

import assert from "node:assert/strict";
import { parse } from "yaml";
import { EVENTS } from "../src/api/events.ts";
import { resourcePath } from "../src/api/paths.ts";
import type { KubernetesList, KubernetesObject } from "../src/model/body.ts";
import { KopfRunner, KopfRunnerError } from "../testing.ts";
import {
  createExample,
  deleteExample,
  exampleGone,
  freshNamespace,
  getExample,
  KOPFEXAMPLES,
  testCluster,
} from "./support/cluster.ts";
import { eventually } from "./support/eventually.ts";

const ROOT = new URL("..", import.meta.url).pathname;

/** A handler file that throws while it is imported. */
async function brokenHandlers(): Promise<string> {
  const path = await Deno.makeTempFile({ prefix: "kopf-runner-broken-", suffix: ".ts" });
  await Deno.writeTextFile(path, `throw new Error("boom at import");\n`);
  return path;
}

/** The Events in a namespace. */
async function eventsIn(namespace: string): Promise<KubernetesObject[]> {
  const { client } = await testCluster();
  return (await client.request<KubernetesList>({ path: resourcePath(EVENTS, { namespace }) })).items;
}

Deno.test("KopfRunner, the documented example: examples/obj.yaml handled and deleted; stop() ends it with exit code 0, no error, the handler's line in the output", async () => {
  const { client, kubeconfig } = await testCluster();
  const namespace = await freshNamespace(client, "runner");
  const obj = parse(await Deno.readTextFile(`${ROOT}examples/obj.yaml`)) as KubernetesObject;
  const name = obj.metadata.name!;
  await using runner = await KopfRunner.start(
    ["run", "-n", namespace, "--standalone", "examples/01-minimal/example.ts"],
    { kubeconfig, cwd: ROOT },
  );
  await client.request({ method: "POST", path: resourcePath(KOPFEXAMPLES, { namespace }), body: obj });
  const createFn = await eventually("status.createFn", async () => {
    const body = await getExample(client, namespace, name);
    return (body.status as Record<string, unknown> | undefined)?.createFn;
  }).catch((error) => {
    throw new Error(`${error.message}\n--- kopf output ---\n${runner.output}`);
  });
  assert.deepEqual(createFn, { message: "hello world" });
  assert.match(
    await runner.waitFor("Handler 'createFn' succeeded."),
    new RegExp(`/${name}\\] Handler 'createFn' succeeded\\.$`),
  );
  await deleteExample(client, namespace, name);
  await exampleGone(client, namespace, name);

  await runner.stop();
  assert.equal(runner.exitCode, 0, runner.output);
  assert.equal(runner.error, undefined);
  assert.equal(runner.killed, false);
  const line = `And here we are! Created with spec: ${JSON.stringify(obj.spec)}`;
  assert.ok(runner.output.includes(line), runner.output);
  assert.ok(runner.stderr.includes(line), "the log goes to stderr");
  assert.ok(runner.output.includes("Handler 'createFn' succeeded."), runner.output);
  assert.ok(runner.output.includes("Signal SIGTERM is received. Operator is stopping."), runner.output);
});

Deno.test("KopfRunner: settings reach the operator through its handler file; with posting off, no Event is posted during the run", async () => {
  const { client, kubeconfig } = await testCluster();
  const seen: Record<string, string[]> = {};
  for (const posting of ["on", "off"]) {
    const namespace = await freshNamespace(client, "runner-posting");
    await using runner = await KopfRunner.start(
      ["run", "-n", namespace, "--standalone", "tests/fixtures/runner/posting.ts"],
      { kubeconfig, cwd: ROOT, env: { KOPF_TEST_POSTING: posting }, ready: `Posting is ${posting}.` },
    );
    await createExample(client, namespace, "greeted");
    await eventually("status.createFn", async () => {
      return ((await getExample(client, namespace, "greeted")).status as Record<string, unknown> | undefined)
        ?.createFn;
    });
    await runner.stop(); // The operator sends what it has queued before it exits.
    assert.equal(runner.exitCode, 0, runner.output);
    seen[posting] = (await eventsIn(namespace)).map((event) => `${event.reason}: ${event.message}`);
  }
  // The handler does post (posting on); the startup handler's setting silences it (posting off).
  assert.deepEqual(seen, { on: ["Greeting: hello from the handler"], off: [] });
});

Deno.test("KopfRunner with ready: start() resolves once the operator printed the line", async () => {
  const { client, kubeconfig } = await testCluster();
  const namespace = await freshNamespace(client, "runner");
  await createExample(client, namespace, "runner-ready");
  await using runner = await KopfRunner.start(
    ["run", "-n", namespace, "--standalone", "examples/01-minimal/example.ts"],
    { kubeconfig, cwd: ROOT, ready: /\/runner-ready\] Handler 'createFn' succeeded\./ },
  );
  assert.ok(runner.running);
  // The line is logged before the results are patched onto the object.
  const createFn = await eventually("status.createFn", async () => {
    const body = await getExample(client, namespace, "runner-ready");
    return (body.status as Record<string, unknown> | undefined)?.createFn;
  });
  assert.deepEqual(createFn, { message: "hello world" });
  await runner.stop();
  assert.equal(runner.exitCode, 0, runner.output);
});

Deno.test("KopfRunner: a handler file that throws at import — exit code 1, an error naming the file; stop() re-raises it", async () => {
  const { kubeconfig } = await testCluster();
  const path = await brokenHandlers();
  try {
    await using runner = await KopfRunner.start(["run", "-A", "--standalone", path], { kubeconfig, cwd: ROOT });
    await runner.exited;
    assert.equal(runner.exitCode, 1, runner.output);
    assert.ok(runner.error instanceof KopfRunnerError);
    assert.equal(runner.error.exitCode, 1);
    assert.ok(runner.error.message.includes(path), runner.error.message);
    assert.match(runner.error.message, /boom at import/);
    assert.match(runner.error.message, new RegExp(`^kopf run -A --standalone ${path} exited with code 1\\.`));
    await assert.rejects(runner.stop(), (error) => error === runner.error);
  } finally {
    await Deno.remove(path);
  }
});

Deno.test("KopfRunner: the same failure with reraise: false — stop() resolves, error and exitCode tell it", async () => {
  const { kubeconfig } = await testCluster();
  const path = await brokenHandlers();
  try {
    await using runner = await KopfRunner.start(["run", "-A", "--standalone", path], {
      kubeconfig,
      cwd: ROOT,
      reraise: false,
    });
    await runner.exited;
    await runner.stop();
    assert.equal(runner.exitCode, 1);
    assert.ok(runner.error?.message.includes(path), runner.output);
  } finally {
    await Deno.remove(path);
  }
});

Deno.test("KopfRunner: with ready, a failure at import rejects start() early with the error and the output", async () => {
  const { kubeconfig } = await testCluster();
  const path = await brokenHandlers();
  try {
    await assert.rejects(
      KopfRunner.start(["run", "-A", "--standalone", path], { kubeconfig, cwd: ROOT, ready: "never printed" }),
      (error) => {
        assert.ok(error instanceof KopfRunnerError);
        assert.equal(error.exitCode, 1);
        assert.ok(error.message.includes(path), error.message);
        assert.match(error.output, /boom at import/);
        return true;
      },
    );
  } finally {
    await Deno.remove(path);
  }
});
