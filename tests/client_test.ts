/**
 * The handlers' client (`api`, `kopf.connect()`) against a real kube-apiserver: every verb, server-side
 * apply with a field manager, replacement guarded by resourceVersion, typed errors, watching across an
 * API server restart, a plain script, and `api` inside an operator's handlers.
 */

import assert from "node:assert/strict";
import * as kopf from "@kopf/kopf";
import type { V1ConfigMap } from "@kopf/kopf/types";
import { LocalCluster } from "../testing.ts";
import { createExample, freshNamespace, KOPFEXAMPLES, testCluster } from "./support/cluster.ts";
import { eventually } from "./support/eventually.ts";
import { runOperator } from "./support/operator.ts";

/** The example resource's type, as far as these tests read it. */
interface Example {
  metadata?: { name?: string };
  status?: { makeChild?: { uid: string; same: boolean } };
}

function configMap(name: string, data: Record<string, string> = {}, labels?: Record<string, string>): V1ConfigMap {
  return { apiVersion: "v1", kind: "ConfigMap", metadata: { name, labels }, data };
}

Deno.test("create, get, list, patch, delete: every verb, with selectors, pagination and dry runs", async () => {
  const { client, kubeconfig } = await testCluster();
  const namespace = await freshNamespace(client, "client");
  using api = await kopf.connect({ kubeconfig });

  const created = await api.create(configMap("a", { x: "1" }), { namespace });
  assert.equal(created.metadata?.namespace, namespace);
  assert.equal(created.data?.x, "1");
  assert.ok(created.metadata?.uid);

  const got = await api.get("configmaps", "a", { namespace });
  assert.equal(got?.data?.x, "1");
  assert.equal(await api.get("configmaps", "missing", { namespace }), null);
  assert.equal((await api.get("cm", "a", { namespace }))?.metadata?.uid, created.metadata?.uid, "short names");
  assert.equal(
    (await api.get<V1ConfigMap>({ group: "", version: "v1", plural: "configmaps" }, "a", { namespace }))?.data?.x,
    "1",
  );

  for (let i = 0; i < 5; i++) await api.create(configMap(`labelled-${i}`, {}, { app: "x" }), { namespace });
  const before = api.client.counters.count({ verb: "list", resource: "configmaps" });
  const listed = await api.list("configmaps", { namespace, labelSelector: "app=x", pageSize: 2 });
  assert.deepEqual(listed.items.map((item) => item.metadata?.name).sort(), [0, 1, 2, 3, 4].map((i) => `labelled-${i}`));
  assert.equal(api.client.counters.count({ verb: "list", resource: "configmaps" }) - before, 3, "3 pages of 2");
  assert.ok(listed.metadata.resourceVersion);
  assert.ok(listed.items.every((item) => item.kind === "ConfigMap" && item.apiVersion === "v1"));
  const byField = await api.list("configmaps", { namespace, fieldSelector: "metadata.name=a" });
  assert.deepEqual(byField.items.map((item) => item.metadata?.name), ["a"]);

  const merged = await api.patch("configmaps", "a", { data: { y: "2" } }, { namespace });
  assert.deepEqual(merged.data, { x: "1", y: "2" });
  const jsonPatched = await api.patch("configmaps", "a", [{ op: "remove", path: "/data/x" }], {
    namespace,
    type: "json",
  });
  assert.deepEqual(jsonPatched.data, { y: "2" });
  const strategic = await api.patch("configmaps", "a", { data: { z: "3" } }, { namespace, type: "strategic" });
  assert.deepEqual(strategic.data, { y: "2", z: "3" });
  const dry = await api.patch("configmaps", "a", { data: { dry: "run" } }, { namespace, dryRun: true });
  assert.equal(dry.data?.dry, "run");
  assert.equal((await api.get("configmaps", "a", { namespace }))?.data?.dry, undefined, "a dry run persists nothing");

  await createExample(client, namespace, "kex", { field: "value" });
  const withStatus = await api.patch("kopfexamples", "kex", { status: { phase: "x" } }, {
    namespace,
    subresource: "status",
  });
  assert.deepEqual(withStatus.status, { phase: "x" });
  assert.equal(api.client.counters.count({ verb: "patch", resource: "kopfexamples/status" }), 1);

  await api.delete("configmaps", "a", { namespace, propagationPolicy: "Background" });
  assert.equal(await api.get("configmaps", "a", { namespace }), null);
  await api.delete("kex", "kex", { namespace, dryRun: true });
  assert.ok(await api.get("kopfexamples.kopf.dev", "kex", { namespace }), "a dry-run deletion deletes nothing");
});

Deno.test("apply: server-side apply with a field manager, visible in managedFields; conflicts unless forced", async () => {
  const { client, kubeconfig } = await testCluster();
  const namespace = await freshNamespace(client, "client-apply");
  using api = await kopf.connect({ kubeconfig });

  const applied = await api.apply(configMap("ssa", { a: "1", b: "2" }), { namespace, fieldManager: "my-operator" });
  assert.deepEqual(applied.data, { a: "1", b: "2" });
  const managers = (applied.metadata?.managedFields ?? []).map((entry) => [entry.manager, entry.operation]);
  assert.deepEqual(managers, [["my-operator", "Apply"]]);

  // Fields the manager leaves out are removed; other managers' fields are not.
  await api.patch("configmaps", "ssa", { data: { other: "x" } }, { namespace, fieldManager: "someone-else" });
  const reapplied = await api.apply(configMap("ssa", { a: "1" }), { namespace, fieldManager: "my-operator" });
  assert.deepEqual(reapplied.data, { a: "1", other: "x" });

  // Taking over another manager's field conflicts (409) unless forced.
  const takeover = configMap("ssa", { a: "1", other: "mine" });
  const conflict = await api.apply(takeover, { namespace, fieldManager: "my-operator" }).catch((error) => error);
  assert.ok(conflict instanceof kopf.ApiConflictError, String(conflict));
  assert.equal(conflict.status, 409);
  assert.equal(conflict.reason, "Conflict");
  const forced = await api.apply(takeover, { namespace, fieldManager: "my-operator", force: true });
  assert.equal(forced.data?.other, "mine");

  // The same through patch(type: "apply").
  const viaPatch = await api.patch("configmaps", "ssa2", configMap("ssa2", { k: "v" }), {
    namespace,
    type: "apply",
    fieldManager: "patcher",
  });
  assert.deepEqual(viaPatch.metadata?.managedFields?.map((entry) => entry.manager), ["patcher"]);
});

Deno.test("replace: PUT of the whole object, guarded by resourceVersion; fields it leaves out are gone", async () => {
  const { client, kubeconfig } = await testCluster();
  const namespace = await freshNamespace(client, "client-replace");
  using api = await kopf.connect({ kubeconfig });

  const created = await api.create(configMap("r", { a: "1" }), { namespace, fieldManager: "creator" });
  const patched = await api.patch("configmaps", "r", { data: { other: "x" } }, {
    namespace,
    fieldManager: "someone-else",
  });
  assert.deepEqual(patched.data, { a: "1", other: "x" });

  // A replacement guarded by the version it was read at; other managers' fields it leaves out are
  // removed (server-side apply keeps them: see the apply test).
  const before = api.client.counters.count({ verb: "update", resource: "configmaps" });
  const replaced = await api.replace({ ...patched, data: { a: "2" } }, { fieldManager: "replacer" });
  assert.deepEqual(replaced.data, { a: "2" });
  assert.equal(replaced.metadata?.uid, created.metadata?.uid);
  assert.ok(replaced.metadata?.resourceVersion);
  assert.notEqual(replaced.metadata?.resourceVersion, patched.metadata?.resourceVersion);
  assert.ok(
    replaced.metadata?.managedFields?.some((entry) => entry.manager === "replacer" && entry.operation === "Update"),
  );
  assert.deepEqual((await api.get("configmaps", "r", { namespace }))?.data, { a: "2" });
  assert.equal(api.client.counters.count({ verb: "update", resource: "configmaps" }) - before, 1, "counted as update");

  // The version read before that replacement is stale now: 409, nothing written.
  const stale = await api.replace({ ...patched, data: { a: "3" } }).catch((error) => error);
  assert.ok(stale instanceof kopf.ApiConflictError, String(stale));
  assert.equal(stale.status, 409);
  assert.equal(stale.reason, "Conflict");
  assert.deepEqual((await api.get("configmaps", "r", { namespace }))?.data, { a: "2" });

  // Without a resourceVersion, the namespace from the options, and a dry run that persists nothing.
  const unguarded = await api.replace(configMap("r", { b: "1" }), { namespace });
  assert.deepEqual(unguarded.data, { b: "1" });
  const dry = await api.replace(configMap("r", { dry: "run" }), { namespace, dryRun: true });
  assert.deepEqual(dry.data, { dry: "run" });
  assert.deepEqual((await api.get("configmaps", "r", { namespace }))?.data, { b: "1" });
  await assert.rejects(api.replace(configMap("r")), /configmaps are namespaced: pass \{ namespace \}/);

  // A subresource: the status of a custom resource, the spec left as it is.
  await createExample(client, namespace, "kex", { field: "value" });
  const kex = await api.get("kopfexamples", "kex", { namespace });
  const withStatus = await api.replace({ ...kex!, spec: { field: "ignored" }, status: { phase: "y" } }, {
    subresource: "status",
  });
  assert.deepEqual(withStatus.status, { phase: "y" });
  assert.deepEqual(withStatus.spec, { field: "value" }, "the status subresource leaves the spec alone");
  assert.equal(api.client.counters.count({ verb: "update", resource: "kopfexamples/status" }), 1);
});

Deno.test("errors are typed: 404 not found, 409 already exists and failed preconditions, 422 invalid", async () => {
  const { client, kubeconfig } = await testCluster();
  const namespace = await freshNamespace(client, "client-errors");
  using api = await kopf.connect({ kubeconfig });

  const missing = await api.patch("configmaps", "nope", { data: {} }, { namespace }).catch((error) => error);
  assert.ok(missing instanceof kopf.ApiNotFoundError, String(missing));
  assert.ok(missing instanceof kopf.ApiError);
  assert.equal(missing.status, 404);
  assert.equal(missing.reason, "NotFound");
  await assert.rejects(api.delete("configmaps", "nope", { namespace }), kopf.ApiNotFoundError);

  await api.create(configMap("twice"), { namespace });
  const twice = await api.create(configMap("twice"), { namespace }).catch((error) => error);
  assert.ok(twice instanceof kopf.ApiConflictError, String(twice));
  assert.equal(twice.status, 409);
  assert.equal(twice.reason, "AlreadyExists");

  const precondition = await api.delete("configmaps", "twice", { namespace, preconditions: { uid: "not-the-uid" } })
    .catch((error) => error);
  assert.ok(precondition instanceof kopf.ApiConflictError, String(precondition));
  assert.ok(await api.get("configmaps", "twice", { namespace }), "a failed precondition deletes nothing");

  const invalid = await api.create(configMap("Not_A_Valid_Name"), { namespace }).catch((error) => error);
  assert.ok(invalid instanceof kopf.ApiUnprocessableError, String(invalid));
  assert.equal(invalid.status, 422);
  assert.equal(invalid.reason, "Invalid");
  assert.match(invalid.message, /Not_A_Valid_Name/);

  await assert.rejects(api.get("nosuchthings", "x", { namespace }), /names no resource the API server serves/);
  await assert.rejects(api.get("configmaps", "x"), /configmaps are namespaced: pass \{ namespace \}/);
});

Deno.test("resources resolve through discovery once: no discovery requests per call", async () => {
  const { client, kubeconfig } = await testCluster();
  const namespace = await freshNamespace(client, "client-discovery");
  using api = await kopf.connect({ kubeconfig });
  await api.get("configmaps", "x", { namespace });
  const discovery = () =>
    api.client.counters.count({ resource: "/api" }) + api.client.counters.count({ resource: "/apis" });
  const scanned = discovery();
  assert.ok(scanned > 0);
  for (let i = 0; i < 5; i++) {
    await api.create(configMap(`c${i}`), { namespace });
    await api.get("kopfexamples", `k${i}`, { namespace });
    await api.list("deployments.v1.apps", { namespace });
  }
  assert.equal(discovery(), scanned);
});

Deno.test("kopf.connect() in a plain script finds the kubeconfig as `kopf run` does", async () => {
  const { client, kubeconfig } = await testCluster();
  const namespace = await freshNamespace(client, "client-script");
  const script = await Deno.makeTempFile({ suffix: ".ts" });
  try {
    await Deno.writeTextFile(
      script,
      `import * as kopf from "${new URL("../mod.ts", import.meta.url)}";
       using api = await kopf.connect();
       await api.create({ apiVersion: "v1", kind: "ConfigMap", metadata: { name: "from-script", namespace: "${namespace}" } });
       const list = await api.list("configmaps", { namespace: "${namespace}" });
       console.log(JSON.stringify(list.items.map((item) => item.metadata?.name)));
      `,
    );
    const output = await new Deno.Command(Deno.execPath(), {
      args: ["run", "-A", "--config", new URL("../deno.json", import.meta.url).pathname, script],
      env: { KUBECONFIG: kubeconfig },
      stdout: "piped",
      stderr: "piped",
    }).output();
    const stderr = new TextDecoder().decode(output.stderr);
    assert.ok(output.success, stderr);
    assert.deepEqual(JSON.parse(new TextDecoder().decode(output.stdout)), ["from-script"]);
  } finally {
    await Deno.remove(script);
  }
  using api = await kopf.connect({ kubeconfig });
  assert.ok(await api.get("configmaps", "from-script", { namespace }));
});

Deno.test("api in handlers: the operator's own client creates children; startup handlers are told to wait", async () => {
  const { client } = await testCluster();
  const namespace = await freshNamespace(client, "client-handlers");
  const registry = new kopf.Registry();
  let startupError: unknown;
  kopf.on.startup({ registry }, function tryEarly({ api }) {
    try {
      api.client;
    } catch (error) {
      startupError = error;
    }
  });
  kopf.on.create("kopfexamples", { registry }, async function makeChild({ api, name, namespace }) {
    const child: V1ConfigMap = configMap(`${name}-child`, { from: "handler" });
    kopf.adopt(child);
    const made = await api.create(child);
    const fetched = await api.get("configmaps", `${name}-child`, { namespace });
    return { uid: made.metadata?.uid, same: fetched?.metadata?.uid === made.metadata?.uid };
  });
  kopf.on.probe({ registry }, async function children({ api }) {
    return (await api.list("configmaps", { namespace, labelSelector: "probe!=none" })).items.length;
  });
  let cleanedUp: number | undefined;
  kopf.on.cleanup({ registry }, async function countChildren({ api }) {
    cleanedUp = (await api.list("configmaps", { namespace })).items.length;
  });
  const operator = await runOperator(registry, namespace, { liveness: "http://127.0.0.1:0/healthz" });
  try {
    await createExample(client, namespace, "parent");
    const result = await eventually("the handler's result", async () => {
      const reader = await kopf.connect({ kubeconfig: (await testCluster()).kubeconfig });
      try {
        const parent = await reader.get<Example>("kopfexamples", "parent", { namespace });
        return parent?.status?.makeChild;
      } finally {
        reader.close();
      }
    });
    assert.equal(result.same, true);
    const child = await operator.running.client.request<V1ConfigMap>({
      path: `/api/v1/namespaces/${namespace}/configmaps/parent-child`,
    });
    assert.equal(child.data?.from, "handler");
    assert.equal(child.metadata?.ownerReferences?.[0].kind, KOPFEXAMPLES.kind);
    // The request went through the operator's own client: its counters have it.
    assert.equal(operator.running.client.counters.count({ verb: "create", resource: "configmaps" }), 1);
    assert.match(String(startupError), /not connected yet: startup and login handlers run before/);
    // Probe handlers run in the liveness server's requests: they have the client too.
    const probed = await (await fetch(operator.running.liveness!)).json();
    assert.ok(typeof probed.children === "number" && probed.children >= 1, JSON.stringify(probed));
  } finally {
    await operator.stop();
  }
  // Cleanup handlers run before the client closes: they have it too.
  assert.ok(cleanedUp !== undefined && cleanedUp >= 1, String(cleanedUp));
});

Deno.test("watch: an async iterable that resumes after an API server restart, delivering each change", async () => {
  await using cluster = await LocalCluster.start();
  using api = await kopf.connect({ kubeconfig: cluster.kubeconfig });
  const namespace = "default";
  const controller = new AbortController();
  const seen: string[] = [];
  let listed = false;
  const watching = (async () => {
    for await (
      const event of api.watch("configmaps", { namespace, labelSelector: "watched", signal: controller.signal })
    ) {
      if (event.type === "LISTED") listed = true;
      else seen.push(`${event.type ?? "LISTED-OBJECT"} ${event.object.metadata?.name} ${event.object.data?.n ?? ""}`);
    }
  })();
  await eventually("the listing", () => listed || undefined);
  await api.create(configMap("w1", { n: "1" }, { watched: "yes" }), { namespace });
  await api.create(configMap("ignored", { n: "1" }), { namespace });
  await eventually("w1 added", () => seen.includes("ADDED w1 1") || undefined);

  await cluster.stopApiserver();
  await cluster.startApiserver();
  await eventually("the patch after the restart", async () => {
    return await api.patch("configmaps", "w1", { data: { n: "2" } }, { namespace });
  }, { seconds: 120 });
  await eventually("the change after the restart", () => seen.some((line) => line.endsWith("w1 2")) || undefined, {
    seconds: 120,
  });
  controller.abort();
  await watching;
  assert.ok(!seen.some((line) => line.includes("ignored")), "the label selector goes to the server");
  assert.equal(seen.filter((line) => line === "ADDED w1 1").length, 1, seen.join("; "));

  // Breaking out of the loop ends the stream too.
  for await (const event of api.watch("configmaps", { namespace, labelSelector: "watched" })) {
    if (event.type === null) break;
  }
});
