/**
 * Patching against a real API server: a schema that prunes what handlers return is reported.
 */

import assert from "node:assert/strict";
import { ApiConflictError } from "../src/api/errors.ts";
import type { KubernetesObject } from "../src/model/body.ts";
import { freshNamespace, testCluster } from "./support/cluster.ts";
import { eventually } from "./support/eventually.ts";

const CLI = new URL("../cli/main.ts", import.meta.url).pathname;
const ROOT = new URL("..", import.meta.url).pathname;

const STRICT_CRD = {
  apiVersion: "apiextensions.k8s.io/v1",
  kind: "CustomResourceDefinition",
  metadata: { name: "strictexamples.kopf.dev" },
  spec: {
    group: "kopf.dev",
    scope: "Namespaced",
    names: { kind: "StrictExample", plural: "strictexamples", singular: "strictexample" },
    versions: [{
      name: "v1",
      served: true,
      storage: true,
      subresources: { status: {} },
      schema: {
        openAPIV3Schema: {
          type: "object",
          properties: {
            spec: { type: "object", "x-kubernetes-preserve-unknown-fields": true },
            status: { type: "object", properties: { phase: { type: "string" } } },
          },
        },
      },
    }],
  },
};

Deno.test("a status schema that prunes a handler's result is reported as patching inconsistencies", async () => {
  const { client, kubeconfig } = await testCluster();
  try {
    await client.request({
      method: "POST",
      path: "/apis/apiextensions.k8s.io/v1/customresourcedefinitions",
      body: STRICT_CRD,
    });
  } catch (error) {
    if (!(error instanceof ApiConflictError)) throw error;
  }
  await eventually("the strict CRD to be served", async () => {
    await client.request({ path: "/apis/kopf.dev/v1/strictexamples" });
    return true;
  });
  const namespace = await freshNamespace(client, "strict");
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", CLI, "run", "-n", namespace, "--standalone", "tests/fixtures/strict_handlers.ts"],
    cwd: ROOT,
    env: { NO_COLOR: "1", KUBECONFIG: kubeconfig },
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const output = child.output();
  let body: KubernetesObject;
  try {
    await client.request({
      method: "POST",
      path: `/apis/kopf.dev/v1/namespaces/${namespace}/strictexamples`,
      body: { apiVersion: "kopf.dev/v1", kind: "StrictExample", metadata: { name: "s" }, spec: {} },
    });
    body = await eventually("the creation to be handled", async () => {
      const body = await client.request<KubernetesObject>({
        path: `/apis/kopf.dev/v1/namespaces/${namespace}/strictexamples/s`,
      });
      return body.metadata.annotations?.["kopf.zalando.org/last-handled-configuration"] ? body : undefined;
    });
  } finally {
    child.kill("SIGTERM");
  }
  const stderr = new TextDecoder().decode((await output).stderr);
  assert.equal((body.status as Record<string, unknown> | undefined)?.createFn, undefined, "pruned by the schema");
  assert.match(
    stderr,
    /\[.*\/s\] Patching failed with inconsistencies: \[\["add",\["status","createFn","x"\],null,1\]\]/,
  );
});
