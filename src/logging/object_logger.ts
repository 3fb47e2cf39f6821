/**
 * The logger given to handlers: messages tagged with the object they are about, so that formats
 * can prefix them with `[namespace/name]` or put the reference into JSON.
 *
 * @module
 */

import { getLogger, type Logger } from "@logtape/logtape";
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

/** The logging methods handlers use; the same names as Kopf's (Python's) loggers, plus `warn`. */
export interface HandlerLogger {
  /** Logs a debug message. */
  debug(message: string): void;
  /** Logs an informational message. */
  info(message: string): void;
  /** Logs a warning. */
  warning(message: string): void;
  /** Same as `warning`. */
  warn(message: string): void;
  /** Logs an error. */
  error(message: string): void;
  /** Logs an error with an exception's message and stack. */
  exception(message: string, error?: unknown): void;
}

/** Messages are literal text: braces must not be read as placeholders. */
function literal(message: string): string {
  return message.replaceAll("{", "{{").replaceAll("}", "}}");
}

/** A logger whose records carry the object's reference; given to resource handlers as `logger`. */
export class ObjectLogger implements HandlerLogger {
  readonly #logger: Logger;

  /**
   * @param body the object the messages are about.
   * @param options `local`: never posted as Kubernetes Events (e.g. `on.event` handlers' lines).
   */
  constructor(body: KubernetesObject, options: { local?: boolean } = {}) {
    const properties = options.local ? { object: objectRef(body), local: true } : { object: objectRef(body) };
    this.#logger = getLogger(["kopf", "objects"]).with(properties);
  }

  /** Logs a debug message. */
  debug(message: string): void {
    this.#logger.debug(literal(message));
  }
  /** Logs an informational message. */
  info(message: string): void {
    this.#logger.info(literal(message));
  }
  /** Logs a warning. */
  warning(message: string): void {
    this.#logger.warn(literal(message));
  }
  /** Same as `warning`. */
  warn(message: string): void {
    this.#logger.warn(literal(message));
  }
  /** Logs an error. */
  error(message: string): void {
    this.#logger.error(literal(message));
  }
  /** Logs an error with an exception's message and stack. */
  exception(message: string, error?: unknown): void {
    this.#logger.error(literal(message), error === undefined ? {} : { error });
  }
}
