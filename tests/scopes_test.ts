/**
 * Scopes and namespaces against the shared LocalCluster: exact namespaces,
 * patterns with globs and negations, namespaces that appear and go while the operator runs,
 * cluster-wide mode, the fallback without permission to list namespaces, and
 * `settings.scanning.disabled`.
 */

import assert from "node:assert/strict";
import { reset } from "@logtape/logtape";
import * as kopf from "@kopf/kopf";
import type { ApiClient } from "../src/api/client.ts";
import type { Credentials } from "../src/api/credentials.ts";
import { ApiConflictError } from "../src/api/errors.ts";
import { resourcePath } from "../src/api/paths.ts";
import type { KubernetesObject } from "../src/model/body.ts";
import { KopfProcess } from "./support/kopf_process.ts";
import { captureLogs } from "./support/logs.ts";
import { runOperator } from "./support/operator.ts";
import { EventProbe } from "./support/probe.ts";
import {
  createExample,
  freshNamespace,
  getExample,
  NAMESPACES,
  testCluster,
  waitForStatus,
} from "./support/cluster.ts";
import { eventually } from "./support/eventually.ts";

const KEX = "kopfexamples.v1.kopf.dev";

/** Creates a namespace by name if it does not exist yet. */
async function ensureNamespace(client: ApiClient, name: string): Promise<void> {
  try {
    await client.request({ method: "POST", path: resourcePath(NAMESPACES), body: { metadata: { name } } });
  } catch (error) {
    if (!(error instanceof ApiConflictError)) throw error;
  }
}

/** Whether a kopfexample carries any trace of handling: Kopf's annotations, a status, a finalizer. */
async function untouched(client: ApiClient, namespace: string, name: string): Promise<boolean> {
  const body = await getExample(client, namespace, name);
  const annotations = Object.keys(body.metadata.annotations ?? {}).filter((key) => key.startsWith("kopf."));
  return annotations.length === 0 && body.status === undefined && !body.metadata.finalizers?.length;
}

/** A create handler that records the namespaces it ran in and stores a result. */
function recordingRegistry(options: { labels?: Record<string, string> } = {}): {
  registry: kopf.Registry;
  seen: string[];
} {
  const registry = new kopf.Registry();
  const seen: string[] = [];
  kopf.on.create("kopfexamples", { registry, ...options }, function createFn({ namespace, name }) {
    seen.push(`${namespace}/${name}`);
    return { served: namespace };
  });
  return { registry, seen };
}

Deno.test("-n ns1 serves ns1 only: objects in another namespace are not touched", async () => {
  const { client } = await testCluster();
  const ns1 = await freshNamespace(client, "scope-ns1");
  const ns2 = await freshNamespace(client, "scope-ns2");
  const { registry, seen } = recordingRegistry();
  const probe = new EventProbe(registry);
  const operator = await runOperator(registry, ns1);
  try {
    await createExample(client, ns2, "other");
    await createExample(client, ns1, "mine");
    assert.deepEqual(await waitForStatus(ns1, "mine", "createFn"), { served: ns1 });
    await probe.caughtUp(ns1, "mine");
    assert.ok(await untouched(client, ns2, "other"), "the object in ns2 is untouched");
    assert.deepEqual(seen, [`${ns1}/mine`]);
    assert.deepEqual([...operator.running.streams.keys()], [`${KEX} in ${ns1}`]);
    assert.equal(operator.running.client.counters.count({ resource: "namespaces" }), 0, "exact names: no listing");
  } finally {
    await operator.stop();
  }
});

Deno.test("a pattern with globs and negations: myapp-*,!*-pr-*,*-pr-123 serves myapp-live and myapp-pr-123 only", async () => {
  const { client } = await testCluster();
  const names = ["myapp-live", "myapp-pr-123", "myapp-pr-456", "otherapp-pr-123"];
  for (const name of names) await ensureNamespace(client, name);
  const { registry, seen } = recordingRegistry();
  const probe = new EventProbe(registry);
  const operator = await runOperator(registry, "myapp-*,!*-pr-*,*-pr-123");
  try {
    assert.deepEqual([...operator.running.streams.keys()].sort(), [`${KEX} in myapp-live`, `${KEX} in myapp-pr-123`]);
    const name = `kex-${crypto.randomUUID().slice(0, 8)}`;
    for (const namespace of names) await createExample(client, namespace, name);
    for (const namespace of ["myapp-live", "myapp-pr-123"]) {
      assert.deepEqual(await waitForStatus(namespace, name, "createFn"), { served: namespace });
    }
    for (const namespace of ["myapp-live", "myapp-pr-123"]) await probe.caughtUp(namespace, name);
    for (const namespace of ["myapp-pr-456", "otherapp-pr-123"]) {
      assert.ok(await untouched(client, namespace, name), `the object in ${namespace} is untouched`);
    }
    assert.deepEqual(seen.sort(), [`myapp-live/${name}`, `myapp-pr-123/${name}`]);
  } finally {
    await operator.stop();
  }
});

Deno.test("namespaces matching a pattern are served when they appear and no longer once deleted", async () => {
  const { client } = await testCluster();
  const prefix = `dyn-${crypto.randomUUID().slice(0, 6)}`;
  const registry = new kopf.Registry();
  const created: string[] = [];
  const daemons: { namespace: string; causes?: string[] }[] = [];
  kopf.on.create("kopfexamples", { registry }, function createFn({ namespace }) {
    created.push(namespace!);
    return { served: namespace };
  });
  kopf.daemon("kopfexamples", { registry }, async function watcher({ namespace, stopped }) {
    const record: { namespace: string; causes?: string[] } = { namespace: namespace! };
    daemons.push(record);
    while (!stopped.aborted) await kopf.sleep(60, stopped);
    record.causes = [...(stopped.reason as kopf.StopReason).causes];
  });
  const records: { message: string; severity: string }[] = [];
  await kopf.configureLogging({ format: "json", level: "debug", write: (line) => records.push(JSON.parse(line)) });
  const operator = await runOperator(registry, `${prefix}-*`);
  try {
    const { streams, client: operatorClient } = operator.running;
    assert.deepEqual([...streams.keys()], [], "no namespace matches yet");
    assert.equal(operatorClient.counters.count({ verb: "list", resource: "namespaces" }), 1);

    const dyn1 = `${prefix}-1`;
    await ensureNamespace(client, dyn1);
    await eventually(`the stream in ${dyn1}`, () => streams.has(`${KEX} in ${dyn1}`) || undefined);
    await createExample(client, dyn1, "late");
    assert.deepEqual(await waitForStatus(dyn1, "late", "createFn"), { served: dyn1 });
    await eventually("the daemon", () => daemons.length === 1 || undefined);

    // Without a namespace controller, a deleted namespace stays terminating: that is enough.
    await client.request({ method: "DELETE", path: resourcePath(NAMESPACES, { name: dyn1 }) });
    await eventually(`the stream in ${dyn1} to stop`, () => !streams.has(`${KEX} in ${dyn1}`) || undefined);
    await eventually("the daemon to stop", () => daemons[0].causes);
    assert.deepEqual(daemons[0].causes, ["operatorPausing"]);

    // Another matching namespace is still served afterwards: the operator goes on.
    const dyn2 = `${prefix}-2`;
    await ensureNamespace(client, dyn2);
    await eventually(`the stream in ${dyn2}`, () => streams.has(`${KEX} in ${dyn2}`) || undefined);
    await createExample(client, dyn2, "later");
    assert.deepEqual(await waitForStatus(dyn2, "later", "createFn"), { served: dyn2 });
    assert.deepEqual(created, [dyn1, dyn2]);
    assert.equal(
      operatorClient.counters.count({ verb: "list", resource: "namespaces" }),
      1,
      "listed once, then watched",
    );
    const problems = records.filter((record) => ["warn", "error", "fatal"].includes(record.severity));
    assert.deepEqual(problems, [], "no errors or warnings logged");
    assert.ok(records.some((record) => record.message.includes(`Namespace ${dyn1} is no longer served`)));
  } finally {
    await operator.stop();
    await reset();
  }
});

Deno.test("cluster-wide: objects in a namespace created after the start are handled", async () => {
  const { client } = await testCluster();
  const id = crypto.randomUUID().slice(0, 8);
  // Only objects with this label are ours: the cluster-wide operator sees every test's objects.
  const { registry, seen } = recordingRegistry({ labels: { scope: id } });
  const operator = await runOperator(registry, "unused", { namespaces: undefined, clusterwide: true });
  try {
    assert.deepEqual([...operator.running.streams.keys()], [KEX]);
    const namespace = await freshNamespace(client, "wide");
    await client.request({
      method: "POST",
      path: resourcePath({ group: "kopf.dev", version: "v1", plural: "kopfexamples", namespaced: true }, { namespace }),
      body: { apiVersion: "kopf.dev/v1", kind: "KopfExample", metadata: { name: "x", labels: { scope: id } } },
    });
    assert.deepEqual(await waitForStatus(namespace, "x", "createFn"), { served: namespace });
    assert.deepEqual(seen, [`${namespace}/x`]);
    assert.equal(operator.running.client.counters.count({ resource: "namespaces" }), 0, "namespaces not observed");
  } finally {
    await operator.stop();
  }
});

Deno.test("settings.scanning.disabled: a matching namespace created later is not served; no namespace or CRD requests", async () => {
  const { client } = await testCluster();
  const prefix = `dyn-${crypto.randomUUID().slice(0, 6)}`;
  const exact = await freshNamespace(client, "exact");
  const { registry, seen } = recordingRegistry();
  const settings = new kopf.Settings();
  settings.scanning.disabled = true;
  const probe = new EventProbe(registry);
  const operator = await runOperator(registry, exact, { namespaces: [exact, `${prefix}-*`], settings });
  try {
    const later = `${prefix}-1`;
    await ensureNamespace(client, later);
    await createExample(client, later, "unserved");
    await createExample(client, exact, "served");
    assert.deepEqual(await waitForStatus(exact, "served", "createFn"), { served: exact });
    await probe.caughtUp(exact, "served");
    assert.ok(await untouched(client, later, "unserved"), "the object in the later namespace is untouched");
    assert.deepEqual(seen, [`${exact}/served`]);
    assert.deepEqual([...operator.running.streams.keys()], [`${KEX} in ${exact}`]);
    const counters = operator.running.client.counters.snapshot();
    const observing = Object.keys(counters).filter((key) => /namespaces|customresourcedefinitions/.test(key));
    assert.deepEqual(observing, [], `no namespace or CRD requests: ${JSON.stringify(counters)}`);
  } finally {
    await operator.stop();
  }
});

// -- 3.5: an identity without the permission to list namespaces. ---------------------------------

/** A ServiceAccount's token (TokenRequest) with a ClusterRole of exactly the given rules. */
async function restrictedCredentials(client: ApiClient, base: Credentials, rules: unknown[]): Promise<Credentials> {
  const id = crypto.randomUUID().slice(0, 8);
  const namespace = await freshNamespace(client, "sa");
  const name = `restricted-${id}`;
  await client.request({
    method: "POST",
    path: `/api/v1/namespaces/${namespace}/serviceaccounts`,
    body: { metadata: { name } },
  });
  await client.request({
    method: "POST",
    path: "/apis/rbac.authorization.k8s.io/v1/clusterroles",
    body: { metadata: { name }, rules },
  });
  await client.request({
    method: "POST",
    path: "/apis/rbac.authorization.k8s.io/v1/clusterrolebindings",
    body: {
      metadata: { name },
      roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name },
      subjects: [{ kind: "ServiceAccount", name, namespace }],
    },
  });
  const request = await client.request<KubernetesObject & { status: { token: string } }>({
    method: "POST",
    path: `/api/v1/namespaces/${namespace}/serviceaccounts/${name}/token`,
    body: { apiVersion: "authentication.k8s.io/v1", kind: "TokenRequest", spec: { expirationSeconds: 3600 } },
  });
  const token = request.status.token;
  return {
    server: base.server,
    tls: base.tls,
    source: `service account ${namespace}/${name}`,
    authorization: () => Promise.resolve(`Bearer ${token}`),
    invalidate: () => {},
  };
}

Deno.test("without permission to list namespaces: a warning, and only the exact names are served", async () => {
  const { client, credentials } = await testCluster();
  const ns1 = await freshNamespace(client, "perm");
  const prefix = `x-${crypto.randomUUID().slice(0, 6)}`;
  const other = `${prefix}-1`;
  await ensureNamespace(client, other);
  const restricted = await restrictedCredentials(client, credentials, [
    { apiGroups: ["kopf.dev"], resources: ["kopfexamples"], verbs: ["get", "list", "watch", "patch"] },
    { apiGroups: ["kopf.dev"], resources: ["kopfexamples/status"], verbs: ["get", "patch"] },
    { apiGroups: ["", "events.k8s.io"], resources: ["events"], verbs: ["create", "patch"] },
  ]);
  const { registry, seen } = recordingRegistry();
  const lines = await captureLogs();
  const probe = new EventProbe(registry);
  const operator = await runOperator(registry, ns1, { namespaces: [ns1, `${prefix}-*`], credentials: restricted });
  try {
    assert.ok(
      lines.some((line) =>
        line.includes(
          "Not enough permissions to list namespaces. Falling back to a list of namespaces which are assumed to exist: " +
            ns1,
        )
      ),
      lines.join("\n"),
    );
    assert.deepEqual([...operator.running.streams.keys()], [`${KEX} in ${ns1}`]);
    await createExample(client, other, "unserved");
    await createExample(client, ns1, "served");
    assert.deepEqual(await waitForStatus(ns1, "served", "createFn"), { served: ns1 });
    await probe.caughtUp(ns1, "served");
    assert.ok(await untouched(client, other, "unserved"), "the object in the pattern's namespace is untouched");
    assert.deepEqual(seen, [`${ns1}/served`]);
    // No permission to watch CRDs either: a warning, and what was found at start is served.
    await eventually(
      "the CRD warning",
      () => lines.some((line) => line.includes("Not enough permissions to watch for resources")) || undefined,
    );
  } finally {
    await operator.stop();
    await reset();
  }
});

Deno.test("permission to list but not to watch namespaces: a warning, and the listed ones stay served", async () => {
  const { client, credentials } = await testCluster();
  const prefix = `lw-${crypto.randomUUID().slice(0, 6)}`;
  const early = `${prefix}-1`;
  await ensureNamespace(client, early);
  const restricted = await restrictedCredentials(client, credentials, [
    { apiGroups: [""], resources: ["namespaces"], verbs: ["list"] },
    { apiGroups: ["kopf.dev"], resources: ["kopfexamples"], verbs: ["get", "list", "watch", "patch"] },
    { apiGroups: ["kopf.dev"], resources: ["kopfexamples/status"], verbs: ["get", "patch"] },
    { apiGroups: ["", "events.k8s.io"], resources: ["events"], verbs: ["create", "patch"] },
  ]);
  const { registry } = recordingRegistry();
  const lines = await captureLogs();
  const operator = await runOperator(registry, early, { namespaces: [`${prefix}-*`], credentials: restricted });
  try {
    assert.ok(lines.some((line) => line.includes("Not enough permissions to watch namespaces")), lines.join("\n"));
    assert.deepEqual([...operator.running.streams.keys()], [`${KEX} in ${early}`]);
    await createExample(client, early, "served");
    assert.deepEqual(await waitForStatus(early, "served", "createFn"), { served: early });
  } finally {
    await operator.stop();
    await reset();
  }
});

Deno.test("kopf run -n 'dyn-*': a namespace created after the start is served, its object handled", async () => {
  const { client } = await testCluster();
  const prefix = `dyn-${crypto.randomUUID().slice(0, 6)}`;
  await using kopfRun = await KopfProcess.start(`${prefix}-*`, ["examples/01-minimal/example.ts"]);
  await kopfRun.waitForLine(/nothing to serve yet/);
  const namespace = `${prefix}-1`;
  await ensureNamespace(client, namespace);
  await kopfRun.waitForLine(new RegExp(`Namespace ${namespace} is served from now on`));
  await createExample(client, namespace, "cli");
  assert.deepEqual(await waitForStatus(namespace, "cli", "createFn"), { message: "hello world" });
  const status = await kopfRun.stop();
  assert.equal(status.code, 0, kopfRun.output);
});
