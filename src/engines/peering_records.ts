/**
 * Reading and writing peer records on the peering objects of a scope: `ClusterKopfPeering` for a
 * cluster-wide operator, `KopfPeering` in each namespace for a namespaced one (`peering.yaml`).
 * A record lives in `status.<identity>` of the object and is written with a JSON merge-patch;
 * writing `null` removes it. The objects themselves are never created here: a missing object or
 * CRD is a {@linkcode PeeringNotFoundError} that says what to create.
 *
 * @module
 */

import type { ApiClient } from "../api/client.ts";
import { ApiNotFoundError } from "../api/errors.ts";
import { resourcePath } from "../api/paths.ts";
import type { KubernetesObject } from "../model/body.ts";
import { parsePeers, type Peer, type PeerRecord } from "../model/peering.ts";
import type { Resource } from "../model/resource.ts";

/** The cluster-wide peering resource, for operators serving all namespaces (`-A`). */
export const CLUSTER_PEERING_RESOURCE: Resource = {
  group: "kopf.dev",
  version: "v1",
  plural: "clusterkopfpeerings",
  kind: "ClusterKopfPeering",
  singular: "clusterkopfpeering",
  namespaced: false,
  preferred: true,
  shortcuts: [],
  categories: [],
  verbs: ["get", "list", "watch", "patch"],
  subresources: [],
};

/** The namespaced peering resource, one object per served namespace (`-n`). */
export const NAMESPACED_PEERING_RESOURCE: Resource = {
  group: "kopf.dev",
  version: "v1",
  plural: "kopfpeerings",
  kind: "KopfPeering",
  singular: "kopfpeering",
  namespaced: true,
  preferred: true,
  shortcuts: [],
  categories: [],
  verbs: ["get", "list", "watch", "patch"],
  subresources: [],
};

/** One peering object: its name, and its namespace (`null` for the cluster-wide `ClusterKopfPeering`). */
export interface PeeringTarget {
  /** The peering name (`--peering`, `settings.peering.name`), e.g. `default`. */
  name: string;
  /** The namespace of a `KopfPeering`; `null` for the `ClusterKopfPeering`. */
  namespace: string | null;
}

/** A scope of operators: all namespaces, or the listed ones. */
export interface PeeringScope {
  /** Cluster-wide (`-A`): the `ClusterKopfPeering`. */
  clusterwide: boolean;
  /** The namespaces (`-n`): a `KopfPeering` in each. Ignored when cluster-wide. */
  namespaces?: readonly string[];
}

/**
 * The peering objects of a scope: the one `ClusterKopfPeering` when cluster-wide, else one
 * `KopfPeering` per namespace (duplicates removed, in the given order).
 *
 * @example
 * ```ts
 * import { peeringTargets } from "./peering_records.ts";
 * peeringTargets("default", { clusterwide: false, namespaces: ["a", "b"] });
 * // [{ name: "default", namespace: "a" }, { name: "default", namespace: "b" }]
 * ```
 *
 * @param name The peering name.
 * @param scope The scope.
 */
export function peeringTargets(name: string, scope: PeeringScope): PeeringTarget[] {
  if (scope.clusterwide) return [{ name, namespace: null }];
  return [...new Set(scope.namespaces ?? [])].map((namespace) => ({ name, namespace }));
}

/** The resource of a target's peering object: cluster-wide or namespaced. */
export function peeringResource(target: PeeringTarget): Resource {
  return target.namespace === null ? CLUSTER_PEERING_RESOURCE : NAMESPACED_PEERING_RESOURCE;
}

/** How a target is named in messages, e.g. `ClusterKopfPeering "default"` or `KopfPeering "default" in namespace "ns"`. */
export function describeTarget(target: PeeringTarget): string {
  return target.namespace === null
    ? `ClusterKopfPeering "${target.name}"`
    : `KopfPeering "${target.name}" in namespace "${target.namespace}"`;
}

/**
 * The peering object of a target, or its CRD, does not exist. The message says what to create:
 * the CRDs (`kubectl apply -f peering.yaml`) or the object (a manifest to apply).
 */
export class PeeringNotFoundError extends Error {
  /** The peering object that was not found. */
  readonly target: PeeringTarget;
  /** Whether the resource itself (the CRD of `peering.yaml`) is missing, not only the object. */
  readonly crdMissing: boolean;

  /**
   * Describes what is missing and what to create.
   *
   * @param target The peering object concerned.
   * @param crdMissing Whether its CRD is missing too.
   * @param options The original error as `cause`.
   */
  constructor(target: PeeringTarget, crdMissing: boolean, options?: ErrorOptions) {
    super(notFoundMessage(target, crdMissing), options);
    this.name = "PeeringNotFoundError";
    this.target = target;
    this.crdMissing = crdMissing;
  }
}

/** The one-line manifest of a target's peering object, e.g. for `kubectl apply -f -`. */
export function peeringManifest(target: PeeringTarget): string {
  const resource = peeringResource(target);
  const metadata = target.namespace === null
    ? `{name: ${target.name}}`
    : `{name: ${target.name}, namespace: ${target.namespace}}`;
  return `{apiVersion: ${resource.group}/${resource.version}, kind: ${resource.kind}, metadata: ${metadata}}`;
}

function notFoundMessage(target: PeeringTarget, crdMissing: boolean): string {
  const resource = peeringResource(target);
  const create = `echo '${peeringManifest(target)}' | kubectl apply -f -`;
  if (crdMissing) {
    return `The peering resource ${resource.plural}.${resource.group} does not exist in the cluster: ` +
      `install the peering CRDs with \`kubectl apply -f peering.yaml\` (from @kopf/kopf), ` +
      `then create the ${describeTarget(target)} with \`${create}\`.`;
  }
  return `The ${describeTarget(target)} does not exist: create it with \`${create}\` ` +
    `(the peering CRDs of peering.yaml are installed).`;
}

/**
 * Tells a missing object from a missing resource by the 404's Status: an object's 404 names the
 * object in `details.name`, a resource's (no CRD, so no such path) does not.
 */
function notFound(target: PeeringTarget, error: ApiNotFoundError): PeeringNotFoundError {
  const details = error.payload?.details as { name?: unknown } | undefined;
  const crdMissing = !(details && typeof details.name === "string" && details.name);
  return new PeeringNotFoundError(target, crdMissing, { cause: error });
}

/**
 * Reads the peering object of a target.
 *
 * @param client The API client.
 * @param target The peering object.
 * @param signal Cancels the request.
 * @returns The object; rejects with a {@linkcode PeeringNotFoundError} if it or its CRD is missing.
 */
export async function readPeering(
  client: ApiClient,
  target: PeeringTarget,
  signal?: AbortSignal,
): Promise<KubernetesObject> {
  try {
    return await client.request<KubernetesObject>({
      path: resourcePath(peeringResource(target), { namespace: target.namespace, name: target.name }),
      signal,
    });
  } catch (error) {
    if (error instanceof ApiNotFoundError) throw notFound(target, error);
    throw error;
  }
}

/**
 * Reads the peer records of a target's peering object (all of them, expired ones included).
 *
 * @param client The API client.
 * @param target The peering object.
 * @param signal Cancels the request.
 * @returns The peers; rejects with a {@linkcode PeeringNotFoundError} if the object or its CRD is missing.
 */
export async function readPeers(client: ApiClient, target: PeeringTarget, signal?: AbortSignal): Promise<Peer[]> {
  const body = await readPeering(client, target, signal);
  return parsePeers(body.status);
}

/**
 * Writes (or, with `null`, removes) the records of the given identities on a target's peering
 * object, in one merge-patch of `status`.
 *
 * @example Removing dead peers and refreshing one's own record at once
 * ```ts ignore
 * await writePeers(client, target, { "ann@box": buildPeerRecord({ priority: 0, lifetime: 60 }), "old@box": null });
 * ```
 *
 * @param client The API client.
 * @param target The peering object.
 * @param records The records by identity; `null` removes a record.
 * @param signal Cancels the request.
 * @returns Once written; rejects with a {@linkcode PeeringNotFoundError} if the object or its CRD is missing.
 */
export async function writePeers(
  client: ApiClient,
  target: PeeringTarget,
  records: Readonly<Record<string, PeerRecord | null>>,
  signal?: AbortSignal,
): Promise<void> {
  try {
    await client.request({
      method: "PATCH",
      path: resourcePath(peeringResource(target), { namespace: target.namespace, name: target.name }),
      body: { status: records },
      contentType: "application/merge-patch+json",
      signal,
      // Keep-alives expire: they must not wait behind a burst of object patches.
      urgent: true,
    });
  } catch (error) {
    if (error instanceof ApiNotFoundError) throw notFound(target, error);
    throw error;
  }
}

/**
 * Writes one peer's record on a target's peering object (a keep-alive or a freeze).
 *
 * @param client The API client.
 * @param target The peering object.
 * @param identity The peer's identity: the key in `status`.
 * @param record The record to write.
 * @param signal Cancels the request.
 */
export function touchPeer(
  client: ApiClient,
  target: PeeringTarget,
  identity: string,
  record: PeerRecord,
  signal?: AbortSignal,
): Promise<void> {
  return writePeers(client, target, { [identity]: record }, signal);
}

/**
 * Removes one peer's record from a target's peering object (an exit or a resume); removing a
 * record that is not there is not an error.
 *
 * @param client The API client.
 * @param target The peering object.
 * @param identity The peer's identity: the key in `status`.
 * @param signal Cancels the request.
 */
export function removePeer(
  client: ApiClient,
  target: PeeringTarget,
  identity: string,
  signal?: AbortSignal,
): Promise<void> {
  return writePeers(client, target, { [identity]: null }, signal);
}
