/**
 * Running as someone else than the admin: a ServiceAccount's token from the TokenRequest API in
 * a kubeconfig of its own, and applying manifests (RBAC) as the admin.
 *
 * @module
 */

import { parse, parseAllDocuments } from "yaml";
import type { KubernetesObject } from "../../src/model/body.ts";
import { testCluster } from "./cluster.ts";

const PLURALS: Record<string, string> = {
  ServiceAccount: "serviceaccounts",
  ClusterRole: "clusterroles",
  ClusterRoleBinding: "clusterrolebindings",
  Role: "roles",
  RoleBinding: "rolebindings",
  Deployment: "deployments",
};

/** The API path of a manifest's collection (the kinds of generated manifests only). */
export function collectionPath(manifest: KubernetesObject): string {
  const plural = PLURALS[manifest.kind as string];
  if (!plural) throw new Error(`No path known for the kind ${manifest.kind}.`);
  const apiVersion = manifest.apiVersion as string;
  const prefix = apiVersion.includes("/") ? `/apis/${apiVersion}` : `/api/${apiVersion}`;
  const namespace = manifest.metadata.namespace;
  return namespace ? `${prefix}/namespaces/${namespace}/${plural}` : `${prefix}/${plural}`;
}

/** Parses a YAML stream of manifests. */
export function parseManifests(text: string): KubernetesObject[] {
  return parseAllDocuments(text).map((document) => document.toJSON() as KubernetesObject).filter(Boolean);
}

/** Creates manifests as the admin. */
export async function applyManifests(manifests: readonly KubernetesObject[]): Promise<void> {
  const { client } = await testCluster();
  for (const manifest of manifests) {
    await client.request({ method: "POST", path: collectionPath(manifest), body: manifest });
  }
}

/** Deletes manifests as the admin (those that exist). */
export async function deleteManifests(manifests: readonly KubernetesObject[]): Promise<void> {
  const { client } = await testCluster();
  for (const manifest of manifests) {
    await client.request({ method: "DELETE", path: `${collectionPath(manifest)}/${manifest.metadata.name}` })
      .catch(() => {});
  }
}

/**
 * A kubeconfig file that authenticates as a ServiceAccount with a token from the TokenRequest API
 * (the server and CA of the test cluster's kubeconfig); returns its path.
 */
export async function serviceAccountKubeconfig(namespace: string, name: string): Promise<string> {
  const { client, kubeconfig } = await testCluster();
  const request = await client.request<{ status: { token: string } }>({
    method: "POST",
    path: `/api/v1/namespaces/${namespace}/serviceaccounts/${name}/token`,
    body: { apiVersion: "authentication.k8s.io/v1", kind: "TokenRequest", spec: { expirationSeconds: 3600 } },
  });
  const admin = parse(await Deno.readTextFile(kubeconfig));
  const cluster = admin.clusters[0].cluster;
  const config = {
    apiVersion: "v1",
    kind: "Config",
    clusters: [{ name: "local", cluster }],
    users: [{ name, user: { token: request.status.token } }],
    contexts: [{ name, context: { cluster: "local", user: name, namespace } }],
    "current-context": name,
  };
  const folder = await Deno.makeTempDir({ prefix: "kopf-sa-" });
  const path = `${folder}/kubeconfig.yaml`;
  await Deno.writeTextFile(path, JSON.stringify(config));
  return path;
}
