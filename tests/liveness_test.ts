/**
 * The liveness endpoint against a real API server: `kopf run -L URL`
 * answers the probe results as JSON, cached for `settings.process.probingMaxAge`; a bad URL is a
 * usage error; and — beyond Kopf — the endpoint answers 500 when a watch stream has been failing
 * or silent for longer than `settings.watching.unhealthyAfter`, so that Kubernetes restarts a stuck
 * operator (more faults in watch_faults_test.ts).
 */

import assert from "node:assert/strict";
import * as kopf from "@kopf/kopf";
import { loadKubeconfig } from "../src/api/kubeconfig.ts";
import { freshNamespace, settle, testCluster } from "./support/cluster.ts";
import { freePort, getJson } from "./support/environment.ts";
import { KopfProcess } from "./support/kopf_process.ts";
import { runOperator } from "./support/operator.ts";
import { TcpProxy } from "./support/tcp_proxy.ts";
import { eventually } from "./support/eventually.ts";

const CLI = new URL("../cli/main.ts", import.meta.url).pathname;
const ROOT = new URL("..", import.meta.url).pathname;

Deno.test("kopf run -L: GET answers the probes' results as JSON, recomputed once per probingMaxAge", async () => {
  const { client } = await testCluster();
  const namespace = await freshNamespace(client, "liveness");
  const url = `http://127.0.0.1:${freePort()}/healthz`;
  await using operator = await KopfProcess.start(
    namespace,
    ["-L", url, "tests/fixtures/activities/lifecycle.ts"],
    { KOPF_TEST_PROBING_MAX_AGE: "1.5" }, // set by the startup handler
  );
  await operator.waitForLine(/Serving health status at/);
  const first = await getJson(url);
  assert.equal(first.status, 200);
  assert.deepEqual(Object.keys(first.body), ["now"]);
  assert.ok(!Number.isNaN(Date.parse(first.body.now as string)));
  assert.deepEqual(await getJson(url), first, "cached");
  await new Promise((resolve) => setTimeout(resolve, 1700));
  const later = await getJson(url);
  assert.equal(later.status, 200);
  assert.notEqual(later.body.now, first.body.now, "recomputed after probingMaxAge");
  assert.equal((await fetch(url.replace("/healthz", "/other"))).status, 404);

  const started = operator.lines.findIndex((line) => /Activity 'configure' succeeded/.test(line));
  const serving = operator.lines.findIndex((line) => /Serving health status at/.test(line));
  assert.ok(started >= 0 && serving > started, "served after the startup handlers");
  assert.equal((await operator.stop()).code, 0);
  await assert.rejects(fetch(url), "not served after the exit");
});

Deno.test("kopf run -L with a bad URL is a usage error, exit code 2", async () => {
  for (const bad of ["not-a-url", "https://0.0.0.0:8080/healthz", "http://0.0.0.0:99999/"]) {
    const output = await new Deno.Command(Deno.execPath(), {
      args: ["run", "-A", CLI, "run", "-A", "--liveness", bad, "examples/01-minimal/example.ts"],
      cwd: ROOT,
      env: { NO_COLOR: "1" },
      stdout: "piped",
      stderr: "piped",
    }).output();
    const stderr = new TextDecoder().decode(output.stderr);
    assert.equal(output.code, 2, stderr);
    assert.match(stderr, /^Usage: kopf run/);
    assert.match(stderr, /Error: --liveness /);
  }
});

Deno.test("liveness answers 500 naming the stream once a watch has failed for longer than unhealthyAfter", async () => {
  const { client, credentials } = await testCluster();
  const namespace = await freshNamespace(client, "unhealthy");
  const proxy = new TcpProxy(Number(new URL(credentials.server).port));
  const text = await Deno.readTextFile(Deno.env.get("KOPF_TEST_KUBECONFIG")!);
  const path = await Deno.makeTempFile({ suffix: ".kubeconfig" });
  await Deno.writeTextFile(path, text.replaceAll(credentials.server, `https://127.0.0.1:${proxy.port}`));

  const registry = new kopf.Registry();
  kopf.on.event("kopfexamples", { registry }, function seen() {});
  kopf.on.probe({ registry, id: "alive" }, () => true);
  const settings = new kopf.Settings();
  settings.watching.unhealthyAfter = 3;
  settings.watching.serverTimeout = 1; // a quiet stream's sign of life: the server ends each watch on time
  settings.watching.reconnectBackoffMax = 0.5;
  settings.networking.errorBackoffs = [];
  const operator = await runOperator(registry, namespace, {
    credentials: await loadKubeconfig({ path }),
    settings,
    liveness: "http://127.0.0.1:0/healthz",
  });
  try {
    const url = operator.running.liveness!;
    assert.match(url, /^http:\/\/127\.0\.0\.1:\d+\/healthz$/);
    assert.deepEqual(await getJson(url), { status: 200, body: { alive: true } });
    await settle(5);
    assert.deepEqual(await getJson(url), { status: 200, body: { alive: true } }, "quiet but alive beyond the bound");

    const cut = Date.now();
    await proxy[Symbol.asyncDispose](); // The API server is unreachable from now on.
    const answer = await eventually("a 500 from the liveness endpoint", async () => {
      const answer = await getJson(url);
      return answer.status === 500 ? answer : undefined;
    }, { seconds: 30 });
    const streams = answer.body.streams as Record<string, { failingSince: string; lastError: string; reason: string }>;
    const name = `kopfexamples.v1.kopf.dev in ${namespace}`;
    assert.deepEqual(Object.keys(streams), [name], JSON.stringify(answer.body));
    assert.ok(Date.parse(streams[name].failingSince) >= cut - 1000, streams[name].failingSince);
    assert.ok(streams[name].lastError, "says why");
    assert.match(streams[name].reason, /^(failing|silent)$/);
    assert.match(answer.body.error as string, /failing or silent for longer than 3 s/);
  } finally {
    await operator.stop();
  }
});
