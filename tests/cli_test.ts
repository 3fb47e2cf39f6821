/**
 * The `kopf` command as users run it: the minimal example end to end, and bad input of every
 * kind answered with a clear message and the right exit code.
 */

import assert from "node:assert/strict";
import { createExample, freshNamespace, getExample, testCluster, waitFor } from "./support/cluster.ts";

const CLI = new URL("../cli/main.ts", import.meta.url).pathname;
const ROOT = new URL("..", import.meta.url).pathname;

/** Runs `kopf <args>` to completion and returns its exit code and output. */
async function kopf(
  args: string[],
  env: Record<string, string> = {},
): Promise<{ code: number; stdout: string; stderr: string }> {
  const output = await new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", CLI, ...args],
    cwd: ROOT,
    env: { NO_COLOR: "1", ...env },
    stdout: "piped",
    stderr: "piped",
  }).output();
  const decoder = new TextDecoder();
  return { code: output.code, stdout: decoder.decode(output.stdout), stderr: decoder.decode(output.stderr) };
}

/** The lines of the output that are not Deno's own download or warning noise. */
function meaningful(text: string): string[] {
  return text.split("\n").filter((line) => line.trim() && !line.startsWith("Download ") && !line.startsWith("Warning"));
}

Deno.test("kopf run examples/01-minimal sets status.createFn.message, and exits 0 on SIGTERM", async () => {
  const { client, kubeconfig } = await testCluster();
  const namespace = await freshNamespace(client, "cli");
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", CLI, "run", "-n", namespace, "--standalone", "examples/01-minimal/example.ts"],
    cwd: ROOT,
    env: { NO_COLOR: "1", KUBECONFIG: kubeconfig },
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const output = child.output();
  try {
    await createExample(client, namespace, "kopf-example-1", { field: "value" });
    const message = await waitFor("status.createFn.message", async () => {
      const body = await getExample(client, namespace, "kopf-example-1");
      return ((body.status as { createFn?: { message?: string } } | undefined)?.createFn?.message);
    });
    assert.equal(message, "hello world");
  } finally {
    child.kill("SIGTERM");
  }
  const result = await output;
  const stderr = new TextDecoder().decode(result.stderr);
  assert.equal(result.code, 0, stderr);
  assert.match(stderr, /\[.*\/kopf-example-1\] Handler 'createFn' succeeded\./);
  assert.match(stderr, /Creation is processed: 1 succeeded; 0 failed\./);
  assert.match(stderr, /Signal SIGTERM is received\. Operator is stopping\./);
});

Deno.test("--log-format json prints one JSON object per line; object lines carry the object's reference", async () => {
  const { client, kubeconfig } = await testCluster();
  const namespace = await freshNamespace(client, "json");
  const child = new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "-A",
      CLI,
      "run",
      "-n",
      namespace,
      "--standalone",
      "--log-format",
      "json",
      "examples/01-minimal/example.ts",
    ],
    cwd: ROOT,
    env: { NO_COLOR: "1", KUBECONFIG: kubeconfig },
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const output = child.output();
  let uid: string | undefined;
  try {
    uid = (await createExample(client, namespace, "json-1")).metadata.uid;
    await waitFor("status.createFn", async () => {
      const body = await getExample(client, namespace, "json-1");
      return (body.status as Record<string, unknown> | undefined)?.createFn;
    });
  } finally {
    child.kill("SIGTERM");
  }
  const lines = meaningful(new TextDecoder().decode((await output).stderr));
  const records = lines.map((line) => JSON.parse(line));
  assert.ok(records.every((record) => record.message && record.timestamp && record.severity), lines.join("\n"));
  const succeeded = records.find((record) => record.message === "Handler 'createFn' succeeded.");
  assert.equal(succeeded?.object?.uid, uid);
  assert.equal(succeeded?.object?.namespace, namespace);
});

Deno.test("a missing kubeconfig gives one line naming the file, exit code 1", async () => {
  const missing = "/nonexistent/kopf-test-kubeconfig";
  const { code, stderr } = await kopf(["run", "-A", "examples/01-minimal/example.ts"], { KUBECONFIG: missing });
  assert.equal(code, 1);
  const lines = meaningful(stderr);
  assert.equal(lines.length, 1, stderr);
  assert.match(lines[0], /kopf-test-kubeconfig/);
});

Deno.test("a malformed kubeconfig gives one line naming the file and the problem, exit code 1", async () => {
  const path = await Deno.makeTempFile({ suffix: ".kubeconfig" });
  await Deno.writeTextFile(path, "apiVersion: v1\nclusters: [ {\n  this is: not yaml");
  const { code, stderr } = await kopf(["run", "-A", "examples/01-minimal/example.ts"], { KUBECONFIG: path });
  assert.equal(code, 1);
  const lines = meaningful(stderr);
  assert.equal(lines.length, 1, stderr);
  assert.ok(lines[0].includes(path), lines[0]);
});

Deno.test("an unreachable API server: retries are logged, then a clear error, exit code 1", async () => {
  const { kubeconfig, credentials } = await testCluster();
  // A port nothing listens on: take one from the OS, then close it.
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = listener.addr.port;
  listener.close();
  const text = (await Deno.readTextFile(kubeconfig)).replaceAll(credentials.server, `https://127.0.0.1:${port}`);
  const path = await Deno.makeTempFile({ suffix: ".kubeconfig" });
  await Deno.writeTextFile(path, text);
  const { code, stderr } = await kopf(["run", "-A", "--standalone", "examples/01-minimal/example.ts"], {
    KUBECONFIG: path,
  });
  assert.equal(code, 1);
  const retries = stderr.split("\n").filter((line) =>
    line.includes("could not reach the API server") && line.includes("retrying")
  );
  assert.ok(retries.length >= 8, stderr);
  const last = meaningful(stderr).at(-1)!;
  assert.match(last, /^kopf: .*could not reach the API server/);
  assert.ok(last.includes(String(port)), last);
});

Deno.test("a handler file that does not exist: the path and the problem, exit code 1", async () => {
  const { code, stderr } = await kopf(["run", "-A", "no/such/handlers.ts"]);
  assert.equal(code, 1);
  assert.deepEqual(meaningful(stderr).length, 1, stderr);
  assert.match(stderr, /no\/such\/handlers\.ts: no such handler file/);
});

Deno.test("a handler file that throws at import: the path and the error, exit code 1", async () => {
  const path = await Deno.makeTempFile({ suffix: ".ts" });
  await Deno.writeTextFile(path, `throw new Error("boom at import");\n`);
  const { code, stderr } = await kopf(["run", "-A", path]);
  assert.equal(code, 1);
  assert.ok(stderr.includes(path), stderr);
  assert.match(stderr, /boom at import/);
});

Deno.test("an unknown option gives a usage message, exit code 2", async () => {
  const { code, stderr } = await kopf(["run", "--no-such-option", "x.ts"]);
  assert.equal(code, 2);
  assert.match(stderr, /^Usage: kopf run/);
  assert.match(stderr, /--no-such-option/);
});

Deno.test("--help shows the options of run, exit code 0", async () => {
  const { code, stdout } = await kopf(["run", "--help"]);
  assert.equal(code, 0);
  for (const option of ["--namespace", "--all-namespaces", "--standalone", "--verbose", "--quiet", "--log-format"]) {
    assert.ok(stdout.includes(option), option);
  }
});
