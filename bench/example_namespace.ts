/**
 * What the benchmarks start from: the example CRD of examples/crd.yaml applied to a fresh
 * LocalCluster, and a namespace whose kopfexamples collection is served.
 *
 * @module
 */

import type { ApiClient } from "../src/api/client.ts";
import { ApiConflictError } from "../src/api/errors.ts";
import { applyCrds } from "../tests/support/cluster.ts";

/**
 * Applies the example CRD, creates the namespace and waits until its kopfexamples can be listed.
 *
 * @returns The path of the namespace's kopfexamples collection.
 */
export async function prepareExamples(client: ApiClient, namespace: string): Promise<string> {
  await applyCrds(client, new URL("../examples/crd.yaml", import.meta.url));
  await client.request({ method: "POST", path: "/api/v1/namespaces", body: { metadata: { name: namespace } } });
  const collection = `/apis/kopf.dev/v1/namespaces/${namespace}/kopfexamples`;
  const deadline = Date.now() + 600_000;
  for (;;) {
    try {
      await client.request({ path: collection });
      return collection;
    } catch (error) {
      if (Date.now() > deadline) throw new Error(`The example CRD is not served after 600 s: ${error}`);
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  }
}

/**
 * Applies the peering CRDs of peering.yaml and creates the namespace's `KopfPeering` named
 * `default` (Kopf's default name), so that operators in the namespace peer without any option.
 */
export async function preparePeering(client: ApiClient, namespace: string): Promise<void> {
  await applyCrds(client, new URL("../peering.yaml", import.meta.url));
  const body = { apiVersion: "kopf.dev/v1", kind: "KopfPeering", metadata: { name: "default", namespace } };
  const deadline = Date.now() + 600_000;
  for (;;) {
    try {
      await client.request({ method: "POST", path: `/apis/kopf.dev/v1/namespaces/${namespace}/kopfpeerings`, body });
      return;
    } catch (error) {
      if (error instanceof ApiConflictError) return;
      if (Date.now() > deadline) throw new Error(`The peering CRD is not served after 600 s: ${error}`);
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  }
}
