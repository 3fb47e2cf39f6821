/**
 * Requests on `coordination.k8s.io/v1` Leases: read one, create one, replace one with its
 * resourceVersion (so that a concurrent write fails with 409 instead of being overwritten).
 *
 * @module
 */

import type { ApiClient } from "./client.ts";
import { resourcePath } from "./paths.ts";
import { type Lease, LEASE_API_VERSION, type LeaseSpec } from "../model/lease.ts";
import type { Resource } from "../model/resource.ts";

/** The Lease resource, for watching and paths. */
export const LEASES: Resource = {
  group: "coordination.k8s.io",
  version: "v1",
  plural: "leases",
  kind: "Lease",
  singular: "lease",
  namespaced: true,
  preferred: true,
  shortcuts: [],
  categories: [],
  verbs: ["create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"],
  subresources: [],
};

/** Where a Lease is. */
export interface LeaseTarget {
  /** The namespace. */
  namespace: string;
  /** The name. */
  name: string;
}

/**
 * Reads a Lease; rejects with `ApiNotFoundError` if it does not exist.
 *
 * @param client The API client.
 * @param target The Lease.
 * @param signal Cancels the request.
 */
export function getLease(client: ApiClient, target: LeaseTarget, signal?: AbortSignal): Promise<Lease> {
  return client.request<Lease>({ path: resourcePath(LEASES, target), signal, urgent: true });
}

/**
 * Creates a Lease with a spec; rejects with `ApiConflictError` if it exists already.
 *
 * @param client The API client.
 * @param target The Lease.
 * @param spec Its record.
 * @param signal Cancels the request.
 */
export function createLease(
  client: ApiClient,
  target: LeaseTarget,
  spec: LeaseSpec,
  signal?: AbortSignal,
): Promise<Lease> {
  return client.request<Lease>({
    method: "POST",
    path: resourcePath(LEASES, { namespace: target.namespace }),
    body: { apiVersion: LEASE_API_VERSION, kind: "Lease", metadata: { name: target.name }, spec },
    signal,
    urgent: true,
  });
}

/**
 * Replaces the spec of a Lease as last seen: the request carries the seen resourceVersion, so it
 * fails with `ApiConflictError` if anybody wrote the Lease since.
 *
 * @param client The API client.
 * @param seen The Lease as last read or watched (its metadata is sent back as it was).
 * @param spec The new record.
 * @param signal Cancels the request.
 */
export function replaceLease(client: ApiClient, seen: Lease, spec: LeaseSpec, signal?: AbortSignal): Promise<Lease> {
  const { name, namespace } = seen.metadata;
  if (!name || !namespace || !seen.metadata.resourceVersion) {
    return Promise.reject(
      new Error("A Lease can only be replaced as read from the API, with its name, namespace and resourceVersion."),
    );
  }
  return client.request<Lease>({
    method: "PUT",
    path: resourcePath(LEASES, { namespace, name }),
    body: { apiVersion: LEASE_API_VERSION, kind: "Lease", metadata: seen.metadata, spec },
    signal,
    urgent: true,
  });
}
