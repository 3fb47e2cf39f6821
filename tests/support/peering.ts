/**
 * The peering objects of tests: the CRDs of peering.yaml, peering objects with fresh names, their
 * `status` (the peer records), and their removal.
 *
 * @module
 */

import { ApiNotFoundError } from "../../src/api/errors.ts";
import { resourcePath } from "../../src/api/paths.ts";
import type { KubernetesObject } from "../../src/model/body.ts";
import { CLUSTER_PEERING_RESOURCE, NAMESPACED_PEERING_RESOURCE } from "../../src/engines/peering_records.ts";
import { CRDS } from "../../src/reactor/observation.ts";
import { applyCrds, testCluster } from "./cluster.ts";
import { eventually } from "./eventually.ts";

const PEERING_YAML = new URL("../../peering.yaml", import.meta.url);

/** Applies the peering CRDs of peering.yaml (those absent) and waits until they are established. */
export async function applyPeeringCrds(): Promise<void> {
  const { client } = await testCluster();
  await applyCrds(client, PEERING_YAML);
}

/** Deletes the peering CRDs (and so every peering object) and waits until they are gone. */
export async function deletePeeringCrds(): Promise<void> {
  const { client } = await testCluster();
  for (const resource of [CLUSTER_PEERING_RESOURCE, NAMESPACED_PEERING_RESOURCE]) {
    const name = `${resource.plural}.${resource.group}`;
    try {
      await client.request({ method: "DELETE", path: resourcePath(CRDS, { name }) });
    } catch (error) {
      if (!(error instanceof ApiNotFoundError)) throw error;
    }
    await eventually(`the CRD ${name} to be gone`, async () => {
      try {
        await client.request({ path: resourcePath(CRDS, { name }) });
        return undefined;
      } catch (error) {
        if (error instanceof ApiNotFoundError) return true;
        throw error;
      }
    });
  }
}

/** A fresh peering name for one test. */
export function freshPeeringName(prefix = "peering"): string {
  return `${prefix}-${crypto.randomUUID().slice(0, 8)}`;
}

/**
 * Creates a peering object (the ClusterKopfPeering when the namespace is `null`), applying the
 * CRDs first if needed; returns its name.
 */
export async function createPeering(
  namespace: string | null,
  { name = freshPeeringName(), status }: { name?: string; status?: Record<string, unknown> } = {},
): Promise<string> {
  await applyPeeringCrds();
  const { client } = await testCluster();
  const resource = namespace === null ? CLUSTER_PEERING_RESOURCE : NAMESPACED_PEERING_RESOURCE;
  const body = {
    apiVersion: "kopf.dev/v1",
    kind: resource.kind,
    metadata: { name, ...(namespace === null ? {} : { namespace }) },
  };
  // The CRD was only just established: creating may need a moment longer.
  await eventually(`${resource.kind} ${name} to be created`, async () => {
    await client.request({ method: "POST", path: resourcePath(resource, { namespace }), body });
    return true;
  });
  if (status) await patchPeeringStatus(namespace, name, status);
  return name;
}

/** Merge-patches the `status` of a peering object (`null` values remove records). */
export async function patchPeeringStatus(
  namespace: string | null,
  name: string,
  status: Record<string, unknown>,
): Promise<void> {
  const { client } = await testCluster();
  const resource = namespace === null ? CLUSTER_PEERING_RESOURCE : NAMESPACED_PEERING_RESOURCE;
  await client.request({
    method: "PATCH",
    path: resourcePath(resource, { namespace, name }),
    body: { status },
    contentType: "application/merge-patch+json",
  });
}

/** The `status` of a peering object: the peer records by identity. */
export async function peeringStatus(namespace: string | null, name: string): Promise<Record<string, unknown>> {
  const { client } = await testCluster();
  const resource = namespace === null ? CLUSTER_PEERING_RESOURCE : NAMESPACED_PEERING_RESOURCE;
  const body = await client.request<KubernetesObject>({ path: resourcePath(resource, { namespace, name }) });
  return (body.status as Record<string, unknown> | undefined) ?? {};
}

/** Deletes a peering object; one that is gone already is fine. */
export async function deletePeering(namespace: string | null, name: string): Promise<void> {
  const { client } = await testCluster();
  const resource = namespace === null ? CLUSTER_PEERING_RESOURCE : NAMESPACED_PEERING_RESOURCE;
  try {
    await client.request({ method: "DELETE", path: resourcePath(resource, { namespace, name }) });
  } catch (error) {
    if (!(error instanceof ApiNotFoundError)) throw error;
  }
}
