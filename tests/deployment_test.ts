/**
 * `kopf generate deployment`: the RBAC and a Deployment that the API server accepts
 * (`kubectl apply --dry-run=server`), with leader election when there are several replicas, or a
 * shard group; the container's args and env run an operator.
 */

import assert from "node:assert/strict";
import type { KubernetesObject } from "../src/model/body.ts";
import { createExample, freshNamespace, testCluster } from "./support/cluster.ts";
import { freePort } from "./support/environment.ts";
import { parseExposition, total } from "./support/exposition_parser.ts";
import { applyManifests, deleteManifests, parseManifests, serviceAccountKubeconfig } from "./support/identity.ts";
import { KopfProcess, runKopf } from "./support/kopf_process.ts";
import { eventually } from "./support/eventually.ts";

interface Container {
  image: string;
  args: string[];
  env: { name: string; value?: string; valueFrom?: { fieldRef?: { fieldPath: string } } }[];
  livenessProbe: { httpGet: { path: string; port: string } };
  ports: { name: string; containerPort: number }[];
  resources: { requests: { memory: string } };
  securityContext: { allowPrivilegeEscalation: boolean };
}

/** A Deployment as far as these tests read it. */
type Workload = KubernetesObject & {
  spec: { template: { metadata: { annotations?: Record<string, string> }; spec: { containers: Container[] } } };
};

/** The container's environment as the kubelet would set it in a pod of this name (literal values and `metadata.name`). */
function podEnv(container: Container, pod: string): Record<string, string> {
  return Object.fromEntries(container.env.map(({ name, value, valueFrom }) => {
    if (value !== undefined) return [name, value];
    if (valueFrom?.fieldRef?.fieldPath === "metadata.name") return [name, pod];
    throw new Error(`The test cannot resolve the env ${name}: ${JSON.stringify(valueFrom)}`);
  }));
}

/** `kubectl apply --dry-run=server` of a YAML stream: its stdout, after asserting that it succeeded. */
async function dryRunApply(yaml: string, kubeconfig: string): Promise<string> {
  const applied = new Deno.Command("kubectl", {
    args: ["apply", "--dry-run=server", "-f", "-"],
    env: { KUBECONFIG: kubeconfig },
    stdin: "piped",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const writer = applied.stdin.getWriter();
  await writer.write(new TextEncoder().encode(yaml));
  await writer.close();
  const result = await applied.output();
  assert.equal(result.code, 0, new TextDecoder().decode(result.stderr));
  return new TextDecoder().decode(result.stdout);
}

Deno.test("kopf generate deployment: RBAC and a Deployment with leader election for 2 replicas, accepted by kubectl apply --dry-run=server", async () => {
  const { client, kubeconfig } = await testCluster();
  const namespace = await freshNamespace(client, "deploy");
  const generated = await runKopf([
    "generate",
    "deployment",
    "examples/01-minimal/example.ts",
    "-n",
    namespace,
    "--replicas",
    "2",
    "--image",
    "registry.example/kex-operator:1.0",
    "--name",
    `kex-${namespace}`,
  ], { KUBECONFIG: kubeconfig });
  assert.equal(generated.code, 0, generated.stderr);
  const manifests = parseManifests(generated.stdout);
  assert.deepEqual(manifests.map((manifest) => manifest.kind), [
    "ServiceAccount",
    "ClusterRole",
    "ClusterRoleBinding",
    "Role",
    "RoleBinding",
    "Deployment",
  ]);
  const role = manifests[3] as KubernetesObject & { rules: { resources: string[] }[] };
  assert.ok(role.rules.some((rule) => rule.resources.includes("leases")), "the Lease's rule, as replicas > 1");
  const deployment = manifests[5] as KubernetesObject & {
    spec: {
      replicas: number;
      template: {
        metadata: { annotations?: Record<string, string> };
        spec: { serviceAccountName: string; securityContext: { runAsNonRoot: boolean }; containers: Container[] };
      };
    };
  };
  assert.equal(deployment.spec.replicas, 2);
  const pod = deployment.spec.template.spec;
  assert.equal(pod.serviceAccountName, `kex-${namespace}`);
  assert.equal(pod.securityContext.runAsNonRoot, true);
  const [container] = pod.containers;
  assert.equal(container.image, "registry.example/kex-operator:1.0");
  assert.deepEqual(container.args.slice(0, 3), ["run", "-n", namespace]);
  assert.ok(container.args.includes("--leader-elect"));
  assert.ok(container.args.includes("--liveness=http://0.0.0.0:8080/healthz"));
  assert.deepEqual(container.livenessProbe.httpGet, { path: "/healthz", port: "health" });
  assert.ok(container.args.includes("--metrics=http://0.0.0.0:9090/metrics"));
  assert.deepEqual(container.ports, [{ name: "health", containerPort: 8080 }, {
    name: "metrics",
    containerPort: 9090,
  }]);
  assert.deepEqual(deployment.spec.template.metadata.annotations, {
    "prometheus.io/scrape": "true",
    "prometheus.io/port": "9090",
    "prometheus.io/path": "/metrics",
  });
  assert.equal(container.resources.requests.memory, "128Mi");
  assert.equal(container.securityContext.allowPrivilegeEscalation, false);

  const stdout = await dryRunApply(generated.stdout, kubeconfig);
  assert.equal(stdout.match(/created \(server dry run\)/g)?.length, 6, stdout);
});

Deno.test("kopf generate deployment with one replica: no leader election, the Recreate strategy, metrics on --metrics-port", async () => {
  const { kubeconfig } = await testCluster();
  const generated = await runKopf(
    ["generate", "deployment", "examples/01-minimal/example.ts", "-A", "--metrics-port", "9102"],
    { KUBECONFIG: kubeconfig },
  );
  assert.equal(generated.code, 0, generated.stderr);
  const manifests = parseManifests(generated.stdout);
  assert.deepEqual(manifests.map((manifest) => manifest.kind), [
    "ServiceAccount",
    "ClusterRole",
    "ClusterRoleBinding",
    "Deployment",
  ]);
  const deployment = manifests[3] as Workload & { spec: { strategy: { type: string } } };
  assert.equal(deployment.spec.strategy.type, "Recreate");
  const [container] = deployment.spec.template.spec.containers;
  assert.ok(container.args.includes("--all-namespaces"));
  assert.ok(!container.args.includes("--leader-elect"));
  assert.ok(container.args.includes("--metrics=http://0.0.0.0:9102/metrics"));
  assert.deepEqual(container.ports, [{ name: "health", containerPort: 8080 }, {
    name: "metrics",
    containerPort: 9102,
  }]);
  assert.equal(deployment.spec.template.metadata.annotations?.["prometheus.io/port"], "9102");
});

Deno.test("kopf generate deployment --no-metrics: no --metrics, no metrics port, no scrape annotations; accepted by the API server", async () => {
  const { kubeconfig } = await testCluster();
  const generated = await runKopf(
    ["generate", "deployment", "examples/01-minimal/example.ts", "-A", "--no-metrics"],
    { KUBECONFIG: kubeconfig },
  );
  assert.equal(generated.code, 0, generated.stderr);
  const deployment = parseManifests(generated.stdout).at(-1) as Workload;
  assert.equal(deployment.kind, "Deployment");
  const [container] = deployment.spec.template.spec.containers;
  assert.deepEqual(container.args.filter((arg) => arg.startsWith("--metrics")), []);
  assert.deepEqual(container.ports, [{ name: "health", containerPort: 8080 }]);
  assert.equal(deployment.spec.template.metadata.annotations, undefined);
  const stdout = await dryRunApply(generated.stdout, kubeconfig);
  assert.equal(stdout.match(/created \(server dry run\)/g)?.length, 4, stdout);
});

Deno.test("kopf generate deployment: a wrong metrics option is a usage error before the handlers are loaded", async () => {
  for (
    const [args, message] of [
      [["--no-metrics", "--metrics-port", "9102"], "Either --metrics-port or --no-metrics can be used, not both."],
      [["--metrics-port", "8080"], "--metrics-port 8080 is the liveness endpoint's port"],
      [["--metrics-port", "65536"], "--metrics-port must be at most 65535, not 65536."],
      [["--metrics-port", "0"], "must be at least 1, not 0."],
    ] as const
  ) {
    // No kubeconfig: reaching the cluster would fail differently (exit code 1).
    const generated = await runKopf(
      ["generate", "deployment", "examples/01-minimal/example.ts", "-A", ...args],
      { KUBECONFIG: "/nonexistent/kubeconfig" },
    );
    assert.equal(generated.code, 2, `${args.join(" ")}: ${generated.stderr}`);
    assert.ok(generated.stderr.includes(message), `${args.join(" ")}: ${generated.stderr}`);
  }
});

Deno.test("kopf generate deployment: the container's args run an operator whose metrics answer where the pod annotations point", async () => {
  const { client, kubeconfig } = await testCluster();
  const namespace = await freshNamespace(client, "deploy-metrics");
  const generated = await runKopf(
    ["generate", "deployment", "examples/01-minimal/example.ts", "-n", namespace, "--metrics-port", `${freePort()}`],
    { KUBECONFIG: kubeconfig },
  );
  assert.equal(generated.code, 0, generated.stderr);
  const deployment = parseManifests(generated.stdout).at(-1) as Workload;
  const annotations = deployment.spec.template.metadata.annotations!;
  // The image's bundle holds the handlers; from source, the handler file follows the args. The env
  // is the pod's: a variable that `kopf run` refuses would stop the operator in the cluster too.
  const [container] = deployment.spec.template.spec.containers;
  await using operator = await KopfProcess.command(
    [...container.args.map(localLiveness), "examples/01-minimal/example.ts"],
    podEnv(container, "kex-operator-0"),
  );
  await createExample(client, namespace, "scraped", {});
  const url = `http://127.0.0.1:${annotations["prometheus.io/port"]}${annotations["prometheus.io/path"]}`;
  const success = { handler: "createFn", resource: "kopfexamples", cause: "create", outcome: "success" };
  const metrics = await eventually("the handled object in the metrics", async () => {
    const response = await fetch(url).catch(() => undefined);
    if (response?.status !== 200) {
      await response?.body?.cancel();
      return undefined;
    }
    const exposition = parseExposition(await response.text());
    return total(exposition, "kopf_handler_runs_total", success) >= 1 ? exposition : undefined;
  });
  assert.equal(total(metrics, "kopf_handler_runs_total", success), 1, operator.output);
  assert.equal(total(metrics, "kopf_objects", { resource: "kopfexamples" }), 1);
});

Deno.test("kopf generate deployment --shard-group: replicas that each join the group as their pod, under the generated RBAC, without leader election", async () => {
  const { client, kubeconfig } = await testCluster();
  const namespace = await freshNamespace(client, "deploy-shard");
  const name = `kex-${namespace}`;
  const group = "kex-shards";
  const generated = await runKopf([
    "generate",
    "deployment",
    "examples/01-minimal/example.ts",
    "-n",
    namespace,
    "--name",
    name,
    "--shard-group",
    group,
    "--replicas",
    "3",
    "--no-metrics",
  ], { KUBECONFIG: kubeconfig });
  assert.equal(generated.code, 0, generated.stderr);
  const manifests = parseManifests(generated.stdout);
  assert.deepEqual(manifests.map((manifest) => manifest.kind), [
    "ServiceAccount",
    "ClusterRole",
    "ClusterRoleBinding",
    "Role",
    "RoleBinding",
    "Deployment",
  ]);
  const leaseRules = (manifests[3].rules as { resources: string[]; verbs: string[]; resourceNames?: string[] }[])
    .filter((rule) => rule.resources.includes("leases"));
  assert.deepEqual(leaseRules.map((rule) => rule.verbs), [["list", "watch"], ["create", "patch", "delete"]]);
  assert.ok(leaseRules.every((rule) => !rule.resourceNames), "no leader election's Lease");
  const deployment = manifests[5] as Workload & { spec: { replicas: number; strategy: { type: string } } };
  assert.equal(deployment.spec.replicas, 3);
  assert.equal(deployment.spec.strategy.type, "RollingUpdate");
  const [container] = deployment.spec.template.spec.containers;
  assert.ok(container.args.includes(`--shard-group=${group}`), container.args.join(" "));
  assert.ok(container.args.includes(`--shard-namespace=${namespace}`), container.args.join(" "));
  assert.deepEqual(container.args.filter((arg) => arg.startsWith("--leader-elect")), []);
  assert.deepEqual(container.env.find((variable) => variable.name === "POD_NAME")?.valueFrom, {
    fieldRef: { fieldPath: "metadata.name" },
  });
  const stdout = await dryRunApply(generated.stdout, kubeconfig);
  assert.equal(stdout.match(/created \(server dry run\)/g)?.length, 6, stdout);

  // Two of the replicas, as their pods would run them, under the ServiceAccount of the generated RBAC.
  const rbac = manifests.slice(0, 5);
  await applyManifests(rbac);
  try {
    const account = await serviceAccountKubeconfig(namespace, name);
    const pods = [`${name}-7d9f-a`, `${name}-7d9f-b`];
    await using first = await KopfProcess.command(
      [...container.args.map(localLiveness), "examples/01-minimal/example.ts"],
      { KUBECONFIG: account, ...podEnv(container, pods[0]) },
    );
    await using second = await KopfProcess.command(
      [...container.args.map(localLiveness), "examples/01-minimal/example.ts"],
      { KUBECONFIG: account, ...podEnv(container, pods[1]) },
    );
    // Each its share (the buckets split about evenly, not exactly in halves).
    const shared = new RegExp(`Shard ranges of ${group} changed: [1-9][0-9.]*% of the objects now \\(2 members\\)`);
    await first.waitForLine(shared);
    await second.waitForLine(shared);
    const leases = await client.request<{ items: { spec: { holderIdentity: string } }[] }>({
      path: `/apis/coordination.k8s.io/v1/namespaces/${namespace}/leases`,
      query: { labelSelector: `kopf.dev/shard-group=${group}` },
    });
    assert.deepEqual(leases.items.map((lease) => lease.spec.holderIdentity).sort(), pods);
    for (const operator of [first, second]) {
      const status = await operator.stop();
      assert.equal(status.code, 0, operator.output);
      assert.deepEqual(operator.lines.filter((line) => /HTTP 403|forbidden/i.test(line)), []);
    }
  } finally {
    await deleteManifests(rbac);
  }
});

/** The liveness endpoint moved from the pod's fixed port to a free one (other tests and replicas may hold 8080). */
function localLiveness(arg: string): string {
  return arg.startsWith("--liveness=") ? `--liveness=http://127.0.0.1:${freePort()}/healthz` : arg;
}
