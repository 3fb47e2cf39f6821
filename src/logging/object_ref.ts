/**
 * The reference to an object that the records of its logger carry: what the console's prefix
 * (`[namespace/name]`), JSON lines and posted Events name it by.
 *
 * @module
 */

import type { KubernetesObject } from "../model/body.ts";

/** The reference to an object that object-related log records carry. */
export interface ObjectRef {
  apiVersion?: string;
  kind?: string;
  name?: string;
  uid?: string;
  namespace?: string;
}

/** The reference of an object, for log records. */
export function objectRef(body: KubernetesObject): ObjectRef {
  const { name, uid, namespace } = body.metadata;
  return { apiVersion: body.apiVersion, kind: body.kind, name, uid, namespace };
}
