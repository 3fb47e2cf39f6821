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
  name?: string;
  generateName?: string;
  namespace?: string;
  uid?: string;
  resourceVersion?: string;
  generation?: number;
  creationTimestamp?: string;
  deletionTimestamp?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  finalizers?: string[];
  ownerReferences?: JsonObject[];
  [key: string]: JsonValue | undefined;
}

/** Any Kubernetes object: `apiVersion`, `kind`, `metadata`, and whatever else it carries. */
export interface KubernetesObject {
  apiVersion?: string;
  kind?: string;
  metadata: ObjectMeta;
  [key: string]: JsonValue | ObjectMeta | undefined;
}

/** A list as LIST requests return it. */
export interface KubernetesList {
  apiVersion?: string;
  kind?: string;
  metadata: { resourceVersion?: string; continue?: string; remainingItemCount?: number };
  items: KubernetesObject[];
}
