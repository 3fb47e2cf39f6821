/**
 * KopfRunner against the shared cluster: the minimal example handled end to end and stopped
 * with exit code 0; a handler file that fails at import re-raised as the runner's error.
 */

import assert from "node:assert/strict";
import { KopfRunner, KopfRunnerError } from "../testing.ts";
import { createExample, freshNamespace, getExample, testCluster, waitFor } from "./support/cluster.ts";

const ROOT = new URL("..", import.meta.url).pathname;

/** A handler file that throws while it is imported. */
async function brokenHandlers(): Promise<string> {
  const path = await Deno.makeTempFile({ prefix: "kopf-runner-broken-", suffix: ".ts" });
  await Deno.writeTextFile(path, `throw new Error("boom at import");\n`);
  return path;
}

Deno.test("KopfRunner runs examples/01-minimal: status.createFn is set, stop() ends it with exit code 0", async () => {
  const { client, kubeconfig } = await testCluster();
  const namespace = await freshNamespace(client, "runner");
  await using runner = await KopfRunner.start(
    ["run", "-n", namespace, "--standalone", "examples/01-minimal/example.ts"],
    { kubeconfig, cwd: ROOT },
  );
  await createExample(client, namespace, "runner-1", { field: "value" });
  const createFn = await waitFor("status.createFn", async () => {
    const body = await getExample(client, namespace, "runner-1");
    return (body.status as Record<string, unknown> | undefined)?.createFn;
  }).catch((error) => {
    throw new Error(`${error.message}\n--- kopf output ---\n${runner.output}`);
  });
  assert.deepEqual(createFn, { message: "hello world" });
  assert.match(await runner.waitFor("Handler 'createFn' succeeded."), /\/runner-1\] Handler 'createFn' succeeded\.$/);

  await runner.stop();
  assert.equal(runner.exitCode, 0, runner.output);
  assert.equal(runner.error, undefined);
  assert.equal(runner.killed, false);
  assert.ok(runner.output.includes("Handler 'createFn' succeeded."), runner.output);
  assert.ok(runner.output.includes(`And here we are! Created with spec: {"field":"value"}`), runner.output);
  assert.ok(runner.output.includes("Signal SIGTERM is received. Operator is stopping."), runner.output);
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
  const createFn = await waitFor("status.createFn", async () => {
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
