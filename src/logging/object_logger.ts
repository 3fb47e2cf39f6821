/**
 * The logger given to handlers: messages tagged with the object they are about, so that formats
 * can prefix them with `[namespace/name]` or put the reference into JSON.
 *
 * @module
 */

import { getLogger } from "@logtape/logtape";
import type { KubernetesObject } from "../model/body.ts";
import { LogTapeHandlerLogger } from "./handler_logger.ts";

export type { HandlerLogger } from "./handler_logger.ts";

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

/** Looked up once: `getLogger()` walks the category tree, and an object logger is made per cycle. */
const OBJECTS = getLogger(["kopf", "objects"]);

/** A logger whose records carry the object's reference; given to resource handlers as `logger`. */

export class ObjectLogger extends LogTapeHandlerLogger {
  /**
   * @param body the object the messages are about.
   * @param options `local`: never posted as Kubernetes Events (e.g. `on.event` handlers' lines).
   */
  constructor(body: KubernetesObject, options: { local?: boolean } = {}) {
    const properties = options.local ? { object: objectRef(body), local: true } : { object: objectRef(body) };
    super(OBJECTS.with(properties));
  }
}
