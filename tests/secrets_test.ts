/**
 * Secret values never leave the object: with handlers on Secrets at `--debug`, none of the values
 * (in clear or base64) appear in the object's annotations, the operator's output, the Events or
 * the metrics page — while a change of one key still fires the update and field handlers. A
 * diff-base that holds the values in clear (as Python Kopf writes it) is replaced at the next cycle
 * without re-running anything.
 */

import assert from "node:assert/strict";
import type { KubernetesObject } from "../src/model/body.ts";
import { createExample, freshNamespace, getExample, testCluster } from "./support/cluster.ts";
import { freePort } from "./support/environment.ts";
import { KopfProcess } from "./support/kopf_process.ts";
import { eventually } from "./support/eventually.ts";

const LAST_HANDLED = "kopf.zalando.org/last-handled-configuration";
const base64 = (text: string) => btoa(text);

function secret(name: string, data: Record<string, string>, annotations?: Record<string, string>): KubernetesObject {
  return {
    apiVersion: "v1",
    kind: "Secret",
    metadata: { name, labels: { "kopf-test": "secrets" }, annotations },
    type: "Opaque",
    data: Object.fromEntries(Object.entries(data).map(([key, value]) => [key, base64(value)])),
  };
}

/** Every place a value must not be found in, with the value's plain and base64 forms. */
function assertNowhere(values: string[], places: Record<string, string>): void {
  for (const value of values) {
    for (const form of [value, base64(value)]) {
      for (const [place, text] of Object.entries(places)) {
        assert.ok(!text.includes(form), `${JSON.stringify(form)} is in ${place}`);
      }
    }
  }
}

Deno.test("Secret values reach no annotation, log line, Event or metric; key changes still fire handlers", async () => {
  const { client } = await testCluster();
  const namespace = await freshNamespace(client, "secrets");
  const path = `/api/v1/namespaces/${namespace}/secrets`;
  const first = "hunter2-first-secret-value";
  const second = "hunter2-second-secret-value";
  const other = "an-untouched-secret-value";
  const token = "example-token-in-the-spec";
  // As Python Kopf (and versions before masking) stored it: the values in clear in the diff-base.
  const legacy = "legacy-secret-value-in-clear";
  const legacyEssence = {
    data: { key: base64(legacy) },
    type: "Opaque",
    metadata: { labels: { "kopf-test": "secrets" } },
  };
  const legacyBase = `${JSON.stringify(legacyEssence)}\n`;

  await client.request({
    method: "POST",
    path,
    body: secret("legacy", { key: legacy }, { [LAST_HANDLED]: legacyBase }),
  });
  const url = `http://127.0.0.1:${freePort()}/metrics`;
  await using operator = await KopfProcess.start(namespace, [
    "--debug",
    "--metrics",
    url,
    "tests/fixtures/secret_handlers.ts",
  ]);
  await operator.waitForLine(/Serving metrics at/);
  await client.request({ method: "POST", path, body: secret("s", { password: first, other }) });
  await createExample(client, namespace, "e", { token });
  await operator.waitForLine(/created s/);
  await operator.waitForLine(/example created/);

  await client.request({
    method: "PATCH",
    path: `${path}/s`,
    body: { data: { password: base64(second) } },
    contentType: "application/merge-patch+json",
  });
  await operator.waitForLine(/updated keys: data\.password$/);
  await operator.waitForLine(/password changed: true/);

  // The legacy diff-base is replaced by one with digests, and nothing ran for it (nothing changed).
  const legacyNow = await eventually("the legacy diff-base replaced", async () => {
    const body = await client.request<KubernetesObject>({ method: "GET", path: `${path}/legacy` });
    return body.metadata.annotations?.[LAST_HANDLED]?.includes("sha256:") ? body : undefined;
  });
  const ranForLegacy = operator.lines.filter((line) => line.includes("legacy") && /created|updated|changed/.test(line));
  assert.deepEqual(ranForLegacy, [], "the legacy Secret was handled before and has not changed since");
  assert.match(legacyNow.metadata.annotations![LAST_HANDLED], /"key":"sha256:[0-9a-f]{64}"/);

  const s = await client.request<KubernetesObject>({ method: "GET", path: `${path}/s` });
  assert.match(s.metadata.annotations![LAST_HANDLED], /"password":"sha256:[0-9a-f]{64}"/);
  const example = await eventually("the example's diff-base", async () => {
    const body = await getExample(client, namespace, "e");
    return body.metadata.annotations?.[LAST_HANDLED] ? body : undefined;
  });
  assert.match(example.metadata.annotations![LAST_HANDLED], /"token":"sha256:[0-9a-f]{64}"/);
  assert.ok(operator.output.includes("Patching with"), "the debug lines that showed the values are there");

  const events = await client.request<{ items: unknown[] }>({
    method: "GET",
    path: `/api/v1/namespaces/${namespace}/events`,
  });
  assert.ok(events.items.length > 0, "the handlers' lines were posted as Events");
  const metrics = await (await fetch(url)).text();
  assert.match(metrics, /kopf_handler_runs_total/);
  assert.equal((s.data as Record<string, string>).generated, base64("generated-secret-value"));
  assertNowhere([first, second, other, token, legacy, "generated-secret-value"], {
    "the annotations of s": JSON.stringify(s.metadata.annotations),
    "the annotations of legacy": JSON.stringify(legacyNow.metadata.annotations),
    "the annotations of e": JSON.stringify(example.metadata.annotations),
    "the operator's output": operator.output,
    "the Events": JSON.stringify(events.items),
    "the metrics": metrics,
  });
});
