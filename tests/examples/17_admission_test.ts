/**
 * examples/17-admission: the real API server calls the example's webhooks: a kopfexample without
 * spec.numbers gets [1, 2, 3]; a non-number is denied with the handler's message; a number-like
 * string passes with a warning. The example's `auto.kopf.dev` configurations cover kopfexamples in
 * every namespace, so the test deletes them whatever happens.
 */

import assert from "node:assert/strict";
import { parse } from "yaml";
import { resourcePath } from "../../src/api/paths.ts";
import { webhookConfigurationPath } from "../../src/api/webhook_configurations.ts";
import type { KubernetesObject } from "../../src/model/body.ts";
import { freshNamespace, KOPFEXAMPLES, testCluster } from "../support/cluster.ts";
import { eventually } from "../support/eventually.ts";
import { OBJ_NAME, runExample } from "../support/examples.ts";

interface KubeResponse {
  status: number;
  body: Record<string, unknown>;
  warnings: string[];
}

/** A request that keeps the `Warning` headers, which admission warnings become (the API client drops them). */
async function kube(method: string, path: string, body?: unknown, dryRun = false): Promise<KubeResponse> {
  const { credentials } = await testCluster();
  const http = Deno.createHttpClient({
    caCerts: credentials.tls.caCerts,
    cert: credentials.tls.cert,
    key: credentials.tls.key,
  });
  try {
    const headers = new Headers({ Accept: "application/json" });
    const authorization = await credentials.authorization();
    if (authorization) headers.set("Authorization", authorization);
    if (body !== undefined) {
      headers.set("Content-Type", method === "PATCH" ? "application/merge-patch+json" : "application/json");
    }
    const url = new URL(credentials.server + path);
    if (dryRun) url.searchParams.set("dryRun", "All");
    const response = await fetch(url, {
      method,
      headers,
      body: body === undefined ? undefined : JSON.stringify(body),
      client: http,
    });
    const text = await response.text();
    const warnings = [...(response.headers.get("warning") ?? "").matchAll(/\d{3} \S+ "((?:[^"\\]|\\.)*)"/g)]
      .map((match) => match[1].replace(/\\(.)/g, "$1"));
    return { status: response.status, body: text ? JSON.parse(text) : {}, warnings };
  } finally {
    http.close();
  }
}

Deno.test("examples/17-admission: defaults spec.numbers, denies a non-number, warns about a number-like string", async () => {
  const { client } = await testCluster();
  const namespace = await freshNamespace(client, "ex17");
  const obj = parse(await Deno.readTextFile(new URL("../../examples/obj.yaml", import.meta.url))) as KubernetesObject;
  const objects = resourcePath(KOPFEXAMPLES, { namespace });
  const path = resourcePath(KOPFEXAMPLES, { namespace, name: OBJ_NAME });
  await using operator = await runExample("17-admission", namespace);
  try {
    // The configurations take a moment to be written and to reach the API server: probe with dry runs.
    const dry = await eventually("the mutating webhook to be active", async () => {
      const response = await kube("POST", objects, obj, true);
      return (response.body.spec as Record<string, unknown> | undefined)?.numbers ? response : undefined;
    });
    assert.deepEqual((dry.body.spec as Record<string, unknown>).numbers, [1, 2, 3]);

    const created = await kube("POST", objects, obj);
    assert.equal(created.status, 201, JSON.stringify(created.body));
    assert.deepEqual((created.body.spec as Record<string, unknown>).numbers, [1, 2, 3]);

    const denied = await kube("PATCH", path, { spec: { numbers: ["x"] } });
    assert.equal(denied.status, 400, JSON.stringify(denied.body));
    assert.match(String(denied.body.message), /denied the request: "x" is not a number\./);

    const warned = await kube("PATCH", path, { spec: { numbers: ["4"] } });
    assert.equal(warned.status, 200, JSON.stringify(warned.body));
    assert.deepEqual(warned.warnings, ['"4" is a string, but a number-like one.']);
    assert.equal((await operator.stop()).code, 0, operator.output);
  } finally {
    await operator.stop("SIGKILL");
    for (const type of ["validating", "mutating"] as const) {
      await kube("DELETE", webhookConfigurationPath(type, "auto.kopf.dev"));
    }
  }
});
