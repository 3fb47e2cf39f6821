/**
 * A discovered Kubernetes resource: what the API server says about one plural of one version.
 *
 * @module
 */

/** One resource of one API group version, as discovery describes it. */
export interface Resource {
  /** The API group; `""` for the core group. */
  readonly group: string;
  /** The version, e.g. `v1`. */
  readonly version: string;
  /** The plural name used in URLs, e.g. `kopfexamples`. */
  readonly plural: string;
  /** The kind of its objects, e.g. `KopfExample`. */
  readonly kind: string;
  /** The singular name, e.g. `kopfexample` (discovery may leave it empty; then the lower-cased kind). */
  readonly singular: string;
  /** Whether its objects live in namespaces. */
  readonly namespaced: boolean;
  /** Whether this version is the group's preferred version. */
  readonly preferred: boolean;
  /** Short names, e.g. `["kex"]`. */
  readonly shortcuts: readonly string[];
  /** Categories, e.g. `["all"]`. */
  readonly categories: readonly string[];
  /** The verbs it supports, e.g. `["get", "list", "watch", "patch"]`. */
  readonly verbs: readonly string[];
  /** Its subresources, e.g. `["status"]`. */
  readonly subresources: readonly string[];
}

/** The `apiVersion` of a resource's objects: `v1` for the core group, `group/version` otherwise. */
export function apiVersionOf(resource: Pick<Resource, "group" | "version">): string {
  return resource.group ? `${resource.group}/${resource.version}` : resource.version;
}

/** A short name for messages: `kopfexamples.v1.kopf.dev`, or `pods.v1` for the core group. */
export function resourceName(resource: Pick<Resource, "group" | "version" | "plural">): string {
  return resource.group
    ? `${resource.plural}.${resource.version}.${resource.group}`
    : `${resource.plural}.${resource.version}`;
}
