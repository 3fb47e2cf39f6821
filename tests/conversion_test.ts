/**
 * Conversion webhooks end to end (issue 23): `kopf run` of tests/fixtures/conversion/handlers.ts
 * serves the converters of widgets.conversion.kopf.dev (tests/fixtures/conversion/crd.yaml: v1
 * served, v2 served and stored) on 127.0.0.1 and points the CRD's `spec.conversion` at itself;
 * the real kube-apiserver calls it for every read and write at a version other than the stored
 * one, and kubectl sees the converted objects, or a converter's error.
 */

import assert from "node:assert/strict";
import { stringify } from "yaml";
import { resourcePath } from "../src/api/paths.ts";
import type { KubernetesObject } from "../src/model/body.ts";
import { CRDS } from "../src/reactor/observation.ts";
import { applyCrds, freshNamespace, testCluster } from "./support/cluster.ts";
import { freePort } from "./support/environment.ts";
import { KopfProcess } from "./support/kopf_process.ts";
import { eventually } from "./support/eventually.ts";
import { kubectl } from "./support/kubectl.ts";

const CRD_YAML = new URL("./fixtures/conversion/crd.yaml", import.meta.url);
const HANDLERS = "tests/fixtures/conversion/handlers.ts";
const CRD = "widgets.conversion.kopf.dev";
const CARRIED = "conversion.kopf.dev/v2-fields";

/** kubectl that must succeed: its stdout. */
async function ok(args: string[], input?: string): Promise<string> {
  const result = await kubectl(args, input);
  assert.equal(result.code, 0, `kubectl ${args.join(" ")}: ${result.stderr}`);
  return result.stdout;
}

/** The object as kubectl reads it at a version. */
async function read(version: string, namespace: string, name: string): Promise<KubernetesObject> {
  return JSON.parse(await ok(["get", `widgets.${version}.conversion.kopf.dev`, name, "-n", namespace, "-o", "json"]));
}

/** The CRD's `spec.conversion`, as the API server has it. */
async function conversionBlock(): Promise<Record<string, unknown>> {
  const { client } = await testCluster();
  const crd = await client.request<{ spec: { conversion: Record<string, unknown> } }>({
    path: resourcePath(CRDS, { name: CRD }),
  });
  return crd.spec.conversion;
}

function caBundleOf(conversion: Record<string, unknown>): string | undefined {
  return (conversion.webhook as { clientConfig?: { caBundle?: string } } | undefined)?.clientConfig?.caBundle;
}

/** Starts the operator and waits until the API server converts through it (a read at v1 works). */
async function startOperator(namespace: string, port: number, probe: string, previousCa?: string) {
  const operator = await KopfProcess.start(namespace, [HANDLERS], { CONVERSION_TEST_PORT: String(port) });
  try {
    await eventually("the CRD's conversion webhook to point at the operator", async () => {
      const ca = caBundleOf(await conversionBlock());
      return ca !== undefined && ca !== previousCa ? true : undefined;
    });
    // The API server takes up a changed CRD a moment later: until then, reads at v1 may still fail.
    await eventually("reads at v1 to be converted", async () => {
      const result = await kubectl(["get", `widgets.v1.conversion.kopf.dev`, probe, "-n", namespace, "-o", "json"]);
      return result.code === 0 ? true : undefined;
    });
  } catch (error) {
    await operator.stop("SIGKILL");
    throw new Error(`${(error as Error).message}\n--- operator output ---\n${operator.output}`);
  }
  return operator;
}

function manifest(name: string, namespace: string, size: string): string {
  return stringify({
    apiVersion: "conversion.kopf.dev/v1",
    kind: "Widget",
    metadata: { name, namespace },
    spec: { size },
  });
}

Deno.test("conversion webhooks: v1 and v2 of one object, kept through updates at v1, errors, and a restart", async () => {
  const { client } = await testCluster();
  await applyCrds(client, CRD_YAML);
  const namespace = await freshNamespace(client, "conversion");
  const port = freePort();
  // An object stored at v2 before the operator starts: its v1 reading is the operator's readiness probe.
  await ok(
    ["create", "-f", "-"],
    stringify({
      apiVersion: "conversion.kopf.dev/v2",
      kind: "Widget",
      metadata: { name: "probe", namespace },
      spec: { size: { value: 1, unit: "Mi" } },
    }),
  );
  let operator = await startOperator(namespace, port, "probe");
  try {
    const conversion = await conversionBlock();
    assert.deepEqual(conversion, {
      strategy: "Webhook",
      webhook: {
        clientConfig: { url: `https://127.0.0.1:${port}/conversion/${CRD}`, caBundle: caBundleOf(conversion) },
        conversionReviewVersions: ["v1"],
      },
    });

    // Created as v1, stored as v2: read back at both versions.
    await ok(["apply", "-f", "-"], manifest("w1", namespace, "10Gi"));
    const atV2 = await read("v2", namespace, "w1");
    assert.equal(atV2.apiVersion, "conversion.kopf.dev/v2");
    assert.deepEqual(atV2.spec, { size: { value: 10, unit: "Gi" } });
    const atV1 = await read("v1", namespace, "w1");
    assert.equal(atV1.apiVersion, "conversion.kopf.dev/v1");
    assert.deepEqual(atV1.spec, { size: "10Gi" });
    assert.equal(atV1.metadata.uid, atV2.metadata.uid);
    assert.equal(atV1.metadata.resourceVersion, atV2.metadata.resourceVersion);

    // Listed at both versions.
    for (const version of ["v1", "v2"]) {
      const names = await ok(["get", `widgets.${version}.conversion.kopf.dev`, "-n", namespace, "-o", "name"]);
      assert.deepEqual(names.trim().split("\n").sort(), [
        "widget.conversion.kopf.dev/probe",
        "widget.conversion.kopf.dev/w1",
      ]);
    }

    // v2's tier, which v1 lacks, travels through v1 in an annotation and survives an update made at v1.
    await ok([
      "patch",
      "widgets.v2.conversion.kopf.dev",
      "w1",
      "-n",
      namespace,
      "--type=merge",
      "-p",
      '{"spec":{"tier":"gold"}}',
    ]);
    const carried = await read("v1", namespace, "w1");
    assert.deepEqual(carried.spec, { size: "10Gi" });
    assert.equal(carried.metadata.annotations?.[CARRIED], '{"tier":"gold"}');
    const edited = { ...carried, spec: { size: "20Gi" } };
    await ok(["replace", "-f", "-"], JSON.stringify(edited));
    const updated = await read("v2", namespace, "w1");
    assert.deepEqual(updated.spec, { size: { value: 20, unit: "Gi" }, tier: "gold" });
    assert.equal(updated.metadata.annotations?.[CARRIED], undefined, "the carrier annotation is not stored at v2");
    await ok([
      "patch",
      "widgets.v1.conversion.kopf.dev",
      "w1",
      "-n",
      namespace,
      "--type=merge",
      "-p",
      '{"spec":{"size":"30Gi"}}',
    ]);
    assert.deepEqual((await read("v2", namespace, "w1")).spec, { size: { value: 30, unit: "Gi" }, tier: "gold" });

    // A converter's error is the API request's error.
    const refused = await kubectl(["apply", "-f", "-"], manifest("w2", namespace, "huge"));
    assert.notEqual(refused.code, 0, refused.stdout);
    assert.match(refused.stderr, /spec\.size "huge" is not a size such as 10Gi\./);

    // Stopped, the operator leaves the conversion block as it is: reads at v2 work, reads at v1 cannot.
    assert.equal((await operator.stop()).code, 0, operator.output);
    assert.deepEqual(await conversionBlock(), conversion);
    assert.deepEqual((await read("v2", namespace, "w1")).spec, { size: { value: 30, unit: "Gi" }, tier: "gold" });
    const down = await kubectl(["get", "widgets.v1.conversion.kopf.dev", "w1", "-n", namespace, "-o", "json"]);
    assert.notEqual(down.code, 0, down.stdout);

    // Restarted with a new self-signed certificate: a new caBundle, and reads at v1 work again.
    operator = await startOperator(namespace, port, "w1", caBundleOf(conversion));
    assert.notEqual(caBundleOf(await conversionBlock()), caBundleOf(conversion));
    assert.deepEqual((await read("v1", namespace, "w1")).spec, { size: "30Gi" });
    assert.equal((await operator.stop()).code, 0, operator.output);
  } finally {
    await operator.stop("SIGKILL");
    // The CRD's webhook points at an operator that is gone: the CRD goes too, with its objects.
    await client.request({ method: "DELETE", path: resourcePath(CRDS, { name: CRD }) });
  }
});
