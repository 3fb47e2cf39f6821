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
import * as kopf from "@kopf/kopf";
import { KopfRunner, LocalCluster } from "@kopf/kopf/testing";
import type { KopfExample } from "../types.ts";

const HERE = new URL(".", import.meta.url);
const ROOT = new URL("../..", import.meta.url);

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
  // The test's own requests go through the same client that handlers get as `api`.
  using api = await kopf.connect({ kubeconfig: cluster.kubeconfig });

  const crd = parse(await Deno.readTextFile(new URL("../crd.yaml", HERE)));
  await api.create(crd);
  await eventually("the CRD to be established", async () => {
    const current = await api.get("customresourcedefinitions", crd.metadata.name);
    return current?.status?.conditions?.some((c) => c.type === "Established" && c.status === "True") || undefined;
  });

  // Objects created before the operator lists them are new to it all the same: no need to wait.
  await using runner = await KopfRunner.start(
    ["run", "-n", "default", "--standalone", new URL("example.ts", HERE).pathname],
    { kubeconfig: cluster.kubeconfig, cwd: ROOT },
  );

  const obj: KopfExample = parse(await Deno.readTextFile(new URL("../obj.yaml", HERE)));
  const created = await api.create({ ...obj, metadata: { ...obj.metadata, namespace: "default" } });
  const name = created.metadata.name;
  const result = await eventually("status.createFn", async () => {
    const current = await api.get<KopfExample>("kopfexamples", name, { namespace: "default" });
    return current?.status?.createFn;
  });
  assert.deepEqual(result, { logged: true });

  await api.delete("kopfexamples", name, { namespace: "default" });
  await runner.stop(); // Rejects if the operator exited with an error.

  assert.equal(runner.exitCode, 0);
  assert.match(runner.output, /Something was logged here\./);
  assert.match(runner.output, /Handler 'createFn' succeeded\./);
});
