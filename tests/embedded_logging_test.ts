/**
 * An embedded operator (`kopf.operator()` in a program) logs as `kopf run` does unless the
 * program has configured logging itself; `deno task kopf run --log-format json` prints only JSON
 * lines on stdout (the "Task kopf …" line goes to stderr).
 */

import assert from "node:assert/strict";
import { createExample, freshNamespace, getExample, testCluster } from "./support/cluster.ts";
import { eventually } from "./support/eventually.ts";
import { meaningful } from "./support/kopf_process.ts";

const ROOT = new URL("..", import.meta.url).pathname;
const PROGRAM = new URL("./fixtures/shipping/embedded.ts", import.meta.url).pathname;

/** Runs the embedding program until it has handled one object; returns its output. */
async function runProgram(env: Record<string, string>): Promise<{ stdout: string; stderr: string }> {
  const { client, kubeconfig } = await testCluster();
  const namespace = await freshNamespace(client, "embedded-log");
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", PROGRAM],
    cwd: ROOT,
    env: { NO_COLOR: "1", KUBECONFIG: kubeconfig, KOPF_TEST_NAMESPACE: namespace, ...env },
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const output = child.output();
  await createExample(client, namespace, "logged-1");
  await eventually("status.createFn", async () => {
    return ((await getExample(client, namespace, "logged-1")).status as Record<string, unknown> | undefined)?.createFn;
  });
  const result = await output;
  const decoder = new TextDecoder();
  const stdout = decoder.decode(result.stdout);
  const stderr = decoder.decode(result.stderr);
  assert.equal(result.code, 0, stderr);
  return { stdout, stderr };
}

Deno.test("an embedded operator without logging configured prints its and its handlers' messages as kopf run does", async () => {
  const { stderr } = await runProgram({});
  assert.match(stderr, /kopf\.objects +\[INFO +\] \[embedded-log-[0-9a-f]+\/logged-1\] The handler says hello\./);
  assert.match(stderr, /\[INFO +\] \[.*\/logged-1\] Handler 'createFn' succeeded\./);
});

Deno.test("an embedded operator keeps the logging that the program configured itself", async () => {
  const { stdout, stderr } = await runProgram({ OWN_LOGGING: "1" });
  assert.match(stdout, /^MINE kopf\.objects: The handler says hello\.$/m);
  assert.doesNotMatch(stderr, /The handler says hello/);
});

Deno.test("deno task kopf run --log-format json: stdout has only JSON lines, the Task line goes to stderr", async () => {
  const { client, kubeconfig } = await testCluster();
  const namespace = await freshNamespace(client, "task-json");
  const child = new Deno.Command(Deno.execPath(), {
    args: [
      "task",
      "kopf",
      "run",
      "-n",
      namespace,
      "--standalone",
      "--log-format",
      "json",
      "examples/01-minimal/example.ts",
    ],
    cwd: ROOT,
    env: { KUBECONFIG: kubeconfig },
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const output = child.output();
  try {
    await createExample(client, namespace, "json-task-1");
    await eventually("status.createFn", async () => {
      return ((await getExample(client, namespace, "json-task-1")).status as Record<string, unknown> | undefined)
        ?.createFn;
    });
  } finally {
    child.kill("SIGTERM");
  }
  const result = await output;
  const stdout = new TextDecoder().decode(result.stdout);
  const stderr = new TextDecoder().decode(result.stderr);
  assert.match(stderr, /Task.*kopf/);
  const records = stdout.split("\n").filter((line) => line !== "").map((line) => JSON.parse(line));
  assert.ok(records.some((record) => record.message === "Handler 'createFn' succeeded."), stdout);
  assert.deepEqual(meaningful(stderr).filter((line) => !/Task/.test(line)), [], stderr);
});
