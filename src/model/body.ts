/**
 * The shape of Kubernetes objects as they travel as JSON: only what the framework reads is typed.
 *
 * @module
 */

/** A JSON value. */
export type JsonValue = string | number | boolean | null | JsonValue[] | { [key: string]: JsonValue };

/** A JSON object. */
export type JsonObject = { [key: string]: JsonValue };

/** The `metadata` of an object, with the fields the framework uses. */
export interface ObjectMeta {
  /** The name, unique per namespace (or cluster-wide for cluster-scoped resources). */
  name?: string;
  /** A prefix from which the API server makes a unique name when `name` is absent on creation. */
  generateName?: string;
  /** The namespace; absent for cluster-scoped objects. */
  namespace?: string;
  /** The identity the API server gave the object; a re-created object has a new one. */
  uid?: string;
  /** The version of this state of the object, opaque; used for watches and optimistic locking. */
  resourceVersion?: string;
  /** Incremented by the API server on each change of the spec (not of status or metadata). */
  generation?: number;
  /** When the object was created (RFC 3339). */
  creationTimestamp?: string;
  /** Set when deletion was requested: the object waits for its finalizers to be removed. */
  deletionTimestamp?: string;
  /** Labels: selectable key-value pairs. */
  labels?: Record<string, string>;
  /** Annotations: non-selectable key-value pairs (where Kopf-compatible state lives). */
  annotations?: Record<string, string>;
  /** Finalizers: names that block the deletion until removed. */
  finalizers?: string[];
  /** The owners: the object is garbage-collected when they are gone. */
  ownerReferences?: JsonObject[];
  /** Any other field of metadata. */
  [key: string]: JsonValue | undefined;
}

/**
 * The metadata that the API server sets on every object it stores: what an object read from it
 * (a handler's `body`, the answers of `api.get/list/create/patch/apply/replace`) always has.
 */
export type StoredMetadata = {
  /** The name (the API server makes one from `generateName` when it is absent on creation). */
  name: string;
  /** The identity the API server gave the object. */
  uid: string;
  /** The version of this state of the object. Absent from the answers of dry runs that create. */
  resourceVersion: string;
  /** When the object was created (RFC 3339). */
  creationTimestamp: string;
};

/**
 * An object as the API server returns it: `T` with `metadata` and the {@linkcode StoredMetadata}
 * fields `K` (all of them by default) present, so `created.metadata.name` is a `string`.
 *
 * @example
 * ```ts
 * import type { Stored } from "@kopf/kopf/advanced";
 * import type { V1ConfigMap } from "@kopf/kopf/types";
 * function nameOf(cm: Stored<V1ConfigMap>): string {
 *   return cm.metadata.name;
 * }
 * ```
 */
export type Stored<T, K extends keyof StoredMetadata = keyof StoredMetadata> = T & {
  metadata: Pick<StoredMetadata, K>;
};

/** Any Kubernetes object: `apiVersion`, `kind`, `metadata`, and whatever else it carries. */
export interface KubernetesObject {
  /** The group and version, e.g. `v1` or `kopf.dev/v1`. */
  apiVersion?: string;
  /** The kind, e.g. `Pod`. */
  kind?: string;
  /** The metadata: name, namespace, labels, annotations, finalizers, .... */
  metadata: ObjectMeta;
  /** Whatever else the object carries: `spec`, `status`, `data`, .... */
  [key: string]: JsonValue | ObjectMeta | undefined;
}

/** A list as LIST requests return it. */
export interface KubernetesList {
  apiVersion?: string;
  kind?: string;
  metadata: { resourceVersion?: string; continue?: string; remainingItemCount?: number };
  items: KubernetesObject[];
}
