/**
 * examples/18-crd-versions: crd.yaml is what `kopf generate crd` makes of types.ts; with the
 * example running, widget-v1.yaml (written at v1) reads back at v2 converted, the handler sees it
 * at v2, an update made through v1 keeps v2's tier, and a size the converter cannot read is refused
 * with its message. The CRD is deleted afterwards: its webhook would point at an operator that is gone.
 */

import assert from "node:assert/strict";
import { parse, stringify } from "yaml";
import { resourcePath } from "../../src/api/paths.ts";
import type { KubernetesObject } from "../../src/model/body.ts";
import { CRDS } from "../../src/reactor/observation.ts";
import { applyCrds, freshNamespace, testCluster } from "../support/cluster.ts";
import { runExample } from "../support/examples.ts";
import { runKopf } from "../support/kopf_process.ts";
import { eventually } from "../support/eventually.ts";
import { kubectl } from "../support/kubectl.ts";

const FOLDER = new URL("../../examples/18-crd-versions/", import.meta.url);
const NAME = "kopf-widget-1";

async function read(version: string, namespace: string): Promise<KubernetesObject> {
  const result = await kubectl(["get", `kopfwidgets.${version}.kopf.dev`, NAME, "-n", namespace, "-o", "json"]);
  assert.equal(result.code, 0, result.stderr);
  return JSON.parse(result.stdout);
}

Deno.test("examples/18-crd-versions: crd.yaml is generated from types.ts", async () => {
  const generated = await runKopf([
    "generate",
    "crd",
    "examples/18-crd-versions/types.ts",
    "--kind",
    "KopfWidget",
    "--group",
    "kopf.dev",
    "--version",
    "v1",
    "--version",
    "v2",
    "--short-name",
    "kwd",
  ]);
  assert.equal(generated.code, 0, generated.stderr);
  assert.deepEqual(parse(generated.stdout), parse(await Deno.readTextFile(new URL("crd.yaml", FOLDER))));
});

Deno.test("examples/18-crd-versions: a widget written at v1 is stored and handled at v2, and read at both", async () => {
  const { client } = await testCluster();
  await applyCrds(client, new URL("crd.yaml", FOLDER));
  const namespace = await freshNamespace(client, "ex18");
  await using operator = await runExample("18-crd-versions", namespace);
  try {
    // The operator points the CRD at itself, and the API server takes that up a moment later.
    const widget = await Deno.readTextFile(new URL("widget-v1.yaml", FOLDER));
    await eventually("the conversion webhook to be active", async () => {
      const applied = await kubectl(["apply", "-n", namespace, "-f", "-"], widget);
      return applied.code === 0 ? true : undefined;
    });
    const atV2 = await read("v2", namespace);
    assert.deepEqual(atV2.spec, { size: { value: 10, unit: "Gi" } });
    const handled = await eventually("the creation handler's result", async () => {
      const status = (await read("v2", namespace)).status as { created?: { message?: string } } | undefined;
      return status?.created?.message;
    });
    assert.equal(handled, "10 Gi, standard tier");

    const patch = ["--type=merge", "-p", '{"spec":{"tier":"gold"}}'];
    assert.equal((await kubectl(["patch", "kopfwidgets.v2.kopf.dev", NAME, "-n", namespace, ...patch])).code, 0);
    const atV1 = await read("v1", namespace);
    assert.deepEqual(atV1.spec, { size: "10Gi" });
    assert.equal(atV1.metadata.annotations?.["kopfwidgets.kopf.dev/v2-fields"], '{"tier":"gold"}');
    // Read at v1, changed, written back at v1 (again if the operator wrote to it meanwhile: a 409 Conflict).
    await eventually("a replacement at v1", async () => {
      const current = await read("v1", namespace);
      const replaced = await kubectl(["replace", "-f", "-"], JSON.stringify({ ...current, spec: { size: "1Ti" } }));
      if (replaced.code !== 0 && !replaced.stderr.includes("Conflict")) assert.fail(replaced.stderr);
      return replaced.code === 0 ? true : undefined;
    });
    assert.deepEqual((await read("v2", namespace)).spec, { size: { value: 1, unit: "Ti" }, tier: "gold" });

    const bad = stringify({ ...parse(widget), metadata: { name: "kopf-widget-2" }, spec: { size: "10Ki" } });
    const refused = await kubectl(["apply", "-n", namespace, "-f", "-"], bad);
    assert.notEqual(refused.code, 0, refused.stdout);
    assert.match(refused.stderr, /spec\.size "10Ki" is not a size such as 10Gi \(units: Mi, Gi, Ti\)\./);
    assert.equal((await operator.stop()).code, 0, operator.output);
  } finally {
    await operator.stop("SIGKILL");
    await client.request({ method: "DELETE", path: resourcePath(CRDS, { name: "kopfwidgets.kopf.dev" }) });
  }
});
