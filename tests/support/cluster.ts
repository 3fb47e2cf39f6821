/**
 * Helpers for integration tests: the shared LocalCluster that `deno task test` starts, a fresh
 * namespace per test, the example CRD, objects, and waiting for conditions with generous bounds.
 *
 * @module
 */

import { parseAllDocuments } from "yaml";
import { ApiClient } from "../../src/api/client.ts";
import type { Credentials } from "../../src/api/credentials.ts";
import { ApiConflictError, ApiNotFoundError } from "../../src/api/errors.ts";
import { loadKubeconfig } from "../../src/api/kubeconfig.ts";
import { resourcePath } from "../../src/api/paths.ts";
import type { KubernetesObject } from "../../src/model/body.ts";
import type { Resource } from "../../src/model/resource.ts";
import { CRDS, NAMESPACES } from "../../src/reactor/observation.ts";
import { eventually } from "./eventually.ts";

export { NAMESPACES };

/** The example resource, as discovery describes it once examples/crd.yaml is applied. */
export const KOPFEXAMPLES: Resource = {
  group: "kopf.dev",
  version: "v1",
  plural: "kopfexamples",
  kind: "KopfExample",
  singular: "kopfexample",
  namespaced: true,
  preferred: true,
  shortcuts: ["kopfexes", "kopfex", "kexes", "kex"],
  categories: [],
  verbs: ["delete", "deletecollection", "get", "list", "patch", "create", "update", "watch"],
  subresources: ["status"],
};

/** ConfigMaps, as far as tests create them. */
export const CONFIGMAPS: Resource = {
  group: "",
  version: "v1",
  plural: "configmaps",
  kind: "ConfigMap",
  singular: "configmap",
  namespaced: true,
  preferred: true,
  shortcuts: ["cm"],
  categories: [],
  verbs: ["create", "delete", "get", "list", "patch", "update", "watch"],
  subresources: [],
};

/** A cluster to test against, and a client for the test's own requests (not the operator's). */
export interface TestCluster {
  kubeconfig: string;
  credentials: Credentials;
  client: ApiClient;
}

let shared: Promise<TestCluster> | undefined;

/** The cluster that `deno task test` started for this run, with the example CRD applied. */
export function testCluster(): Promise<TestCluster> {
  shared ??= (async () => {
    const kubeconfig = Deno.env.get("KOPF_TEST_KUBECONFIG");
    if (!kubeconfig) {
      throw new Error(
        "KOPF_TEST_KUBECONFIG is not set: run integration tests with `deno task test`, which starts the cluster.",
      );
    }
    return await connect(kubeconfig);
  })();
  return shared;
}

/** Connects to a cluster by its kubeconfig and makes sure the example CRD exists. */
export async function connect(kubeconfig: string): Promise<TestCluster> {
  const credentials = await loadKubeconfig({ path: kubeconfig });
  const client = new ApiClient(credentials);
  await applyExampleCrd(client);
  return { kubeconfig, credentials, client };
}

/** Applies examples/crd.yaml (if absent) and waits until it is established. */
export function applyExampleCrd(client: ApiClient): Promise<void> {
  return applyCrds(client, new URL("../../examples/crd.yaml", import.meta.url));
}

/** Applies the CRDs of a YAML file (those absent) and waits until each is established. */
export async function applyCrds(client: ApiClient, file: URL): Promise<void> {
  const text = await Deno.readTextFile(file);
  for (const document of parseAllDocuments(text)) {
    const crd = document.toJS() as KubernetesObject;
    try {
      await client.request({ method: "POST", path: resourcePath(CRDS), body: crd });
    } catch (error) {
      if (!(error instanceof ApiConflictError)) throw error;
    }
    await eventually(`the CRD ${crd.metadata.name} to be established`, async () => {
      const current = await client.request<KubernetesObject>({ path: resourcePath(CRDS, { name: crd.metadata.name }) });
      const conditions = ((current.status as { conditions?: { type: string; status: string }[] })?.conditions) ?? [];
      return conditions.some((c) => c.type === "Established" && c.status === "True") || undefined;
    });
  }
}

/** Creates a namespace with a fresh name for one test (nothing deletes it: there is no namespace controller). */
export async function freshNamespace(client: ApiClient, prefix = "test"): Promise<string> {
  const name = `${prefix}-${crypto.randomUUID().slice(0, 8)}`;
  await client.request({ method: "POST", path: resourcePath(NAMESPACES), body: { metadata: { name } } });
  return name;
}

/** Creates a kopfexample in a namespace; returns it as created. */
export function createExample(
  client: ApiClient,
  namespace: string,
  name: string,
  spec: Record<string, unknown> = {},
): Promise<KubernetesObject> {
  return client.request<KubernetesObject>({
    method: "POST",
    path: resourcePath(KOPFEXAMPLES, { namespace }),
    body: { apiVersion: "kopf.dev/v1", kind: "KopfExample", metadata: { name }, spec },
  });
}

/** Reads a kopfexample. */
export function getExample(client: ApiClient, namespace: string, name: string): Promise<KubernetesObject> {
  return client.request<KubernetesObject>({ path: resourcePath(KOPFEXAMPLES, { namespace, name }) });
}

/** Merge-patches a kopfexample. */
export function patchExample(
  client: ApiClient,
  namespace: string,
  name: string,
  patch: unknown,
): Promise<KubernetesObject> {
  return client.request<KubernetesObject>({
    method: "PATCH",
    path: resourcePath(KOPFEXAMPLES, { namespace, name }),
    body: patch,
    contentType: "application/merge-patch+json",
  });
}

/** Waits until a kopfexample no longer exists (its finalizers are gone and it is deleted). */
export async function exampleGone(client: ApiClient, namespace: string, name: string): Promise<true> {
  return await eventually(`${name} to be gone`, async () => {
    try {
      await getExample(client, namespace, name);
      return undefined;
    } catch (error) {
      if (error instanceof ApiNotFoundError) return true;
      throw error;
    }
  });
}

/** Deletes a kopfexample. */
export async function deleteExample(client: ApiClient, namespace: string, name: string): Promise<void> {
  await client.request({ method: "DELETE", path: resourcePath(KOPFEXAMPLES, { namespace, name }) });
}

/**
 * Waits (`seconds` at most) until `status[key]` of a kopfexample satisfies the check (present, by default);
 * returns that value.
 */
export async function waitForStatus(
  namespace: string,
  name: string,
  key: string,
  check: (value: unknown) => boolean = (value) => value !== undefined,
  seconds?: number,
): Promise<unknown> {
  const body = await waitForStatusSet(namespace, name, key, check, seconds);
  return (body.status as Record<string, unknown>)[key];
}

/** As {@linkcode waitForStatus}, but returns the whole object. */
export async function waitForStatusSet(
  namespace: string,
  name: string,
  key: string,
  check: (value: unknown) => boolean = (value) => value !== undefined,
  seconds?: number,
): Promise<KubernetesObject> {
  const { client } = await testCluster();
  return await eventually(`status.${key} of ${name}`, async () => {
    const body = await getExample(client, namespace, name);
    return check((body.status as Record<string, unknown> | undefined)?.[key]) ? body : undefined;
  }, { seconds });
}

/**
 * A fixed stretch of time, only where the time itself is the point: the window a claim is
 * observed over ("nothing is written while idle"), or the pace of a scenario (a change every
 * second, an outage of so long). Never to wait for something: before asserting that something
 * did NOT happen, wait for a positive signal instead (tests/support/probe.ts).
 */
export function settle(seconds = 1): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, seconds * 1000));
}
