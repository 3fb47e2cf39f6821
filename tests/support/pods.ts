/**
 * Pods for tests of handlers of built-in resources. LocalCluster has no scheduler and no kubelet:
 * pods stay Pending forever, and one deleted is gone at once (nothing runs to terminate).
 *
 * @module
 */

import { resourcePath } from "../../src/api/paths.ts";
import type { KubernetesObject } from "../../src/model/body.ts";
import type { Resource } from "../../src/model/resource.ts";
import { testCluster } from "./cluster.ts";

/** Pods, as far as tests create them. */
export const PODS: Resource = {
  group: "",
  version: "v1",
  plural: "pods",
  kind: "Pod",
  singular: "pod",
  namespaced: true,
  preferred: true,
  shortcuts: ["po"],
  categories: ["all"],
  verbs: ["create", "delete", "get", "list", "patch", "update", "watch"],
  subresources: ["status"],
};

/** Creates a pod with one container and the given metadata; returns it as created. */
export async function createPod(
  namespace: string,
  name: string,
  metadata: { labels?: Record<string, string>; annotations?: Record<string, string> } = {},
): Promise<KubernetesObject> {
  const { client } = await testCluster();
  return await client.request<KubernetesObject>({
    method: "POST",
    path: resourcePath(PODS, { namespace }),
    body: {
      apiVersion: "v1",
      kind: "Pod",
      metadata: { name, ...metadata },
      spec: { containers: [{ name: "main", image: "busybox" }] },
    },
  });
}

/** Reads a pod. */
export async function getPod(namespace: string, name: string): Promise<KubernetesObject> {
  const { client } = await testCluster();
  return await client.request<KubernetesObject>({ path: resourcePath(PODS, { namespace, name }) });
}

/** Deletes a pod. */
export async function deletePod(namespace: string, name: string): Promise<void> {
  const { client } = await testCluster();
  await client.request({ method: "DELETE", path: resourcePath(PODS, { namespace, name }) });
}
