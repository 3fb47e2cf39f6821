/**
 * `kopf generate rbac`: the operator runs under a ServiceAccount that has only the generated rules
 * through creation, update, deletion, Events, a timer, peering, leader election and a shard group
 * without one 403; and without any one of the rules (of the shard Leases: any one verb), it meets a
 * 403 or fails the scenario.
 */

import assert from "node:assert/strict";
import type { KubernetesObject } from "../src/model/body.ts";
import {
  createExample,
  deleteExample,
  exampleGone,
  freshNamespace,
  getExample,
  patchExample,
  testCluster,
} from "./support/cluster.ts";
import { applyManifests, deleteManifests, parseManifests, serviceAccountKubeconfig } from "./support/identity.ts";
import { KopfProcess, runKopf } from "./support/kopf_process.ts";
import { createPeering, peeringStatus } from "./support/peering.ts";
import { eventually } from "./support/eventually.ts";

const HANDLERS = "tests/fixtures/shipping/operator.ts";
const ADMISSION = "tests/fixtures/shipping/admission.ts";
const DENIED = /HTTP 403|forbidden|Not enough permissions/i;

/** Generates the RBAC of the fixture for a namespace (peering and leader election on). */
async function generate(namespace: string, name: string): Promise<KubernetesObject[]> {
  const { kubeconfig } = await testCluster();
  const result = await runKopf(
    ["generate", "rbac", HANDLERS, "-n", namespace, "--name", name, "--peering", "--leader-elect"],
    { KUBECONFIG: kubeconfig },
  );
  assert.equal(result.code, 0, result.stderr);
  return parseManifests(result.stdout);
}

/** Starts the operator as the ServiceAccount (its own kubeconfig, nothing of the admin's). */
async function startAs(kubeconfig: string, namespace: string, peering: string): Promise<KopfProcess> {
  return await KopfProcess.command([
    "run",
    "-n",
    namespace,
    "--peering",
    peering,
    "--leader-elect",
    `--leader-elect-resource-namespace=${namespace}`,
    HANDLERS,
  ], { KUBECONFIG: kubeconfig });
}

type Status = Record<string, { message?: string; ticked?: boolean } | undefined>;

/** The scenario: create (handler, Event, timer), update, delete (finalizer); throws where it fails. */
async function scenario(namespace: string, name: string, seconds: number, signal?: AbortSignal): Promise<void> {
  const { client } = await testCluster();
  const status = async () => ((await getExample(client, namespace, name)).status ?? {}) as Status;
  await createExample(client, namespace, name, { size: 1 });
  await eventually("status.created", async () => (await status()).created?.message, { seconds, signal });
  await eventually("status.ticked", async () => (await status()).ticked?.ticked, { seconds, signal });
  await eventually(
    "an Event about the object",
    async () => {
      const events = await client.request<{ items: KubernetesObject[] }>({
        path: `/api/v1/namespaces/${namespace}/events`,
        query: { fieldSelector: `involvedObject.name=${name}` },
      });
      return events.items.length ? true : undefined;
    },
    { seconds, signal },
  );
  await patchExample(client, namespace, name, { spec: { size: 2 } });
  await eventually("status.updated", async () => (await status()).updated?.message, { seconds, signal });
  await deleteExample(client, namespace, name);
  await eventually(`${name} gone`, () => exampleGone(client, namespace, name), { seconds, signal });
}

/** Resolves with the first line of the operator's output that shows a denial; polls until `signal` is aborted. */
async function denial(operator: KopfProcess, signal: AbortSignal): Promise<string | undefined> {
  while (!signal.aborted) {
    const line = operator.lines.find((line) => DENIED.test(line));
    if (line) return line;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return undefined;
}

Deno.test("an operator with only the generated rules runs create/update/delete, Events, a timer, peering and leader election without a 403", async () => {
  const { client } = await testCluster();
  const namespace = await freshNamespace(client, "rbac");
  const peering = await createPeering(namespace);
  const name = `kopf-rbac-${namespace}`;
  const manifests = await generate(namespace, name);
  assert.deepEqual(manifests.map((manifest) => manifest.kind), [
    "ServiceAccount",
    "ClusterRole",
    "ClusterRoleBinding",
    "Role",
    "RoleBinding",
  ]);
  await applyManifests(manifests);
  try {
    const kubeconfig = await serviceAccountKubeconfig(namespace, name);
    await using operator = await startAs(kubeconfig, namespace, peering);
    await operator.waitForLine(/Became the leader/);
    await scenario(namespace, "rbac-1", 60);
    const records = await eventually("a peer record", async () => {
      const records = Object.keys(await peeringStatus(namespace, peering));
      return records.length ? records : undefined;
    });
    assert.equal(records.length, 1);
    const lease = await client.request<{ spec: { holderIdentity?: string } }>({
      path: `/apis/coordination.k8s.io/v1/namespaces/${namespace}/leases/kopf`,
    });
    assert.ok(lease.spec.holderIdentity);
    const status = await operator.stop();
    assert.equal(status.code, 0, operator.output);
    assert.deepEqual(operator.lines.filter((line) => DENIED.test(line)), []);
  } finally {
    await deleteManifests(manifests);
  }
});

Deno.test("every generated rule is needed: without any one of them, the operator meets a 403 or fails the scenario", async () => {
  const { client } = await testCluster();
  const template = await generate("rbac-template", "kopf-rbac-template");
  const rules = template.flatMap((manifest, index) =>
    ((manifest.rules ?? []) as unknown[]).map((_, rule) => ({ index, rule }))
  );
  assert.equal(rules.length, 7, "kopfexamples, their status, events, peering, the Lease (by name; creation), CRDs");
  for (const [round, { index, rule }] of rules.entries()) {
    // Each round in a namespace of its own: nothing left by an earlier round (a Lease) may hide a need.
    const namespace = await freshNamespace(client, `rbac-${round}`);
    const peering = await createPeering(namespace);
    const full = await generate(namespace, `kopf-rbac-${namespace}`);
    const manifests = full.map((manifest, at) =>
      at === index
        ? { ...manifest, rules: (manifest.rules as unknown[]).filter((_, position) => position !== rule) }
        : manifest
    ) as KubernetesObject[];
    const removed = JSON.stringify((full[index].rules as unknown[])[rule]);
    await applyManifests(manifests);
    try {
      const kubeconfig = await serviceAccountKubeconfig(namespace, `kopf-rbac-${namespace}`);
      await using operator = await startAs(kubeconfig, namespace, peering);
      const done = new AbortController();
      const outcomes = [
        denial(operator, done.signal).then((line) => `denied: ${line}`),
        scenario(namespace, "each", 30, done.signal)
          .then(() => "completed", (error) => `failed: ${error.message}`),
      ];
      const outcome = await Promise.race(outcomes);
      done.abort();
      await Promise.all(outcomes);
      assert.doesNotMatch(outcome, /^completed$/, `without ${removed}, everything worked:\n${operator.output}`);
      await operator.stop();
    } finally {
      await deleteManifests(manifests);
      // An object left with the operator's finalizer (the scenario stopped midway) must not stay behind.
      await patchExample(client, namespace, "each", { metadata: { finalizers: null } }).catch(() => {});
      await deleteExample(client, namespace, "each").catch(() => {});
    }
  }
});

Deno.test("managed admission under the generated rules: the webhook configuration is created and kept, requests are validated, no 403", async () => {
  const { client, kubeconfig: admin } = await testCluster();
  const namespace = await freshNamespace(client, "rbac-admission");
  const name = `kopf-rbac-${namespace}`;
  const webhook = `${namespace}.kopf.dev`;
  const generated = await runKopf([
    "generate",
    "rbac",
    ADMISSION,
    "-n",
    namespace,
    "--name",
    name,
    "--managed-admission",
    webhook,
  ], { KUBECONFIG: admin });
  assert.equal(generated.code, 0, generated.stderr);
  const manifests = parseManifests(generated.stdout);
  const clusterRole = manifests.find((manifest) => manifest.kind === "ClusterRole") as
    | KubernetesObject & { rules: { resources: string[]; verbs: string[]; resourceNames?: string[] }[] }
    | undefined;
  const both = ["mutatingwebhookconfigurations", "validatingwebhookconfigurations"];
  assert.deepEqual(
    clusterRole?.rules.filter((rule) => rule.resources.includes("validatingwebhookconfigurations")),
    [
      { apiGroups: ["admissionregistration.k8s.io"], resources: both, verbs: ["create"] },
      { apiGroups: ["admissionregistration.k8s.io"], resources: both, resourceNames: [webhook], verbs: ["patch"] },
    ],
  );
  await applyManifests(manifests);
  const configuration = `/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations/${webhook}`;
  try {
    const kubeconfig = await serviceAccountKubeconfig(namespace, name);
    await using operator = await KopfProcess.command(
      ["run", "-n", namespace, "--standalone", ADMISSION],
      { KUBECONFIG: kubeconfig, KOPF_TEST_WEBHOOK_NAME: webhook },
    );
    await eventually("the webhook configuration with its webhook", async () => {
      const body = await client.request<{ webhooks?: unknown[] }>({ path: configuration });
      return body.webhooks?.length ? true : undefined;
    });
    const denied = await eventually("a denial by the webhook", async () => {
      try {
        await createExample(client, namespace, "bad-numbers", { numbers: "x" });
        await deleteExample(client, namespace, "bad-numbers");
        return undefined; // The API server has not called the webhook yet.
      } catch (error) {
        return error instanceof Error && /spec\.numbers must be a list/.test(error.message) ? error.message : undefined;
      }
    });
    assert.match(denied, /spec\.numbers must be a list/);
    await createExample(client, namespace, "good-numbers", { numbers: [1, 2] });
    const status = await operator.stop();
    assert.equal(status.code, 0, operator.output);
    assert.deepEqual(operator.lines.filter((line) => DENIED.test(line)), []);
  } finally {
    for (const kind of ["validating", "mutating"]) {
      await client.request({
        method: "DELETE",
        path: `/apis/admissionregistration.k8s.io/v1/${kind}webhookconfigurations/${webhook}`,
      }).catch(() => {});
    }
    await deleteManifests(manifests);
  }
});

Deno.test("each rule of managed admission is needed: without creating or patching the configurations, a 403", async () => {
  const { client, kubeconfig: admin } = await testCluster();
  for (const verb of ["create", "patch"]) {
    const namespace = await freshNamespace(client, "rbac-admission");
    const name = `kopf-rbac-${namespace}`;
    const webhook = `${namespace}.kopf.dev`;
    const generated = await runKopf(
      ["generate", "rbac", ADMISSION, "-n", namespace, "--name", name, "--managed-admission", webhook],
      { KUBECONFIG: admin },
    );
    assert.equal(generated.code, 0, generated.stderr);
    const manifests = parseManifests(generated.stdout).map((manifest) =>
      manifest.kind === "ClusterRole"
        ? {
          ...manifest,
          rules: (manifest.rules as { verbs: string[] }[]).filter((rule) => !rule.verbs.includes(verb)),
        }
        : manifest
    ) as KubernetesObject[];
    await applyManifests(manifests);
    try {
      const kubeconfig = await serviceAccountKubeconfig(namespace, name);
      await using operator = await KopfProcess.command(
        ["run", "-n", namespace, "--standalone", ADMISSION],
        { KUBECONFIG: kubeconfig, KOPF_TEST_WEBHOOK_NAME: webhook },
      );
      const line = await operator.waitForLine(DENIED);
      assert.match(line, new RegExp(`${verb}|PATCH|POST`, "i"));
    } finally {
      for (const kind of ["validating", "mutating"]) {
        await client.request({
          method: "DELETE",
          path: `/apis/admissionregistration.k8s.io/v1/${kind}webhookconfigurations/${webhook}`,
        }).catch(() => {});
      }
      await deleteManifests(manifests);
    }
  }
});

Deno.test("--extra-rules adds the user's rules where the handled resources' rules go (a Role with -n)", async () => {
  const { kubeconfig } = await testCluster();
  const file = await Deno.makeTempFile({ suffix: ".yaml" });
  await Deno.writeTextFile(file, "- apiGroups: ['']\n  resources: [configmaps]\n  verbs: [get, create]\n");
  const generated = await runKopf(
    ["generate", "rbac", HANDLERS, "-n", "extra-rules", "--extra-rules", file],
    { KUBECONFIG: kubeconfig },
  );
  assert.equal(generated.code, 0, generated.stderr);
  const role = parseManifests(generated.stdout).find((manifest) => manifest.kind === "Role") as
    | KubernetesObject & { rules: unknown[] }
    | undefined;
  assert.deepEqual(role?.rules.at(-1), { apiGroups: [""], resources: ["configmaps"], verbs: ["get", "create"] });

  await Deno.writeTextFile(file, "rules: nothing\n");
  const bad = await runKopf(["generate", "rbac", HANDLERS, "-A", "--extra-rules", file], { KUBECONFIG: kubeconfig });
  assert.equal(bad.code, 2);
  assert.match(bad.stderr, /--extra-rules .*: expected a list of rules with apiGroups, resources and verbs/);
});

Deno.test("--crd resolves the handlers' resources from CRD files, without a cluster, to the same manifests as discovery", async () => {
  const { kubeconfig } = await testCluster();
  const args = ["generate", "rbac", HANDLERS, "-n", "crd-files", "--peering", "--leader-elect"];
  const discovered = await runKopf(args, { KUBECONFIG: kubeconfig });
  assert.equal(discovered.code, 0, discovered.stderr);
  const offline = await runKopf([...args, "--crd", "examples/crd.yaml"], { KUBECONFIG: "/nonexistent" });
  assert.equal(offline.code, 0, offline.stderr);
  assert.equal(offline.stdout, discovered.stdout);
  const missing = await runKopf([...args, "--crd", "peering.yaml"], { KUBECONFIG: "/nonexistent" });
  assert.equal(missing.code, 1);
  assert.match(missing.stderr, /The resources of "kopfexamples" are not found .* in the given CRDs/);
});

Deno.test("without a cluster's credentials, generate rbac says that discovery needs them and names --crd (issue 19)", async () => {
  const empty = await Deno.makeTempFile({ suffix: ".kubeconfig" });
  try {
    for (const kubeconfig of ["/nonexistent", empty]) {
      const result = await runKopf(["generate", "rbac", HANDLERS, "-n", "no-cluster"], { KUBECONFIG: kubeconfig });
      assert.equal(result.code, 1, result.stderr);
      assert.equal(result.stdout, "");
      assert.match(result.stderr, /resolved by the cluster's discovery, which needs a cluster and its credentials/);
      assert.match(result.stderr, new RegExp(`kubeconfig ${kubeconfig}: `), "says what is wrong with the kubeconfig");
      assert.match(result.stderr, /offline, without a cluster, from their CustomResourceDefinitions: --crd FILE/);
    }
  } finally {
    await Deno.remove(empty);
  }
});

Deno.test("with a namespace pattern, the generated ClusterRole lets the operator find the namespaces and handle their objects without a 403", async () => {
  const { client, kubeconfig: admin } = await testCluster();
  const prefix = `rbac-pattern-${crypto.randomUUID().slice(0, 6)}`;
  const pattern = `${prefix}-*`;
  const home = await freshNamespace(client, "rbac-home");
  const name = `kopf-rbac-${prefix}`;
  const generated = await runKopf(
    ["generate", "rbac", HANDLERS, "-n", pattern, "--install-namespace", home, "--name", name],
    { KUBECONFIG: admin },
  );
  assert.equal(generated.code, 0, generated.stderr);
  const manifests = parseManifests(generated.stdout);
  assert.deepEqual(manifests.map((manifest) => manifest.kind), ["ServiceAccount", "ClusterRole", "ClusterRoleBinding"]);
  const rules = manifests[1].rules as { resources: string[]; verbs: string[] }[];
  assert.ok(rules.some((rule) => rule.resources.includes("namespaces") && rule.verbs.join() === "list,watch"));
  await applyManifests(manifests);
  try {
    const kubeconfig = await serviceAccountKubeconfig(home, name);
    await using operator = await KopfProcess.command(
      ["run", "-n", pattern, "--standalone", HANDLERS],
      { KUBECONFIG: kubeconfig },
    );
    const namespace = await freshNamespace(client, prefix);
    await scenario(namespace, "pattern-1", 60);
    const status = await operator.stop();
    assert.equal(status.code, 0, operator.output);
    assert.deepEqual(operator.lines.filter((line) => DENIED.test(line)), []);
  } finally {
    await deleteManifests(manifests);
  }
});

/** Generates the RBAC of the fixture for a shard group (`--shard-group`, maybe `--shard-namespace`). */
async function generateSharded(namespace: string, name: string, group: string, leases?: string) {
  const { kubeconfig } = await testCluster();
  const result = await runKopf([
    "generate",
    "rbac",
    HANDLERS,
    "-n",
    namespace,
    "--name",
    name,
    "--shard-group",
    group,
    ...(leases ? ["--shard-namespace", leases] : []),
  ], { KUBECONFIG: kubeconfig });
  assert.equal(result.code, 0, result.stderr);
  return parseManifests(result.stdout);
}

/** Starts a member of a shard group as the ServiceAccount. */
function startMember(kubeconfig: string, namespace: string, group: string, leases: string): Promise<KopfProcess> {
  return KopfProcess.command(
    ["run", "-n", namespace, "--standalone", "--shard-group", group, "--shard-namespace", leases, HANDLERS],
    { KUBECONFIG: kubeconfig },
  );
}

/** The group's Leases, as the admin sees them. */
async function groupLeases(namespace: string, group: string): Promise<KubernetesObject[]> {
  const { client } = await testCluster();
  const list = await client.request<{ items: KubernetesObject[] }>({
    path: `/apis/coordination.k8s.io/v1/namespaces/${namespace}/leases`,
    query: { labelSelector: `kopf.dev/shard-group=${group}` },
  });
  return list.items;
}

type LeaseRule = { apiGroups: string[]; resources: string[]; verbs: string[]; resourceNames?: string[] };

Deno.test("a shard member with only the generated rules joins its group (Leases in --shard-namespace), handles objects and removes its Lease on exit, without a 403", async () => {
  const { client } = await testCluster();
  const namespace = await freshNamespace(client, "rbac-shard");
  const leases = await freshNamespace(client, "rbac-shard-leases");
  const name = `kopf-rbac-${namespace}`;
  const group = "rbac-group";
  const manifests = await generateSharded(namespace, name, group, leases);
  assert.deepEqual(manifests.map((manifest) => [manifest.kind, manifest.metadata.namespace]), [
    ["ServiceAccount", namespace],
    ["ClusterRole", undefined],
    ["ClusterRoleBinding", undefined],
    ["Role", namespace],
    ["RoleBinding", namespace],
    ["Role", leases],
    ["RoleBinding", leases],
  ]);
  const served = manifests[3].rules as LeaseRule[];
  assert.ok(!served.some((rule) => rule.resources.includes("leases")), "no Lease rules where the Leases are not");
  assert.deepEqual(manifests[5].rules, [
    { apiGroups: ["coordination.k8s.io"], resources: ["leases"], verbs: ["list", "watch"] },
    { apiGroups: ["coordination.k8s.io"], resources: ["leases"], verbs: ["create", "patch", "delete"] },
  ]);
  await applyManifests(manifests);
  try {
    const kubeconfig = await serviceAccountKubeconfig(namespace, name);
    await using operator = await startMember(kubeconfig, namespace, group, leases);
    await operator.waitForLine(new RegExp(`Shard ranges of ${group} changed: 100\\.0% of the objects`));
    const [lease] = await groupLeases(leases, group);
    assert.ok((lease?.spec as { holderIdentity?: string } | undefined)?.holderIdentity, "the member's Lease");
    await scenario(namespace, "sharded-1", 60);
    const status = await operator.stop();
    assert.equal(status.code, 0, operator.output);
    assert.deepEqual(operator.lines.filter((line) => DENIED.test(line)), []);
    assert.deepEqual(await groupLeases(leases, group), [], "the member removed its Lease when it left");
  } finally {
    await deleteManifests(manifests);
  }
});

Deno.test("every verb of the generated shard Lease rules is needed: without any one of them, the member meets a 403", async () => {
  const { client } = await testCluster();
  const group = "rbac-verbs";
  const template = await generateSharded("rbac-template", "kopf-rbac-template", group);
  const verbs = template.flatMap((manifest) =>
    ((manifest.rules ?? []) as LeaseRule[]).filter((rule) => rule.resources.includes("leases"))
      .flatMap((rule) => rule.verbs)
  );
  assert.deepEqual(verbs, ["list", "watch", "create", "patch", "delete"]);
  for (const verb of verbs) {
    const namespace = await freshNamespace(client, `rbac-shard-${verb}`);
    const name = `kopf-rbac-${namespace}`;
    const manifests = (await generateSharded(namespace, name, group)).map((manifest) =>
      manifest.kind === "Role"
        ? {
          ...manifest,
          rules: (manifest.rules as LeaseRule[]).map((rule) =>
            rule.resources.includes("leases") ? { ...rule, verbs: rule.verbs.filter((each) => each !== verb) } : rule
          ),
        }
        : manifest
    ) as KubernetesObject[];
    await applyManifests(manifests);
    try {
      const kubeconfig = await serviceAccountKubeconfig(namespace, name);
      await using operator = await startMember(kubeconfig, namespace, group, namespace);
      // A member denied its Lease fails at once; one denied the deletion meets it only when it leaves.
      await operator.waitForLine(new RegExp(`${DENIED.source}|Shard ranges of ${group} changed`, "i"));
      await operator.stop();
      const denied = new RegExp(`cannot ${verb} resource "leases"`);
      assert.ok(operator.lines.some((line) => denied.test(line)), `without ${verb}, no 403:\n${operator.output}`);
    } finally {
      await deleteManifests(manifests);
    }
  }
});

Deno.test("kopf generate rbac: --shard-group with --leader-elect, or --shard-namespace alone, is a usage error", async () => {
  for (
    const [args, message] of [
      [["--shard-group", "ops", "--leader-elect"], "--shard-group and --leader-elect do not go together: choose one"],
      [["--shard-namespace", "ops"], "--shard-namespace needs --shard-group NAME."],
      [["--shard-group", "Ops_1"], '--shard-group must be a name of lower-case letters, digits, "-" and "."'],
    ] as const
  ) {
    // No kubeconfig: reaching the cluster would fail differently (exit code 1).
    const generated = await runKopf(
      ["generate", "rbac", HANDLERS, "-n", "shards", ...args],
      { KUBECONFIG: "/nonexistent/kubeconfig" },
    );
    assert.equal(generated.code, 2, `${args.join(" ")}: ${generated.stderr}`);
    assert.ok(generated.stderr.includes(message), `${args.join(" ")}: ${generated.stderr}`);
  }
});
