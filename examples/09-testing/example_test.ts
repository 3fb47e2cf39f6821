/**
 * Testing an operator end to end, as a user's project would: a real API server on loopback
 * (`LocalCluster`), the operator run as `kopf run` would run it (`KopfRunner`), and assertions
 * on the objects and on the operator's output. No mocks: what passes here passes on a cluster.
 *
 * Run it with `deno test -A examples/09-testing/`.
 *
 * @module
 */

import assert from "node:assert/strict";
import { parse } from "yaml";
import { KopfRunner, LocalCluster } from "@kopf/kopf/testing";

const HERE = new URL(".", import.meta.url);
const ROOT = new URL("../..", import.meta.url);

/** A minimal JSON client for the test's own requests, authenticated as the cluster's admin. */
function clientOf(cluster: LocalCluster): (method: string, path: string, body?: unknown) => Promise<unknown> {
  const tls = Deno.createHttpClient({ caCerts: [cluster.caCert] });
  return async (method, path, body) => {
    const response = await fetch(`${cluster.server}${path}`, {
      method,
      client: tls,
      headers: { authorization: `Bearer ${cluster.token}`, "content-type": "application/json" },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const payload = await response.json();
    if (!response.ok) throw new Error(`${method} ${path}: ${response.status} ${JSON.stringify(payload)}`);
    return payload;
  };
}

/** Polls until `check` returns a value other than undefined; the bound only stops a broken test from hanging. */
async function eventually<T>(what: string, check: () => Promise<T | undefined>, seconds = 60): Promise<T> {
  const deadline = Date.now() + seconds * 1000;
  for (;;) {
    const value = await check().catch(() => undefined);
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`Timed out waiting for ${what}.`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

Deno.test("the operator handles a new kopfexample: status.createFn is set and the handler's line is logged", async () => {
  await using cluster = await LocalCluster.start();
  const request = clientOf(cluster);

  const crd = parse(await Deno.readTextFile(new URL("../crd.yaml", HERE)));
  await request("POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", crd);
  await eventually("the CRD to be established", async () => {
    const current = await request(
      "GET",
      `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${crd.metadata.name}`,
    );
    const conditions = (current as { status?: { conditions?: { type: string; status: string }[] } }).status
      ?.conditions ?? [];
    return conditions.some((c) => c.type === "Established" && c.status === "True") || undefined;
  });

  // Objects created before the operator lists them are new to it all the same: no need to wait.
  await using runner = await KopfRunner.start(
    ["run", "-n", "default", "--standalone", new URL("example.ts", HERE).pathname],
    { kubeconfig: cluster.kubeconfig, cwd: ROOT },
  );

  const obj = parse(await Deno.readTextFile(new URL("../obj.yaml", HERE)));
  const path = `/apis/kopf.dev/v1/namespaces/default/kopfexamples`;
  await request("POST", path, obj);
  const result = await eventually("status.createFn", async () => {
    const current = await request("GET", `${path}/${obj.metadata.name}`) as { status?: Record<string, unknown> };
    return current.status?.createFn;
  });
  assert.deepEqual(result, { logged: true });

  await request("DELETE", `${path}/${obj.metadata.name}`);
  await runner.stop(); // Rejects if the operator exited with an error.

  assert.equal(runner.exitCode, 0);
  assert.match(runner.output, /Something was logged here\./);
  assert.match(runner.output, /Handler 'createFn' succeeded\./);
});
