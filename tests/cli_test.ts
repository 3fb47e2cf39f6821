/**
 * The `kopf` command as users run it: the minimal example end to end, and bad input of every
 * kind answered with a clear message and the right exit code.
 */

import assert from "node:assert/strict";
import { createExample, freshNamespace, getExample, testCluster, waitForStatus } from "./support/cluster.ts";
import { eventually } from "./support/eventually.ts";
import { KopfProcess, meaningful, runKopf } from "./support/kopf_process.ts";

const CLI = new URL("../cli/main.ts", import.meta.url).pathname;
const ROOT = new URL("..", import.meta.url).pathname;

/** Runs `kopf <args>` to completion (without a kubeconfig unless `env` gives one). */
const kopf = runKopf;

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
    const message = await eventually("status.createFn.message", async () => {
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
    await eventually("status.createFn", async () => {
      const body = await getExample(client, namespace, "json-1");
      return (body.status as Record<string, unknown> | undefined)?.createFn;
    });
  } finally {
    child.kill("SIGTERM");
  }
  // JSON lines go to stdout, where nothing else is printed.
  const lines = meaningful(new TextDecoder().decode((await output).stdout));
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

Deno.test("the tests' KopfProcess.waitForLine fails when kopf exits without the line, not at its bound", async () => {
  const { client } = await testCluster();
  const namespace = await freshNamespace(client, "cli-exit");
  await using operator = await KopfProcess.start(namespace, ["no/such/handlers.ts"]);
  const error = await operator.waitForLine(/Starting the watch/).then(() => undefined, (error: Error) => error);
  assert.ok(error, operator.output);
  assert.match(error.message, /^kopf exited \(code 1\) before printing a line matching \/Starting the watch\//);
  assert.match(error.message, /no\/such\/handlers\.ts: no such handler file/);
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

/** Starts `kopf <args>` in the background; `stop()` sends SIGTERM and gives the exit code and output. */
function spawnKopf(args: string[], env: Record<string, string>) {
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", CLI, ...args],
    cwd: ROOT,
    env: { NO_COLOR: "1", ...env },
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const output = child.output();
  return {
    async stop(): Promise<{ code: number; stdout: string; stderr: string }> {
      try {
        child.kill("SIGTERM");
      } catch {
        // It has exited already.
      }
      const result = await output;
      const decoder = new TextDecoder();
      return { code: result.code, stdout: decoder.decode(result.stdout), stderr: decoder.decode(result.stderr) };
    },
  };
}

Deno.test("kopf run with two files and two -m modules: the handlers of all four are active", async () => {
  const { client, kubeconfig } = await testCluster();
  const namespace = await freshNamespace(client, "cli-multi");
  const moduleD = new URL("./fixtures/cli/module_d.ts", import.meta.url).href;
  const kopfRun = spawnKopf([
    "run",
    "-n",
    namespace,
    "--standalone",
    "tests/fixtures/cli/file_a.ts",
    "tests/fixtures/cli/file_b.ts",
    "-m",
    "./tests/fixtures/cli/module_c.ts",
    "-m",
    moduleD,
  ], { KUBECONFIG: kubeconfig });
  let result;
  try {
    await createExample(client, namespace, "multi-1");
    assert.equal(await waitForStatus(namespace, "multi-1", "fromA"), "file_a");
    assert.equal(await waitForStatus(namespace, "multi-1", "fromB"), "file_b");
    assert.equal(await waitForStatus(namespace, "multi-1", "fromC"), "module_c");
    assert.equal(await waitForStatus(namespace, "multi-1", "fromD"), "module_d");
  } finally {
    result = await kopfRun.stop();
  }
  assert.equal(result.code, 0, result.stderr);
});

Deno.test("a -m module that cannot be imported: the specifier and the problem, exit code 1", async () => {
  const { code, stderr } = await kopf(["run", "-A", "--standalone", "-m", "./tests/fixtures/cli/no_such.ts"]);
  assert.equal(code, 1);
  assert.match(stderr, /\.\/tests\/fixtures\/cli\/no_such\.ts: failed to import/);
});

Deno.test("kopf run -n a -A: a usage error, exit code 2", async () => {
  const { code, stdout, stderr } = await kopf(["run", "-n", "a", "-A", "x.ts"]);
  assert.equal(code, 2);
  assert.equal(stdout, "");
  assert.match(stderr, /^Usage: kopf run/);
  assert.match(stderr, /^Error: Either --namespace or --all-namespaces can be used, not both\.$/m);
});

Deno.test("KOPF_RUN_NAMESPACE, KOPF_RUN_STANDALONE and KOPF_RUN_LOG_FORMAT=json are defaults of run", async () => {
  const { client, kubeconfig } = await testCluster();
  const namespace = await freshNamespace(client, "cli-env");
  const kopfRun = spawnKopf(["run", "examples/01-minimal/example.ts"], {
    KUBECONFIG: kubeconfig,
    KOPF_RUN_NAMESPACE: namespace,
    KOPF_RUN_STANDALONE: "true",
    KOPF_RUN_LOG_FORMAT: "json",
  });
  let result;
  try {
    await createExample(client, namespace, "env-1");
    await waitForStatus(namespace, "env-1", "createFn");
  } finally {
    result = await kopfRun.stop();
  }
  assert.equal(result.code, 0, result.stderr);
  const lines = meaningful(result.stdout); // JSON lines go to stdout
  const records = lines.map((line) => JSON.parse(line));
  assert.ok(records.some((record) => record.message === "Handler 'createFn' succeeded."), result.stdout);
  // KOPF_RUN_STANDALONE=true is --standalone: no warning about running without peering.
  assert.ok(!records.some((record) => /Peering/.test(record.message)), result.stderr);
  // The namespace came from KOPF_RUN_NAMESPACE: no warning about serving all namespaces.
  assert.ok(!records.some((record) => /No namespaces are given/.test(record.message)), result.stderr);
});

Deno.test("the command line wins over KOPF_RUN_*; KOPF_RUN_NAMESPACE adds to -n", async () => {
  const { client, kubeconfig } = await testCluster();
  const given = await freshNamespace(client, "cli-given");
  const extra = await freshNamespace(client, "cli-extra");
  const kopfRun = spawnKopf([
    "run",
    "--standalone",
    "-n",
    given,
    "--log-format",
    "plain",
    "examples/01-minimal/example.ts",
  ], {
    KUBECONFIG: kubeconfig,
    KOPF_RUN_NAMESPACE: extra,
    KOPF_RUN_LOG_FORMAT: "json",
  });
  let result;
  try {
    await createExample(client, given, "given-1");
    await createExample(client, extra, "extra-1");
    await waitForStatus(given, "given-1", "createFn");
    await waitForStatus(extra, "extra-1", "createFn");
  } finally {
    result = await kopfRun.stop();
  }
  assert.equal(result.code, 0, result.stderr);
  const lines = meaningful(result.stderr);
  const succeeded = lines.filter((line) => line.includes("Handler 'createFn' succeeded."));
  assert.equal(succeeded.length, 2, result.stderr);
  assert.ok(lines.every((line) => !line.startsWith("{")), result.stderr); // plain, not json
});

Deno.test("a bad KOPF_RUN_* value: a usage error naming the variable, exit code 2", async () => {
  const { code, stderr } = await kopf(["run", "-A", "x.ts"], { KOPF_RUN_LOG_FORMAT: "xml" });
  assert.equal(code, 2);
  assert.match(stderr, /^Error: KOPF_RUN_LOG_FORMAT must be one of plain, full, json, not "xml"\.$/m);
});

Deno.test("--help on every command and on kopf itself, exit code 0", async () => {
  const expected: Record<string, string[]> = {
    run: [
      "--module",
      "--namespace",
      "--all-namespaces",
      "--standalone",
      "--priority",
      "--peering",
      "--dev",
      "--liveness",
      "--context",
      "--log-format",
      "KOPF_RUN_",
    ],
    freeze: [
      "--peering",
      "--lifetime",
      "--priority",
      "--dev",
      "--id",
      "--message",
      "--namespace",
      "--all-namespaces",
      "KOPF_FREEZE_",
    ],
    resume: ["--peering", "--id", "--namespace", "--all-namespaces", "KOPF_RESUME_"],
  };
  for (const [command, options] of Object.entries(expected)) {
    for (const flag of ["--help", "-h"]) {
      const { code, stdout } = await kopf([command, flag]);
      assert.equal(code, 0, `${command} ${flag}`);
      assert.match(stdout, new RegExp(`^Usage: kopf ${command} `));
      for (const option of options) assert.ok(stdout.includes(option), `${command}: ${option}`);
    }
  }
  const { code, stdout } = await kopf(["--help"]);
  assert.equal(code, 0);
  for (const command of ["run", "freeze", "resume"]) assert.match(stdout, new RegExp(`^  ${command} `, "m"));
});

Deno.test("--version prints the version of the CLI, exit code 0", async () => {
  const { code, stdout } = await kopf(["--version"]);
  assert.equal(code, 0);
  const { version } = JSON.parse(await Deno.readTextFile(new URL("../cli/deno.json", import.meta.url)));
  assert.equal(stdout.trim(), `kopf ${version}`);
});

Deno.test("--leader-elect-* options without --leader-elect, or durations that are not positive: one line, exit code 2", async () => {
  const cases: [string[], RegExp][] = [
    [["--leader-elect-resource-name", "mine"], /^Error: --leader-elect-resource-name needs --leader-elect/m],
    [
      ["--leader-elect", "--leader-elect-lease-duration", "0"],
      /^Error: --leader-elect-lease-duration must be a positive number of seconds, not "0"\.$/m,
    ],
    [
      ["--leader-elect", "--leader-elect-retry-period", "soon"],
      /--leader-elect-retry-period must be a positive number/,
    ],
    [
      ["--leader-elect", "--leader-elect-resource-name", "Not_Valid"],
      /--leader-elect-resource-name must be an object name/,
    ],
  ];
  for (const [args, pattern] of cases) {
    const { code, stdout, stderr } = await kopf(["run", "-A", ...args, "examples/01-minimal/example.ts"]);
    assert.equal(code, 2, args.join(" "));
    assert.equal(stdout, "");
    assert.match(stderr, pattern);
  }
  const fromEnv = await kopf(["run", "-A", "examples/01-minimal/example.ts"], {
    KOPF_RUN_LEADER_ELECT_RETRY_PERIOD: "1",
  });
  assert.equal(fromEnv.code, 2);
  assert.match(fromEnv.stderr, /KOPF_RUN_LEADER_ELECT_RETRY_PERIOD needs --leader-elect/);
});

Deno.test("peering options are checked: a priority that is not an integer is a usage error, exit code 2", async () => {
  const { code, stderr } = await kopf(["run", "-A", "--standalone", "-p", "high", "x.ts"]);
  assert.equal(code, 2);
  assert.match(stderr, /^Error: --priority must be an integer, not "high"\.$/m);
});

Deno.test("peering options with --standalone are accepted: the operator runs", async () => {
  const { client, kubeconfig } = await testCluster();
  const namespace = await freshNamespace(client, "cli-dev");
  const kopfRun = spawnKopf(
    ["run", "-n", namespace, "--standalone", "--dev", "-P", "custom", "examples/01-minimal/example.ts"],
    { KUBECONFIG: kubeconfig },
  );
  let result;
  try {
    await createExample(client, namespace, "dev-1");
    await waitForStatus(namespace, "dev-1", "createFn");
  } finally {
    result = await kopfRun.stop();
  }
  assert.equal(result.code, 0, result.stderr);
});

Deno.test("kopf freeze --peering=default without --lifetime: a usage error, exit code 2", async () => {
  const { code, stdout, stderr } = await kopf(["freeze", "--peering=default"]);
  assert.equal(code, 2);
  assert.equal(stdout, "");
  assert.match(stderr, /^Usage: kopf freeze/);
  assert.match(stderr, /^Try 'kopf freeze --help' for help\.$/m);
  assert.match(stderr, /^Error: Missing option '-t' \/ '--lifetime'/m);
});

Deno.test("kopf resume without --peering: a usage error, exit code 2", async () => {
  const { code, stderr } = await kopf(["resume", "-A"]);
  assert.equal(code, 2);
  assert.match(stderr, /^Error: Missing option '-P' \/ '--peering'/m);
});
