/**
 * The metrics endpoint against a real API server: `kopf run --metrics URL` serves Prometheus'
 * text format — checked by `promtool check metrics` (built from the Go module proxy by
 * tools/promtool.ts) and by a strict reader of the format — and the values follow what happened:
 * N objects handled grow the success counter by N, an injected failure counts as temporary, a
 * watch request ended by the server counts as a reconnect, the API requests are counted by
 * verb, resource and code; objects created at once take one processing cycle each, the echoes of
 * their writes none; the metrics can share the liveness server's port.
 */

import assert from "node:assert/strict";
import { freePort } from "./support/environment.ts";
import { createExample, freshNamespace, KOPFEXAMPLES, testCluster } from "./support/cluster.ts";
import { eventually } from "./support/eventually.ts";
import { ApiError } from "../src/api/errors.ts";
import { resourcePath } from "../src/api/paths.ts";
import { webhookConfigurationPath } from "../src/api/webhook_configurations.ts";
import { type Exposition, parseExposition, total } from "./support/exposition_parser.ts";
import { KopfProcess, runKopf } from "./support/kopf_process.ts";
import { promtool } from "../tools/promtool.ts";
import { metricsRegistry } from "../src/observability/metrics.ts";
import "../src/observability/stream_metrics.ts";

/** Fetches the metrics, checks them with promtool and the strict reader, and returns them parsed. */
async function scrape(url: string): Promise<Exposition> {
  const response = await fetch(url);
  assert.equal(response.status, 200);
  assert.equal(response.headers.get("content-type"), "text/plain; version=0.0.4; charset=utf-8");
  const text = await response.text();
  const checked = await promtool(["check", "metrics"], text);
  // promtool also lints (e.g. naming advice) on stdout; only a parse error fails the check.
  assert.equal(checked.code, 0, `promtool check metrics: ${checked.stdout}${checked.stderr}`);
  return parseExposition(text);
}

Deno.test("kopf run --metrics: valid exposition whose counters follow the handled objects, failures and reconnects", async () => {
  const { client } = await testCluster();
  const namespace = await freshNamespace(client, "metrics");
  const url = `http://127.0.0.1:${freePort()}/metrics`;
  await using operator = await KopfProcess.start(
    namespace,
    ["--metrics", url, "tests/fixtures/metrics_handlers.ts"],
    { KOPF_TEST_SERVER_TIMEOUT: "2" },
  );
  await operator.waitForLine(/Serving metrics at/);
  const before = await scrape(url);
  const success = { handler: "created", resource: "kopfexamples", cause: "create", outcome: "success" };
  assert.equal(total(before, "kopf_handler_runs_total", success), 0);
  for (const name of ["kopf_handler_runs_total", "kopf_queue_depth", "kopf_watch_events_total", "kopf_leader"]) {
    assert.ok(before.types.has(name), `${name} is exposed`);
  }

  const N = 3;
  for (let i = 0; i < N; i++) await createExample(client, namespace, `ok-${i}`, {});
  await createExample(client, namespace, "flaky", { fail: true });
  const after = await eventually("N + 1 successes in the metrics", async () => {
    const metrics = await scrape(url);
    return total(metrics, "kopf_handler_runs_total", success) >= N + 1 ? metrics : undefined;
  });
  assert.equal(total(after, "kopf_handler_runs_total", success), N + 1, "one success per object");
  assert.equal(total(after, "kopf_handler_runs_total", { handler: "created", outcome: "temporary" }), 1);
  assert.equal(total(after, "kopf_handler_runs_total", { outcome: "permanent" }), 0);
  assert.equal(total(after, "kopf_handler_retries_total", { handler: "created" }), 1, "the flaky one's retry");
  assert.equal(total(after, "kopf_handler_duration_seconds_count", { handler: "created" }), N + 2);
  assert.equal(total(after, "kopf_objects", { resource: "kopfexamples" }), N + 1);
  assert.ok(total(after, "kopf_watch_events_total", { resource: "kopfexamples", type: "ADDED" }) >= N + 1);
  assert.ok(total(after, "kopf_queue_latency_seconds_count", { resource: "kopfexamples" }) >= N + 1);
  assert.ok(
    total(after, "kopf_api_requests_total", { verb: "patch", resource: "kopfexamples", code: "200" }) >= N + 1,
    "the handlers' patches",
  );
  assert.equal(total(after, "kopf_watch_stream_healthy", { resource: "kopfexamples", namespace }), 1);
  assert.equal(total(after, "kopf_leader"), 1, "no leader election: this operator does the work");
  assert.equal(total(after, "kopf_peering_paused"), 0, "standalone");
  for (const sample of after.samples) {
    assert.ok(
      !Object.values(sample.labels).some((value) => /^(ok-\d|flaky)$/.test(value)),
      `no object name as a label: ${JSON.stringify(sample)}`,
    );
  }

  // The server ends each watch request after 2 s: the stream sends another one, a reconnect. The
  // reconnect is counted when the request is sent, the request itself when its answer comes: wait
  // for both.
  const reconnected = await eventually("a watch reconnect and its answered request", async () => {
    const metrics = await scrape(url);
    const reconnects = total(metrics, "kopf_watch_reconnects_total", { resource: "kopfexamples" });
    const watches = total(metrics, "kopf_api_requests_total", { verb: "watch", resource: "kopfexamples" });
    return reconnects >= 1 && watches >= 2 ? metrics : undefined;
  }, { seconds: 30 });
  assert.ok(total(reconnected, "kopf_watch_reconnects_total", { resource: "kopfexamples" }) >= 1);
  assert.ok(total(reconnected, "kopf_api_requests_total", { verb: "watch", resource: "kopfexamples" }) >= 2);
  assert.equal((await operator.stop()).code, 0);
});

Deno.test("kopf run --metrics: objects created at once take one cycle each, the echoes of both their writes none", async () => {
  const { client } = await testCluster();
  const namespace = await freshNamespace(client, "metrics-cycles");
  const url = `http://127.0.0.1:${freePort()}/metrics`;
  await using operator = await KopfProcess.start(namespace, ["--metrics", url, "tests/fixtures/metrics_handlers.ts"]);
  await operator.waitForLine(/Serving metrics at/);
  // Enough at once that an object's two echoes (the default storages write the annotations, then the status) queue one
  // behind the other: until 2026-12-07 that made the first a superseded cycle and the second a full one.
  const N = 300;
  let next = 0;
  await Promise.all(Array.from({ length: 32 }, async () => {
    while (next < N) await createExample(client, namespace, `burst-${next++}`, {});
  }));
  const success = { handler: "created", resource: "kopfexamples", outcome: "success" };
  const settled = await eventually("every object handled and both echoes of each processed", async () => {
    const metrics = await scrape(url);
    const echoes = total(metrics, "kopf_watch_events_total", { resource: "kopfexamples", type: "MODIFIED" });
    const quiet = total(metrics, "kopf_queue_depth", { resource: "kopfexamples" }) === 0;
    return total(metrics, "kopf_handler_runs_total", success) >= N && echoes >= 2 * N && quiet ? metrics : undefined;
  }, { seconds: 120 });
  assert.equal(total(settled, "kopf_handler_runs_total", success), N);
  assert.equal(total(settled, "kopf_watch_events_total", { resource: "kopfexamples", type: "MODIFIED" }), 2 * N);
  const cycles = total(settled, "kopf_cycles_total", { resource: "kopfexamples" });
  const reconnects = total(settled, "kopf_watch_reconnects_total", { resource: "kopfexamples" });
  assert.equal(cycles, N, `${cycles} cycles for ${N} objects (the watch reconnected ${reconnects} times)`);
  assert.equal((await operator.stop()).code, 0);
});

Deno.test("kopf run --metrics: permanent failures and timeouts are counted as such", async () => {
  const { client } = await testCluster();
  const namespace = await freshNamespace(client, "metrics-outcomes");
  const url = `http://127.0.0.1:${freePort()}/metrics`;
  await using operator = await KopfProcess.start(namespace, ["--metrics", url, "tests/fixtures/metrics_handlers.ts"]);
  await operator.waitForLine(/Serving metrics at/);
  await createExample(client, namespace, "troubled", { slow: true, doom: true });
  const metrics = await eventually("the slow handler's timeout in the metrics", async () => {
    const metrics = await scrape(url);
    return total(metrics, "kopf_handler_runs_total", { handler: "slow", outcome: "timeout" }) >= 1
      ? metrics
      : undefined;
  });
  assert.equal(total(metrics, "kopf_handler_runs_total", { handler: "slow", outcome: "timeout" }), 1);
  // The retry would come after the timeout: the handler gives up at once, as timed out.
  assert.equal(total(metrics, "kopf_handler_runs_total", { handler: "slow", outcome: "temporary" }), 0);
  assert.equal(total(metrics, "kopf_handler_runs_total", { handler: "doomed", outcome: "permanent" }), 1);
  assert.equal(total(metrics, "kopf_handler_runs_total", { handler: "doomed", outcome: "success" }), 0);
  assert.equal(total(metrics, "kopf_handler_runs_total", { handler: "created", outcome: "success" }), 1);
  assert.equal((await operator.stop()).code, 0);
});

Deno.test("kopf run --metrics on the liveness server's host and port: both paths answer", async () => {
  const { client } = await testCluster();
  const namespace = await freshNamespace(client, "metrics-shared");
  const port = freePort();
  await using operator = await KopfProcess.start(namespace, [
    "--liveness",
    `http://127.0.0.1:${port}/healthz`,
    "--metrics",
    `http://127.0.0.1:${port}/metrics`,
    "tests/fixtures/metrics_handlers.ts",
  ]);
  await operator.waitForLine(/Serving health status at/);
  await createExample(client, namespace, "one", {});
  const metrics = await eventually("a success in the metrics", async () => {
    const metrics = await scrape(`http://127.0.0.1:${port}/metrics`);
    return total(metrics, "kopf_handler_runs_total", { outcome: "success" }) >= 1 ? metrics : undefined;
  });
  assert.equal(total(metrics, "kopf_objects", { resource: "kopfexamples" }), 1);
  const health = await fetch(`http://127.0.0.1:${port}/healthz`);
  assert.equal(health.status, 200);
  assert.deepEqual(await health.json(), { alive: true });
  assert.ok(!operator.output.includes("Serving metrics at"), "no second server");
  assert.equal((await operator.stop()).code, 0);
});

Deno.test("the Grafana dashboard queries only the operator's metrics, in expressions that promtool parses", async () => {
  const dashboard = JSON.parse(await Deno.readTextFile(new URL("../docs/grafana_dashboard.json", import.meta.url)));
  const exposed = new Set(parseExposition(metricsRegistry.render()).types.keys());
  const expressions: string[] = dashboard.panels.flatMap((panel: { targets?: { expr: string }[] }) =>
    (panel.targets ?? []).map((target) => target.expr)
  );
  assert.ok(expressions.length >= 20, `${expressions.length} queries`);
  for (const expression of expressions) {
    for (const [name] of expression.matchAll(/kopf_[a-z_]+/g)) {
      assert.ok(exposed.has(name.replace(/_bucket$/, "")), `${name} in ${expression}`);
    }
    const concrete = expression.replaceAll("$__rate_interval", "5m").replaceAll("$job", ".*");
    const checked = await promtool(["--experimental", "promql", "format", concrete], "");
    assert.equal(checked.code, 0, `${concrete}: ${checked.stderr}`);
  }
});

Deno.test("kopf run --metrics: admission handler calls are counted by handler and outcome", async () => {
  const { client } = await testCluster();
  const namespace = await freshNamespace(client, "metrics-webhook");
  const label = crypto.randomUUID().slice(0, 8);
  const url = `http://127.0.0.1:${freePort()}/metrics`;
  const operator = await KopfProcess.start(
    namespace,
    ["--metrics", url, "tests/fixtures/webhook_metrics_handlers.ts"],
    { KOPF_TEST_LABEL: label },
  );
  try {
    await operator.waitForLine(/Serving metrics at/);
    const create = (name: string, spec: Record<string, unknown>) =>
      client.request({
        method: "POST",
        path: resourcePath(KOPFEXAMPLES, { namespace }),
        body: {
          apiVersion: "kopf.dev/v1",
          kind: "KopfExample",
          metadata: { name, labels: { "metrics-test": label } },
          spec,
        },
      });
    // The API server applies a new webhook configuration asynchronously: the first creations may pass unreviewed.
    await eventually("a denial by the webhook", async () => {
      try {
        await create(`deny-${crypto.randomUUID().slice(0, 6)}`, { deny: true });
        return undefined;
      } catch (error) {
        return error instanceof ApiError && /denied by the test/.test(error.message) ? true : undefined;
      }
    });
    await create("allowed", {});
    const metrics = await scrape(url);
    assert.ok(total(metrics, "kopf_webhook_requests_total", { handler: "check", outcome: "denied" }) >= 1);
    assert.ok(total(metrics, "kopf_webhook_requests_total", { handler: "check", outcome: "success" }) >= 1);
    assert.equal(total(metrics, "kopf_webhook_requests_total", { outcome: "error" }), 0);
    assert.ok(total(metrics, "kopf_webhook_duration_seconds_count", { handler: "check" }) >= 2);
    assert.equal((await operator.stop()).code, 0, operator.output);
  } finally {
    await operator.stop("SIGKILL");
    for (const type of ["validating", "mutating"] as const) {
      await client.request({ method: "DELETE", path: webhookConfigurationPath(type, `${label}.metrics.kopf.dev`) })
        .catch(() => {});
    }
  }
});

Deno.test("kopf run --metrics with a bad URL is a usage error, exit code 2", async () => {
  for (const bad of ["not-a-url", "https://0.0.0.0:9090/metrics", "http://0.0.0.0:9090/metrics?x=1"]) {
    const result = await runKopf(["run", "-A", "--metrics", bad, "examples/01-minimal/example.ts"]);
    assert.equal(result.code, 2, result.stderr);
    assert.match(result.stderr, /^Usage: kopf run/);
    assert.match(result.stderr, /Error: --metrics /);
  }
});

Deno.test("kopf run --metrics with --leader-elect: kopf_leader is 1 on the holder only, daemons run there, and move on a stop", async () => {
  const { client } = await testCluster();
  const namespace = await freshNamespace(client, "metrics-leader");
  const lease = `metrics-${crypto.randomUUID().slice(0, 6)}`;
  const replicas = new Map<string, { process: KopfProcess; url: string }>();
  for (const identity of ["replica-1", "replica-2"]) {
    const url = `http://127.0.0.1:${freePort()}/metrics`;
    const process = await KopfProcess.command([
      "run",
      "-n",
      namespace,
      "--metrics",
      url,
      "--leader-elect",
      "--leader-elect-resource-name",
      lease,
      "--leader-elect-resource-namespace",
      namespace,
      "--leader-elect-lease-duration",
      "4",
      "--leader-elect-renew-deadline",
      "3",
      "--leader-elect-retry-period",
      "0.5",
      "tests/fixtures/replicas/handlers.ts",
    ], { POD_ID: identity });
    replicas.set(identity, { process, url });
  }
  /** The replicas' kopf_leader and daemons running, once exactly one of them leads. */
  const leadership = () =>
    eventually("exactly one leader in the metrics", async () => {
      const states = await Promise.all(
        [...replicas].map(async ([identity, { url }]) => {
          const metrics = await scrape(url);
          return {
            identity,
            leader: total(metrics, "kopf_leader"),
            daemons: total(metrics, "kopf_background_running", { kind: "daemon" }),
          };
        }),
      );
      return states.filter((state) => state.leader === 1).length === 1 ? states : undefined;
    });
  try {
    const initial = await leadership();
    const leader = initial.find((state) => state.leader === 1)!.identity;
    await createExample(client, namespace, "guarded", {});
    const running = await eventually("the daemon on the leader", async () => {
      const states = await leadership();
      return states.find((state) => state.identity === leader)!.daemons === 1 ? states : undefined;
    });
    assert.deepEqual(running.filter((state) => state.identity !== leader).map((state) => state.daemons), [0]);

    // A graceful stop releases the Lease: the other replica leads and runs the daemon.
    assert.equal((await replicas.get(leader)!.process.stop()).code, 0);
    replicas.delete(leader);
    const [[successor]] = [...replicas];
    const after = await eventually("the successor leading, with the daemon", async () => {
      const states = await leadership();
      return states[0].daemons === 1 ? states : undefined;
    });
    assert.deepEqual(after, [{ identity: successor, leader: 1, daemons: 1 }]);
  } finally {
    for (const { process } of replicas.values()) await process.stop();
  }
});
