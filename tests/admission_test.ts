/**
 * Admission webhooks end to end: the real
 * kube-apiserver calls the operator's HTTPS webhook server on 127.0.0.1 through the managed
 * webhook configurations that `startAdmission` writes, and API requests are denied, warned, or
 * mutated. Every test's handlers filter on a label with a unique value, so the configurations'
 * object selectors keep them away from every other test's objects; each test uses its own
 * configuration name and deletes the configurations at the end.
 */

import assert from "node:assert/strict";
import * as kopf from "@kopf/kopf";
import type { WebhookFn } from "@kopf/kopf/advanced";
import { ApiError } from "../src/api/errors.ts";
import { captureLogs } from "./support/logs.ts";
import { resourcePath } from "../src/api/paths.ts";
import { webhookConfigurationPath } from "../src/api/webhook_configurations.ts";
import { NO_SERVER_MESSAGE, type RunningAdmission, startAdmission } from "../src/engines/admission_startup.ts";
import type { JsonObject, KubernetesObject } from "../src/model/body.ts";
import { freshNamespace, KOPFEXAMPLES, type TestCluster, testCluster } from "./support/cluster.ts";
import { eventually } from "./support/eventually.ts";

const LABEL = "admission-test";

/** A unique run id: the label value and part of the configurations' name. */
function uniqueId(): string {
  return crypto.randomUUID().slice(0, 8);
}

interface KubeResponse {
  status: number;
  body: Record<string, unknown>;
  warnings: string[];
}

/** Decodes `Warning: 299 - "text"` headers (RFC 7234 warn-text with escaped quotes). */
function parseWarnings(headers: Headers): string[] {
  const warnings: string[] = [];
  for (const [name, value] of headers) {
    if (name.toLowerCase() !== "warning") continue;
    // Several warnings may be folded into one header, separated by commas outside the quotes.
    for (const match of value.matchAll(/\d{3} \S+ "((?:[^"\\]|\\.)*)"/g)) {
      warnings.push(match[1].replace(/\\(.)/g, "$1"));
    }
  }
  return warnings;
}

/**
 * A request to the API server that keeps the response headers (the API client does not show the
 * `Warning` headers that admission warnings become).
 */
async function kube(
  cluster: TestCluster,
  method: string,
  path: string,
  body?: unknown,
  options: { dryRun?: boolean; contentType?: string } = {},
): Promise<KubeResponse> {
  const { tls, server } = cluster.credentials;
  const http = Deno.createHttpClient({ caCerts: tls.caCerts, cert: tls.cert, key: tls.key });
  try {
    const headers = new Headers({ Accept: "application/json" });
    const authorization = await cluster.credentials.authorization();
    if (authorization) headers.set("Authorization", authorization);
    if (body !== undefined) headers.set("Content-Type", options.contentType ?? "application/json");
    const url = new URL(server + path);
    if (options.dryRun) url.searchParams.set("dryRun", "All");
    const response = await fetch(url, {
      method,
      headers,
      body: body === undefined ? undefined : JSON.stringify(body),
      client: http,
    });
    const text = await response.text();
    return { status: response.status, body: text ? JSON.parse(text) : {}, warnings: parseWarnings(response.headers) };
  } finally {
    http.close();
  }
}

function example(name: string, id: string, spec: JsonObject = {}): KubernetesObject {
  return { apiVersion: "kopf.dev/v1", kind: "KopfExample", metadata: { name, labels: { [LABEL]: id } }, spec };
}

function createKex(cluster: TestCluster, namespace: string, body: KubernetesObject, dryRun = false) {
  return kube(cluster, "POST", resourcePath(KOPFEXAMPLES, { namespace }), body, { dryRun });
}

function patchKex(cluster: TestCluster, namespace: string, name: string, patch: unknown, dryRun = false) {
  return kube(cluster, "PATCH", resourcePath(KOPFEXAMPLES, { namespace, name }), patch, {
    dryRun,
    contentType: "application/merge-patch+json",
  });
}

/** Deletes both managed configurations of a name (absent ones are fine). */
async function deleteConfigurations(cluster: TestCluster, managed: string): Promise<void> {
  for (const type of ["validating", "mutating"] as const) {
    await kube(cluster, "DELETE", webhookConfigurationPath(type, managed));
  }
}

/** Starts admission for a registry with a local HTTPS server and managed configurations; closes and deletes them after `body`. */
async function withAdmission(
  registry: kopf.Registry,
  id: string,
  body: (admission: RunningAdmission, cluster: TestCluster, managed: string) => Promise<void>,
  configure: (settings: kopf.Settings) => void = () => {},
  memo: Record<string, unknown> = {},
): Promise<void> {
  const cluster = await testCluster();
  const settings = new kopf.Settings();
  settings.admission.server = new kopf.WebhookServer({ addr: "127.0.0.1" });
  settings.admission.managed = `${id}.admission.kopf.dev`;
  configure(settings);
  const admission = await startAdmission({ registry, settings, client: cluster.client, memo });
  try {
    await admission.ready;
    await body(admission, cluster, settings.admission.managed!);
  } finally {
    await admission.close();
    await deleteConfigurations(cluster, settings.admission.managed!);
  }
}

/** Repeats a dry-run probe until the API server applies the new webhooks (their configuration arrives asynchronously). */
function untilActive<T>(what: string, probe: () => Promise<T | undefined>): Promise<T> {
  return eventually(`the webhooks to be active (${what})`, probe, { seconds: 60 });
}

function statusOf(response: KubeResponse): { code?: number; message?: string } {
  return response.body as { code?: number; message?: string };
}

Deno.test("a validate handler's AdmissionError denies a creation with its message and code", async () => {
  const id = uniqueId();
  const registry = new kopf.Registry();
  kopf.on.validate("kopfexamples", { registry, labels: { [LABEL]: id } }, function meh() {
    throw new kopf.AdmissionError("Meh", { code: 400 });
  });
  await withAdmission(registry, id, async (_admission, cluster, managed) => {
    const namespace = await freshNamespace(cluster.client, "admission");
    const denied = await untilActive("denial", async () => {
      const response = await createKex(cluster, namespace, example(`probe-${uniqueId()}`, id), true);
      return response.status >= 400 ? response : undefined;
    });
    assert.equal(denied.status, 400);
    const real = await createKex(cluster, namespace, example("denied", id));
    assert.equal(real.status, 400);
    assert.equal(statusOf(real).code, 400);
    assert.match(
      statusOf(real).message!,
      new RegExp(`admission webhook "meh\\.${managed.replaceAll(".", "\\.")}" denied the request: Meh`),
    );
    // Not created; objects without the label are not reviewed at all.
    assert.equal((await kube(cluster, "GET", resourcePath(KOPFEXAMPLES, { namespace, name: "denied" }))).status, 404);
    const other = await createKex(cluster, namespace, {
      ...example("unlabelled", id),
      metadata: { name: "unlabelled" },
    });
    assert.equal(other.status, 201);
  });
});

Deno.test("admission warnings reach the API client: operation, dryrun, userinfo, headers", async () => {
  const id = uniqueId();
  const registry = new kopf.Registry();
  const seen: boolean[] = [];
  kopf.on.validate(
    "kopfexamples",
    { registry, labels: { [LABEL]: id } },
    function tell({ operation, dryrun, userinfo, headers, warnings, sslpeer, subresource }) {
      seen.push(dryrun);
      warnings.push(`${operation}/${dryrun}/${userinfo.username}`);
      warnings.push(String(headers.get("Content-Type")));
      warnings.push(`sslpeer=${JSON.stringify(sslpeer)} subresource=${subresource}`);
    },
  );
  await withAdmission(registry, id, async (_admission, cluster) => {
    const namespace = await freshNamespace(cluster.client, "admission");
    const dry = await untilActive("warnings", async () => {
      const response = await createKex(cluster, namespace, example(`probe-${uniqueId()}`, id), true);
      return response.warnings.length ? response : undefined;
    });
    assert.equal(dry.status, 201);
    const [first, contentType, extra] = dry.warnings;
    const match = /^CREATE\/true\/(.+)$/.exec(first);
    assert.ok(match, `the first warning is ${first}`);
    assert.ok(match[1].length > 0 && match[1] !== "undefined", "a username");
    assert.equal(contentType, "application/json");
    assert.equal(extra, "sslpeer={} subresource=null");
    const real = await createKex(cluster, namespace, example("real", id));
    assert.equal(real.status, 201);
    assert.equal(real.warnings[0], `CREATE/false/${match[1]}`);
    assert.ok(seen.includes(true) && seen.includes(false), "the handler saw dry and real requests");
  });
});

Deno.test("a mutate handler's patch is applied: the created object has the fields", async () => {
  const id = uniqueId();
  const registry = new kopf.Registry();
  kopf.on.mutate("kopfexamples", { registry, labels: { [LABEL]: id } }, function defaults({ spec, patch }) {
    if (spec.numbers === undefined) patch.spec.numbers = [1, 2, 3];
    patch.metadata.labels["example.com/mutated"] = "yes";
    patch.spec.removed = null;
  });
  await withAdmission(registry, id, async (_admission, cluster) => {
    const namespace = await freshNamespace(cluster.client, "admission");
    await untilActive("mutation", async () => {
      const response = await createKex(cluster, namespace, example(`probe-${uniqueId()}`, id), true);
      return (response.body.spec as Record<string, unknown>)?.numbers ? response : undefined;
    });
    const created = await createKex(cluster, namespace, example("mutated", id, { removed: "x", kept: 1 }));
    assert.equal(created.status, 201);
    const spec = created.body.spec as Record<string, unknown>;
    assert.deepEqual(spec, { numbers: [1, 2, 3], kept: 1 });
    const labels = (created.body.metadata as { labels: Record<string, string> }).labels;
    assert.equal(labels["example.com/mutated"], "yes");
    const given = await createKex(cluster, namespace, example("given", id, { numbers: [7] }));
    assert.deepEqual((given.body.spec as Record<string, unknown>).numbers, [7]);
  });
});

Deno.test("a handler's arbitrary error denies with code 500 and its message; with ignoreFailures it admits", async () => {
  const id = uniqueId();
  const registry = new kopf.Registry();
  kopf.on.validate("kopfexamples", { registry, labels: { [LABEL]: id, broken: "yes" } }, function broken() {
    throw new TypeError("the handler is broken");
  });
  kopf.on.validate(
    "kopfexamples",
    { registry, labels: { [LABEL]: id }, ignoreFailures: true },
    function tolerant({ warnings }) {
      warnings.push("tolerant was called");
      throw new Error("tolerated failure");
    },
  );
  await withAdmission(registry, id, async (_admission, cluster) => {
    const namespace = await freshNamespace(cluster.client, "admission");
    const broken = await untilActive("arbitrary error", async () => {
      const body = example(`probe-${uniqueId()}`, id);
      body.metadata.labels!.broken = "yes";
      const response = await createKex(cluster, namespace, body, true);
      return response.status >= 400 ? response : undefined;
    });
    assert.equal(broken.status, 500);
    assert.match(statusOf(broken).message!, /denied the request: the handler is broken/);
    const tolerated = await untilActive("tolerant", async () => {
      const response = await createKex(cluster, namespace, example(`ok-${uniqueId()}`, id));
      return response.warnings.includes("tolerant was called") ? response : undefined;
    });
    assert.equal(tolerated.status, 201);
  });
});

Deno.test("the webhook server answers crafted reviews at /<id>; malformed ones get 4xx, never a crash", async () => {
  const id = uniqueId();
  const cadump = await Deno.makeTempFile({ suffix: ".pem" });
  const registry = new kopf.Registry();
  kopf.on.validate("kopfexamples", { registry }, function checkName({ name, warnings, memo }) {
    warnings.push(`seen ${name}`);
    memo.touched = true;
    if (name === "bad") throw new kopf.AdmissionError("Bad name", { code: 499 });
    return { ignored: true };
  });
  kopf.on.mutate("kopfexamples", { registry }, function addNumbers({ patch }) {
    patch.spec.numbers = [1];
  });
  const cluster = await testCluster();
  const settings = new kopf.Settings();
  const port = (() => {
    const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
    const free = listener.addr.port;
    listener.close();
    return free;
  })();
  settings.admission.server = new kopf.WebhookServer({ addr: "127.0.0.1", port, cadump, maxBodySize: 1024 * 1024 });
  const admission = await startAdmission({ registry, settings, client: cluster.client });
  let http: Deno.HttpClient | undefined;
  try {
    await admission.ready;
    // The CA that the server wrote to `cadump` once it started (as `curl --cacert` would use it).
    http = Deno.createHttpClient({ caCerts: [await Deno.readTextFile(cadump)] });
    assert.equal(admission.clientConfig?.url, `https://127.0.0.1:${port}`);
    const post = async (path: string, body: string | Uint8Array<ArrayBuffer>, method = "POST") => {
      const response = await fetch(`https://127.0.0.1:${port}${path}`, { method, body, client: http });
      const text = await response.text();
      return { status: response.status, text };
    };
    const review = (name: string, extra: Record<string, unknown> = {}) => ({
      kind: "AdmissionReview",
      apiVersion: "admission.k8s.io/v1",
      request: {
        uid: `uid-${name}`,
        kind: { group: "kopf.dev", version: "v1", kind: "KopfExample" },
        resource: { group: "kopf.dev", version: "v1", resource: "kopfexamples" },
        name,
        namespace: "default",
        operation: "CREATE",
        userInfo: { username: "admin", groups: ["system:masters"] },
        object: { apiVersion: "kopf.dev/v1", kind: "KopfExample", metadata: { name, namespace: "default" } },
        oldObject: null,
        dryRun: true,
        ...extra,
      },
    });

    const ok = await post("/checkName", JSON.stringify(review("good")));
    assert.equal(ok.status, 200);
    assert.deepEqual(JSON.parse(ok.text), {
      apiVersion: "admission.k8s.io/v1",
      kind: "AdmissionReview",
      response: { uid: "uid-good", allowed: true, warnings: ["seen good"] },
    });
    const bad = JSON.parse((await post("/checkName", JSON.stringify(review("bad")))).text);
    assert.deepEqual(bad.response, {
      uid: "uid-bad",
      allowed: false,
      warnings: ["seen bad"],
      status: { code: 499, message: "Bad name" },
    });
    const mutated = JSON.parse((await post("/addNumbers", JSON.stringify(review("m")))).text);
    assert.equal(mutated.response.patchType, "JSONPatch");
    assert.deepEqual(JSON.parse(atob(mutated.response.patch)), [{ op: "add", path: "/spec", value: { numbers: [1] } }]);

    // Malformed: each gets a 4xx with a reason; the server keeps serving.
    const cases: [string, string | Uint8Array<ArrayBuffer>, number, RegExp][] = [
      ["/checkName", "not json {", 400, /not valid JSON/],
      ["/checkName", "[1, 2]", 400, /must be a JSON object/],
      ["/checkName", JSON.stringify({ ...review("k"), kind: "Pod" }), 400, /kind must be AdmissionReview/],
      ["/checkName", JSON.stringify({ kind: "AdmissionReview" }), 400, /no request/],
      ["/checkName", JSON.stringify(review("u", { userInfo: undefined })), 400, /User info is missing/],
      ["/checkName", JSON.stringify(review("o", { object: null })), 400, /old or new object is missing/],
      ["/checkName", JSON.stringify(review("p", { operation: "EXPLODE" })), 400, /operation must be one of/],
      ["/checkName", JSON.stringify(review("n", { uid: undefined })), 400, /no uid/],
      [
        "/checkName",
        JSON.stringify(review("r", { resource: { group: "", version: "v1", resource: "pods" } })),
        404,
        /pods\.v1 is not served/,
      ],
      ["/noSuchHandler", JSON.stringify(review("h")), 404, /no admission handler with the id "noSuchHandler"/],
      ["/checkName", new Uint8Array(2 * 1024 * 1024).fill(0x20), 413, /larger than/],
      ["/checkName", new Uint8Array([0xff, 0xfe, 0x7b]), 400, /not valid JSON/],
    ];
    for (const [path, body, status, reason] of cases) {
      const answer = await post(path, body);
      assert.equal(answer.status, status, `${path} ${String(body).slice(0, 60)} → ${answer.text}`);
      assert.match(answer.text, reason);
    }
    assert.equal((await post("/checkName", "", "PUT")).status, 405);
    // Still serving after all of that.
    assert.equal((await post("/checkName", JSON.stringify(review("again")))).status, 200);
  } finally {
    http?.close();
    await admission.close();
    await Deno.remove(cadump);
  }
  void id;
});

Deno.test("admission handlers without settings.admission.server refuse to start with Kopf's message", async () => {
  const cluster = await testCluster();
  const registry = new kopf.Registry();
  kopf.on.validate("kopfexamples", { registry }, function check() {});
  await assert.rejects(
    startAdmission({ registry, settings: new kopf.Settings(), client: cluster.client }),
    (error: Error) => error.message === NO_SERVER_MESSAGE,
  );
  // Without admission handlers, nothing is needed and nothing starts.
  const idle = await startAdmission({
    registry: new kopf.Registry(),
    settings: new kopf.Settings(),
    client: cluster.client,
  });
  assert.equal(idle.active, false);
  await idle.ready;
  await idle.close();
  await idle.done;
});

Deno.test("managed configurations: one webhook per handler with Kopf's fields; only persistent ones stay after close", async () => {
  const id = uniqueId();
  const registry = new kopf.Registry();
  kopf.on.validate("kopfexamples", { registry, labels: { [LABEL]: id, a: kopf.PRESENT } }, function check_numbers() {});
  kopf.on.validate(
    "kopfexamples",
    { registry, labels: { [LABEL]: id, gone: kopf.ABSENT, x: () => true }, persistent: true, sideEffects: true },
    function keepMe() {},
  );
  kopf.on.validate(
    "kopfexamples",
    {
      registry,
      labels: { [LABEL]: id },
      operations: ["UPDATE", "DELETE"],
      subresource: "status",
      ignoreFailures: true,
    },
    function statusCheck() {},
  );
  kopf.on.mutate("kopfexamples", { registry, labels: { [LABEL]: id } }, function defaults() {});
  const lines = await captureLogs();
  const cluster = await testCluster();
  const settings = new kopf.Settings();
  settings.admission.server = new kopf.WebhookServer({ addr: "127.0.0.1" });
  const managed = `${id}.admission.kopf.dev`;
  settings.admission.managed = managed;
  const admission = await startAdmission({ registry, settings, client: cluster.client });
  try {
    await admission.ready;
    const url = admission.clientConfig!.url!;
    const caBundle = admission.clientConfig!.caBundle!;
    assert.ok(caBundle.length > 0);
    const validating = (await kube(cluster, "GET", webhookConfigurationPath("validating", managed))).body;
    const webhooks = validating.webhooks as Record<string, unknown>[];
    assert.deepEqual(webhooks.map((webhook) => webhook.name), [
      `check-numbers.${managed}`,
      `keep-me.${managed}`,
      `status-check.${managed}`,
    ]);
    const [first, second, third] = webhooks;
    assert.deepEqual(first.rules, [{
      apiGroups: ["kopf.dev"],
      apiVersions: ["v1"],
      resources: ["kopfexamples"],
      operations: ["*"],
      scope: "*",
    }]);
    assert.deepEqual(first.objectSelector, {
      matchExpressions: [
        { key: LABEL, operator: "In", values: [id] },
        { key: "a", operator: "Exists" },
      ],
    });
    assert.deepEqual(first.clientConfig, { url: `${url}/check_numbers`, caBundle });
    assert.equal(first.sideEffects, "None");
    assert.equal(first.failurePolicy, "Fail");
    assert.equal(first.matchPolicy, "Equivalent");
    assert.equal(first.timeoutSeconds, 30);
    assert.deepEqual(first.admissionReviewVersions, ["v1", "v1beta1"]);
    assert.equal(second.sideEffects, "NoneOnDryRun");
    assert.deepEqual(second.objectSelector, {
      matchExpressions: [
        { key: LABEL, operator: "In", values: [id] },
        { key: "gone", operator: "DoesNotExist" },
      ],
    });
    assert.equal(third.failurePolicy, "Ignore");
    assert.deepEqual((third.rules as Record<string, unknown>[])[0].resources, ["kopfexamples/status"]);
    assert.deepEqual((third.rules as Record<string, unknown>[])[0].operations, ["UPDATE", "DELETE"]);
    const mutating = (await kube(cluster, "GET", webhookConfigurationPath("mutating", managed))).body;
    assert.deepEqual((mutating.webhooks as Record<string, unknown>[]).map((webhook) => webhook.name), [
      `defaults.${managed}`,
    ]);

    await admission.close();
    const after = (await kube(cluster, "GET", webhookConfigurationPath("validating", managed))).body;
    assert.deepEqual((after.webhooks as Record<string, unknown>[] ?? []).map((webhook) => webhook.name), [
      `keep-me.${managed}`,
    ]);
    const mutatingAfter = (await kube(cluster, "GET", webhookConfigurationPath("mutating", managed))).body;
    assert.equal((mutatingAfter.webhooks as unknown[] | undefined)?.length ?? 0, 0);
    assert.ok(lines.includes(`Reconfiguring the validating webhook ${managed}.`), lines.join("\n"));
    assert.ok(lines.includes(`Reconfiguring the mutating webhook ${managed}.`));
    assert.ok(lines.some((line) => line.startsWith(`Cleaning up the admission webhook ${managed}`)));
  } finally {
    await admission.close();
    await deleteConfigurations(cluster, managed);
  }
});

Deno.test("a custom server's client config goes into the managed configuration with the handler id appended", async () => {
  const id = uniqueId();
  const registry = new kopf.Registry();
  kopf.on.validate("kopfexamples", { registry, labels: { [LABEL]: id }, ignoreFailures: true }, function hooked() {});
  const cluster = await testCluster();
  const settings = new kopf.Settings();
  let calledWith: WebhookFn | undefined;
  settings.admission.server = async function* tunnel(fn, signal) {
    calledWith = fn;
    yield { url: "https://example.invalid/hooks" };
    await new Promise((resolve) => signal.addEventListener("abort", resolve, { once: true }));
  };
  const managed = `${id}.admission.kopf.dev`;
  settings.admission.managed = managed;
  const admission = await startAdmission({ registry, settings, client: cluster.client });
  try {
    await admission.ready;
    assert.equal(typeof calledWith, "function");
    const validating = (await kube(cluster, "GET", webhookConfigurationPath("validating", managed))).body;
    const [webhook] = validating.webhooks as { clientConfig: unknown }[];
    assert.deepEqual(webhook.clientConfig, { url: "https://example.invalid/hooks/hooked" });
  } finally {
    await admission.close();
    await deleteConfigurations(cluster, managed);
  }
  await admission.done;
});

Deno.test("operations: an UPDATE-only handler does not review creations but denies updates", async () => {
  const id = uniqueId();
  const registry = new kopf.Registry();
  kopf.on.validate("kopfexamples", { registry, labels: { [LABEL]: id }, operations: ["UPDATE"] }, function noUpdates() {
    throw new kopf.AdmissionError("No updates.", { code: 403 });
  });
  await withAdmission(registry, id, async (_admission, cluster) => {
    const namespace = await freshNamespace(cluster.client, "admission");
    const first = await createKex(cluster, namespace, example("first", id));
    assert.equal(first.status, 201);
    const denied = await untilActive("update denial", async () => {
      const response = await patchKex(cluster, namespace, "first", { spec: { x: uniqueId() } }, true);
      return response.status >= 400 ? response : undefined;
    });
    assert.equal(denied.status, 403);
    assert.match(statusOf(denied).message!, /No updates\./);
    // The webhook is active now, and creations still pass.
    const second = await createKex(cluster, namespace, example("second", id));
    assert.equal(second.status, 201);
  });
});

Deno.test("two validate handlers are two webhooks; a creation reports one of their messages", async () => {
  const id = uniqueId();
  const registry = new kopf.Registry();
  kopf.on.validate("kopfexamples", { registry, labels: { [LABEL]: id } }, function one() {
    throw new kopf.AdmissionError("First says no.");
  });
  kopf.on.validate("kopfexamples", { registry, labels: { [LABEL]: id } }, function two() {
    throw new kopf.AdmissionError("Second says no.");
  });
  await withAdmission(registry, id, async (_admission, cluster, managed) => {
    const validating = (await kube(cluster, "GET", webhookConfigurationPath("validating", managed))).body;
    assert.equal((validating.webhooks as unknown[]).length, 2);
    const namespace = await freshNamespace(cluster.client, "admission");
    const denied = await untilActive("denial", async () => {
      const response = await createKex(cluster, namespace, example(`probe-${uniqueId()}`, id), true);
      return response.status >= 400 ? response : undefined;
    });
    assert.match(statusOf(denied).message!, /denied the request: (First|Second) says no\./);
    assert.equal(statusOf(denied).code, 500);
  });
});

Deno.test("admission memos: every CREATE gets a throw-away copy, UPDATEs of one object share its memo", async () => {
  const id = uniqueId();
  const registry = new kopf.Registry();
  kopf.on.validate("kopfexamples", { registry, labels: { [LABEL]: id } }, function count({ memo, warnings }) {
    memo.n = (memo.n as number ?? 0) + 1;
    warnings.push(`n=${memo.n} base=${memo.base}`);
  });
  await withAdmission(
    registry,
    id,
    async (_admission, cluster) => {
      const namespace = await freshNamespace(cluster.client, "admission");
      await untilActive("warnings", async () => {
        const response = await createKex(cluster, namespace, example(`probe-${uniqueId()}`, id), true);
        return response.warnings.length ? response : undefined;
      });
      const creations: string[] = [];
      for (const name of ["a", "b"]) {
        creations.push(...(await createKex(cluster, namespace, example(name, id))).warnings);
      }
      assert.deepEqual(creations, ["n=1 base=operator", "n=1 base=operator"]);
      const updates: string[] = [];
      for (const value of [1, 2, 3]) {
        updates.push(...(await patchKex(cluster, namespace, "a", { spec: { value } })).warnings);
      }
      assert.deepEqual(updates, ["n=1 base=operator", "n=2 base=operator", "n=3 base=operator"]);
      const other = await patchKex(cluster, namespace, "b", { spec: { value: 1 } });
      assert.deepEqual(other.warnings, ["n=1 base=operator"]);
    },
    () => {},
    { base: "operator" },
  );
});

Deno.test("a validate handler's return value appears nowhere", async () => {
  const id = uniqueId();
  const registry = new kopf.Registry();
  kopf.on.validate("kopfexamples", { registry, labels: { [LABEL]: id } }, function answer({ warnings }) {
    warnings.push("answered");
    return { message: "returned" };
  });
  await withAdmission(registry, id, async (_admission, cluster) => {
    const namespace = await freshNamespace(cluster.client, "admission");
    await untilActive("warnings", async () => {
      const response = await createKex(cluster, namespace, example(`probe-${uniqueId()}`, id), true);
      return response.warnings.length ? response : undefined;
    });
    const created = await createKex(cluster, namespace, example("x", id));
    assert.deepEqual(created.warnings, ["answered"]);
    const stored = (await kube(cluster, "GET", resourcePath(KOPFEXAMPLES, { namespace, name: "x" }))).body;
    assert.equal(stored.status, undefined);
    assert.ok(!JSON.stringify(stored).includes("returned"));
  });
});

Deno.test("an API error on writing the managed configurations fails ready and done", async () => {
  const cluster = await testCluster();
  const registry = new kopf.Registry();
  kopf.on.validate("kopfexamples", { registry }, function check() {});
  const settings = new kopf.Settings();
  settings.admission.server = new kopf.WebhookServer({ addr: "127.0.0.1" });
  settings.admission.managed = "Invalid Name!"; // rejected by the API server (422), as a 403 (no RBAC) would be
  const admission = await startAdmission({ registry, settings, client: cluster.client });
  await assert.rejects(admission.ready, (error: unknown) => error instanceof ApiError);
  await assert.rejects(admission.done, (error: unknown) => error instanceof ApiError);
  await admission.close();
});

Deno.test("subresources and DELETE: a status-only handler reviews status updates; a DELETE-only handler sees the old object", async () => {
  const id = uniqueId();
  const registry = new kopf.Registry();
  kopf.on.validate(
    "kopfexamples",
    { registry, labels: { [LABEL]: id }, subresource: "status" },
    function statusGuard({ subresource, patch: _patch, body }) {
      const status = body.status as Record<string, unknown> | undefined;
      if (status?.phase === "forbidden") throw new kopf.AdmissionError(`No ${subresource} like that.`, { code: 422 });
    },
  );
  kopf.on.validate(
    "kopfexamples",
    { registry, labels: { [LABEL]: id }, operations: ["DELETE"] },
    function deletionGuard({ name, operation, new: now }) {
      throw new kopf.AdmissionError(`Keep ${name} (${operation}, new=${now}).`, { code: 409 });
    },
  );
  await withAdmission(registry, id, async (_admission, cluster) => {
    const namespace = await freshNamespace(cluster.client, "admission");
    assert.equal((await createKex(cluster, namespace, example("obj", id))).status, 201);
    const statusPath = resourcePath(KOPFEXAMPLES, { namespace, name: "obj", subresource: "status" });
    const merge = { contentType: "application/merge-patch+json" };
    const denied = await untilActive("status denial", async () => {
      const response = await kube(cluster, "PATCH", statusPath, { status: { phase: "forbidden" } }, {
        ...merge,
        dryRun: true,
      });
      return response.status >= 400 ? response : undefined;
    });
    assert.equal(denied.status, 422);
    assert.match(statusOf(denied).message!, /No status like that\./);
    assert.equal((await kube(cluster, "PATCH", statusPath, { status: { phase: "fine" } }, merge)).status, 200);
    // The main body is not reviewed by the status handler, even with the forbidden phase in it.
    assert.equal((await patchKex(cluster, namespace, "obj", { spec: { phase: "forbidden" } })).status, 200);
    const path = resourcePath(KOPFEXAMPLES, { namespace, name: "obj" });
    const deletion = await untilActive("deletion denial", async () => {
      const response = await kube(cluster, "DELETE", path, undefined, { dryRun: true });
      return response.status >= 400 ? response : undefined;
    });
    assert.equal(deletion.status, 409);
    assert.match(statusOf(deletion).message!, /Keep obj \(DELETE, new=null\)\./);
  });
});

Deno.test("update(): newly served resources get their rules in the managed configuration", async () => {
  const id = uniqueId();
  const registry = new kopf.Registry();
  kopf.on.validate("kopfexamples", { registry, labels: { [LABEL]: id } }, function later() {});
  const cluster = await testCluster();
  const settings = new kopf.Settings();
  settings.admission.server = new kopf.WebhookServer({ addr: "127.0.0.1" });
  const managed = `${id}.admission.kopf.dev`;
  settings.admission.managed = managed;
  const admission = await startAdmission({ registry, settings, client: cluster.client, resources: [] });
  try {
    await admission.ready;
    const names = async () => {
      const body = (await kube(cluster, "GET", webhookConfigurationPath("validating", managed))).body;
      return ((body.webhooks as { name: string }[] | undefined) ?? []).map((webhook) => webhook.name);
    };
    assert.deepEqual(await names(), [], "no resource, no webhook");
    await admission.update([KOPFEXAMPLES]);
    assert.deepEqual(await names(), [`later.${managed}`]);
  } finally {
    await admission.close();
    await deleteConfigurations(cluster, managed);
  }
});

Deno.test({
  name: "kopf.operator() with a validate handler and no admission server fails with Kopf's message",
  fn: async () => {
    const cluster = await testCluster();
    const namespace = await freshNamespace(cluster.client, "admission");
    const registry = new kopf.Registry();
    kopf.on.validate("kopfexamples", { registry }, function unserved() {});
    await assert.rejects(
      kopf.operator({ registry, credentials: cluster.credentials, namespaces: [namespace], standalone: true }),
      (error: Error) => error.message.includes(NO_SERVER_MESSAGE),
    );
  },
});

Deno.test({
  name: "kopf.operator() serves admission set up by a startup handler; non-persistent webhooks go on exit",
  fn: async () => {
    const id = uniqueId();
    const managed = `${id}.admission.kopf.dev`;
    const cluster = await testCluster();
    const namespace = await freshNamespace(cluster.client, "admission");
    const registry = new kopf.Registry();
    kopf.on.startup({ registry }, function configure({ settings }) {
      settings.admission.server = new kopf.WebhookServer({ addr: "127.0.0.1" });
      settings.admission.managed = managed;
    });
    kopf.on.validate("kopfexamples", { registry, labels: { [LABEL]: id } }, function deny() {
      throw new kopf.AdmissionError("Denied by the operator.", { code: 400 });
    });
    kopf.on.validate(
      "kopfexamples",
      { registry, labels: { [LABEL]: id, never: "matches" }, persistent: true },
      function kept() {},
    );
    const controller = new AbortController();
    const done = kopf.operator({
      registry,
      credentials: cluster.credentials,
      namespaces: [namespace],
      standalone: true,
      signal: controller.signal,
    });
    try {
      const denied = await untilActive("denial through the operator", async () => {
        const response = await createKex(cluster, namespace, example(`probe-${uniqueId()}`, id), true);
        return response.status >= 400 ? response : undefined;
      });
      assert.match(statusOf(denied).message!, /Denied by the operator\./);
    } finally {
      controller.abort();
      await done;
    }
    try {
      const after = (await kube(cluster, "GET", webhookConfigurationPath("validating", managed))).body;
      assert.deepEqual((after.webhooks as { name: string }[]).map((webhook) => webhook.name), [`kept.${managed}`]);
    } finally {
      await deleteConfigurations(cluster, managed);
    }
  },
});

Deno.test("the operator's stop signal closes admission gracefully: non-persistent webhooks are removed", async () => {
  const id = uniqueId();
  const registry = new kopf.Registry();
  kopf.on.validate("kopfexamples", { registry, labels: { [LABEL]: id } }, function transient() {});
  kopf.on.mutate("kopfexamples", { registry, labels: { [LABEL]: id }, persistent: true }, function lasting() {});
  const cluster = await testCluster();
  const settings = new kopf.Settings();
  settings.admission.server = new kopf.WebhookServer({ addr: "127.0.0.1" });
  const managed = `${id}.admission.kopf.dev`;
  settings.admission.managed = managed;
  const controller = new AbortController();
  const admission = await startAdmission({ registry, settings, client: cluster.client, signal: controller.signal });
  try {
    await admission.ready;
    controller.abort();
    await admission.done;
    const names = async (type: "validating" | "mutating") => {
      const body = (await kube(cluster, "GET", webhookConfigurationPath(type, managed))).body;
      return ((body.webhooks as { name: string }[] | undefined) ?? []).map((webhook) => webhook.name);
    };
    assert.deepEqual(await names("validating"), []);
    assert.deepEqual(await names("mutating"), [`lasting.${managed}`]);
  } finally {
    await admission.close();
    await deleteConfigurations(cluster, managed);
  }
});
