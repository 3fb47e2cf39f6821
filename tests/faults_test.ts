/**
 * The fault suite's short variants (issue 11; the long runs are bench/faults.ts, with the same
 * scenarios from tests/support/fault_scenarios.ts): an operator process under a churn of objects
 * survives SIGKILLs, an API server restart and a burst of 5xx answers without missing an
 * object, completing a create handler twice (beyond a result lost with a killed process) or
 * leaving a deletion stuck; its liveness endpoint answers non-200 during each fault and 200 after.
 *
 * `settings.watching.unhealthyAfter` is 6 s here, so that faults of 12–20 s show on the endpoint.
 */

import assert from "node:assert/strict";
import { ApiClient } from "../src/api/client.ts";
import { loadKubeconfig } from "../src/api/kubeconfig.ts";
import { LocalCluster } from "../testing.ts";
import { applyExampleCrd, testCluster } from "./support/cluster.ts";
import { type FaultEnvironment, type FaultReport, kills, proxied, restarts } from "./support/fault_scenarios.ts";

const UNHEALTHY_AFTER = 6;

/** The shared cluster as a fault environment (no API server restarts: other tests use it). */
async function sharedEnvironment(): Promise<FaultEnvironment> {
  const { client, kubeconfig, credentials } = await testCluster();
  const token = (await credentials.authorization())!.replace(/^Bearer /, "");
  return {
    client,
    kubeconfig,
    directory: await Deno.makeTempDir({ prefix: "kopf-faults-" }),
    upstream: { server: credentials.server, caCert: credentials.tls.caCerts![0], token },
    unhealthyAfter: UNHEALTHY_AFTER,
  };
}

/** What every scenario must show; the report's notes and folder (log, ledger) explain a failure. */
function assertSurvived(report: FaultReport): void {
  const context = `${JSON.stringify(report, null, 2)}`;
  assert.ok(report.objects > 0, context);
  assert.equal(report.missed, 0, `missed objects\n${context}`);
  assert.equal(report.stuck, 0, `stuck deletions\n${context}`);
  assert.equal(report.unexplainedDuplicates, 0, `a create handler completed twice\n${context}`);
  assert.notEqual(report.recovery, null, `never recovered\n${context}`);
  assert.equal(report.unhealthyDuring, true, `liveness stayed 200 during a fault\n${context}`);
  assert.notEqual(report.healthyAfter, null, `liveness not 200 after the faults\n${context}`);
}

Deno.test("fault suite: 3 SIGKILLs of the operator during a churn of 30 objects", async () => {
  const report = await kills(await sharedEnvironment(), { kills: 3, objects: 30, spacing: 6 });
  assertSurvived(report);
  // At most one result can be lost per kill: more duplicates would be a defect even if explained.
  assert.ok(report.duplicates <= 3, JSON.stringify(report));
});

Deno.test("fault suite: a 20-s burst of 5xx answers between the operator and the API server", async () => {
  const report = await proxied(await sharedEnvironment(), {
    name: "5xx",
    fault: { kind: "fail", status: 503 },
    seconds: 20,
    objects: 30,
  });
  assertSurvived(report);
  assert.equal(report.duplicates, 0, JSON.stringify(report));
});

Deno.test("fault suite: the API server restarted once (12 s down) during a churn of 30 objects", async () => {
  // A cluster of the test's own: the shared one serves the other tests.
  await using cluster = await LocalCluster.start();
  using client = new ApiClient(await loadKubeconfig({ path: cluster.kubeconfig }));
  await applyExampleCrd(client);
  const report = await restarts({
    client,
    kubeconfig: cluster.kubeconfig,
    directory: await Deno.makeTempDir({ prefix: "kopf-faults-" }),
    upstream: { server: cluster.server, caCert: cluster.caCert, token: cluster.token },
    apiserver: cluster,
    unhealthyAfter: UNHEALTHY_AFTER,
  }, { restarts: 1, down: 12, up: 10, objects: 30 });
  assertSurvived(report);
  assert.equal(report.duplicates, 0, JSON.stringify(report));
});
