/**
 * kopf for Deno: a Kubernetes operator framework. Write handlers, run `kopf run handlers.ts`, and
 * the framework watches the resources, queues the events of each object, runs the handlers, and
 * keeps their state on the objects (compatible with Python Kopf's).
 *
 * @example
 * ```ts
 * import * as kopf from "@kopf/kopf";
 *
 * kopf.on.create("kopfexamples", function createFn({ spec, logger }) {
 *   logger.info(`And here we are! Created with spec: ${JSON.stringify(spec)}`);
 *   return { message: "hello world" }; // stored at status.createFn
 * });
 * ```
 *
 * @module
 */

export * as on from "./on.ts";
export { operator, type OperatorOptions, type RunningOperator } from "./src/reactor/operator.ts";
export { Registry } from "./src/handling/registry.ts";
export { PermanentError, TemporaryError, type TemporaryErrorOptions } from "./src/handling/errors.ts";
export type { ChangeContext, DiffItem, EventContext, Memo, ResourceContext } from "./src/handling/context.ts";
export type { ChangeFn, ChangeHandlerOptions, EventFn, ResourceHandlerOptions } from "./src/handling/handlers.ts";
export type { HandlerLogger } from "./src/logging/object_logger.ts";
export { configureLogging, type LogFormat, type LoggingOptions } from "./src/logging/configure.ts";
export { Patch, type PatchMetadata, type PatchObject, type PatchValue } from "./src/model/patch.ts";
export type { JsonObject, JsonValue, KubernetesObject, ObjectMeta } from "./src/model/body.ts";
export type { Resource } from "./src/model/resource.ts";
export { EVERYTHING, type SelectorInput, type SelectorSpec } from "./src/model/selector.ts";
export { Settings } from "./src/settings/settings.ts";
export { ExecutionSettings } from "./src/settings/execution.ts";
export { NetworkingSettings } from "./src/settings/networking.ts";
export { PersistenceSettings } from "./src/settings/persistence.ts";
export { WatchingSettings } from "./src/settings/watching.ts";
export { sleep } from "./src/utils/sleep.ts";
