/**
 * The logger given to handlers: messages tagged with the object they are about, so that formats
 * can prefix them with `[namespace/name]` or put the reference into JSON.
 *
 * @module
 */

import { getLogger } from "@logtape/logtape";
import type { KubernetesObject } from "../model/body.ts";
import { emitObjectRecord } from "./configure.ts";
import { type HandlerLogger, LogTapeHandlerLogger } from "./handler_logger.ts";
import type { ObjectRef } from "./object_ref.ts";

export type { HandlerLogger } from "./handler_logger.ts";

/** Looked up once: `getLogger()` walks the category tree, and an object logger is made per cycle. */
const OBJECTS = getLogger(["kopf", "objects"]);

/**
 * A logger whose records carry the object's reference; given to resource handlers as `logger`.
 * Under the framework's own logging configuration its records go straight to that configuration's
 * sinks (`emitObjectRecord`); under the program's own, through LogTape.
 */
export class ObjectLogger implements HandlerLogger {
  // Declared, set in the constructor, not `#private`: V8 runs a class's field initialisers as a
  // function of their own at every construction, and nearly every cycle makes a logger.
  declare private readonly properties: Record<string, unknown>;
  /** The LogTape logger with the object's reference, made only when a record goes through LogTape. */
  declare private logtape: LogTapeHandlerLogger | undefined;

  /**
   * @param body the object the messages are about.
   * @param options `local`: never posted as Kubernetes Events (e.g. `on.event` handlers' lines).
   */
  constructor(body: KubernetesObject, options: { local?: boolean } = {}) {
    // `objectRef()` written out: a call less per cycle.
    const { name, uid, namespace } = body.metadata;
    const object: ObjectRef = { apiVersion: body.apiVersion, kind: body.kind, name, uid, namespace };
    this.properties = options.local ? { object, local: true } : { object };
    this.logtape = undefined;
  }

  /** Logs a debug message. */
  debug(message: string): void {
    if (!emitObjectRecord("debug", message, this.properties)) this.through().debug(message);
  }
  /** Logs an informational message. */
  info(message: string): void {
    if (!emitObjectRecord("info", message, this.properties)) this.through().info(message);
  }
  /** Logs a warning. */
  warning(message: string): void {
    if (!emitObjectRecord("warning", message, this.properties)) this.through().warning(message);
  }
  /** Same as `warning`. */
  warn(message: string): void {
    this.warning(message);
  }
  /** Logs an error. */
  error(message: string): void {
    if (!emitObjectRecord("error", message, this.properties)) this.through().error(message);
  }
  /** Logs an error with an exception's message and stack. */
  exception(message: string, error?: unknown): void {
    const properties = error === undefined ? this.properties : { ...this.properties, error };
    if (!emitObjectRecord("error", message, properties)) this.through().exception(message, error);
  }

  private through(): LogTapeHandlerLogger {
    return this.logtape ??= new LogTapeHandlerLogger(OBJECTS.with(this.properties));
  }
}
