/**
 * `kopf generate deployment`: the RBAC and a Deployment that the API server accepts
 * (`kubectl apply --dry-run=server`), with leader election when there are several replicas.
 */

import assert from "node:assert/strict";
import type { KubernetesObject } from "../src/model/body.ts";
import { freshNamespace, testCluster } from "./support/cluster.ts";
import { parseManifests } from "./support/identity.ts";
import { runKopf } from "./support/kopf_process.ts";

interface Container {
  image: string;
  args: string[];
  env: { name: string }[];
  livenessProbe: { httpGet: { path: string; port: string } };
  ports: { name: string; containerPort: number }[];
  resources: { requests: { memory: string } };
  securityContext: { allowPrivilegeEscalation: boolean };
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
  assert.deepEqual(container.ports, [{ name: "health", containerPort: 8080 }]);
  assert.equal(container.resources.requests.memory, "128Mi");
  assert.equal(container.securityContext.allowPrivilegeEscalation, false);

  const applied = await new Deno.Command("kubectl", {
    args: ["apply", "--dry-run=server", "-f", "-"],
    env: { KUBECONFIG: kubeconfig },
    stdin: "piped",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const writer = applied.stdin.getWriter();
  await writer.write(new TextEncoder().encode(generated.stdout));
  await writer.close();
  const result = await applied.output();
  const stdout = new TextDecoder().decode(result.stdout);
  assert.equal(result.code, 0, new TextDecoder().decode(result.stderr));
  assert.equal(stdout.match(/created \(server dry run\)/g)?.length, 6, stdout);
});

Deno.test("kopf generate deployment with one replica: no leader election, the Recreate strategy", async () => {
  const { kubeconfig } = await testCluster();
  const generated = await runKopf(
    ["generate", "deployment", "examples/01-minimal/example.ts", "-A"],
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
  const deployment = manifests[3] as KubernetesObject & {
    spec: { strategy: { type: string }; template: { spec: { containers: Container[] } } };
  };
  assert.equal(deployment.spec.strategy.type, "Recreate");
  const args = deployment.spec.template.spec.containers[0].args;
  assert.ok(args.includes("--all-namespaces"));
  assert.ok(!args.includes("--leader-elect"));
});
