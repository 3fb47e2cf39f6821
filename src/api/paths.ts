/**
 * URL paths of resources and objects; nothing outside `src/api/` builds them.
 *
 * @module
 */

import type { Resource } from "../model/resource.ts";

/** Where in a resource a request goes: a collection (all namespaces or one), an object, a subresource. */
export interface PathTarget {
  /** The namespace, for namespaced resources; absent for cluster-wide requests. */
  namespace?: string | null;
  /** The object's name; absent for the collection. */
  name?: string;
  /** A subresource such as `status`. */
  subresource?: string;
}

/**
 * The path of a resource's collection, object or subresource, e.g.
 * `/apis/kopf.dev/v1/namespaces/ns/kopfexamples/x/status`.
 */
export function resourcePath(
  resource: Pick<Resource, "group" | "version" | "plural" | "namespaced">,
  target: PathTarget = {},
): string {
  const base = resource.group ? `/apis/${resource.group}/${resource.version}` : `/api/${resource.version}`;
  let path = base;
  if (resource.namespaced && target.namespace) path += `/namespaces/${encodeURIComponent(target.namespace)}`;
  path += `/${resource.plural}`;
  if (target.name !== undefined) path += `/${encodeURIComponent(target.name)}`;
  if (target.subresource) path += `/${target.subresource}`;
  return path;
}
