/**
 * Requests for the `spec.conversion` of CustomResourceDefinitions (`apiextensions.k8s.io/v1`,
 * cluster-scoped): reading it, and replacing it as a whole with a JSON Patch (a merge-patch would
 * keep a `service` next to a new `url`, which the API server refuses).
 *
 * @module
 */

import type { ApiClient } from "./client.ts";
import { resourcePath } from "./paths.ts";

const CRDS = { group: "apiextensions.k8s.io", version: "v1", plural: "customresourcedefinitions", namespaced: false };

/** The path of a CRD by its name (`<plural>.<group>`). */
export function crdPath(name: string): string {
  return resourcePath(CRDS, { name });
}

/** A CRD's `spec.conversion` (`{ strategy: "None" }` when it has none). */
export async function readCrdConversion(client: ApiClient, name: string, signal?: AbortSignal): Promise<unknown> {
  const crd = await client.request<{ spec?: { conversion?: unknown } }>({ path: crdPath(name), signal });
  return crd?.spec?.conversion ?? { strategy: "None" };
}

/** Replaces a CRD's `spec.conversion` with this one. Errors (e.g. 403 without RBAC permissions) are thrown. */
export async function patchCrdConversion(
  client: ApiClient,
  name: string,
  conversion: unknown,
  signal?: AbortSignal,
): Promise<void> {
  await client.request({
    method: "PATCH",
    path: crdPath(name),
    body: [{ op: "add", path: "/spec/conversion", value: conversion }],
    contentType: "application/json-patch+json",
    signal,
  });
}
