/**
 * kopf for Deno: a Kubernetes operator framework. Write handlers, run `kopf run handlers.ts`, and
 * the framework watches the resources, queues the events of each object, runs the handlers, and
 * keeps their state on the objects (compatible with Python Kopf's).
 *
 * This entry point holds what handler authors use: the registration functions (`on`, `timer`,
 * `daemon`, `index`), the handlers' contexts, errors, events, hierarchies, filters, settings,
 * storages, the client and logins, and `operator()` for embedding. The building blocks behind them
 * (handler records, option building blocks, settings groups, storage interfaces, the client's
 * plumbing) are in `@kopf/kopf/advanced`.
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

// Registration: `kopf.on.*` (with its options types, `kopf.on.CreateOptions` & co.), and the same
// timer, daemon and index functions at the top level.
export * as on from "./on.ts";
export { index } from "./src/handling/index_registration.ts";
export { daemon, timer } from "./src/handling/background_registration.ts";
export { Registry } from "./src/handling/registry.ts";

// What handlers receive.
export type { ActivityContext, ActivityFn } from "./src/handling/activities.ts";
export type { AdmissionContext, AdmissionFn } from "./src/handling/admission_handler.ts";
export type {
  AnyMemo,
  DaemonContext,
  EventContext,
  IndexContext,
  Memo,
  ResourceContext,
  TimerContext,
} from "./src/handling/context.ts";
export type { ChangeContext, ChangeFn, DaemonFn, EventFn, IndexFn, TimerFn } from "./src/handling/handlers.ts";
export type { LoginFn } from "./src/handling/login.ts";
export type { Reason } from "./src/handling/causes.ts";
export type { Diff, DiffItem } from "./src/model/diff.ts";
export type { HandlerLogger } from "./src/logging/object_logger.ts";
export type { Index, Indices, Store } from "./src/model/index_store.ts";
export { Patch } from "./src/model/patch.ts";
export type { KubernetesObject, ObjectMeta } from "./src/model/body.ts";
export type { Resource } from "./src/model/resource.ts";
export type { BuiltinTypes } from "./src/model/builtin_types.ts";
export { StopReason } from "./src/handling/stopping.ts";
export { sleep } from "./src/utils/sleep.ts";

// Filters.
export { ABSENT, type FilterContext, PRESENT, type ValueCallback, type WhenCallback } from "./src/handling/filters.ts";
export { allOf, anyOf, noneOf, not } from "./src/handling/filter_combinators.ts";
export { EVERYTHING } from "./src/model/selector.ts";

// Errors that handlers raise.
export { HandlerRetriesError, HandlerTimeoutError, PermanentError, TemporaryError } from "./src/handling/errors.ts";
export { ActivityError } from "./src/handling/activities.ts";
export { AdmissionError } from "./src/handling/admission.ts";

// Sub-handlers.
export { execute, register, subhandler } from "./src/handling/subhandlers.ts";
export * as lifecycles from "./src/handling/lifecycles.ts";

// Events and hierarchies.
export { event, exception, info, warn } from "./src/engines/explicit_events.ts";
export {
  adjustNamespace,
  adopt,
  appendOwnerReference,
  buildObjectReference,
  buildOwnerReference,
  type ChildObject,
  harmonizeNaming,
  label,
  removeOwnerReference,
} from "./src/kits/hierarchies.ts";

// Running, configuring, logging.
export { operator, type OperatorOptions, type RunningOperator } from "./src/reactor/operator.ts";
export { NoHandlersError } from "./src/reactor/no_handlers.ts";
export { Settings } from "./src/settings/settings.ts";
export { configureLogging, flushLogging } from "./src/logging/configure.ts";
export {
  AnnotationsDiffBaseStorage,
  AnnotationsProgressStorage,
  MultiDiffBaseStorage,
  MultiProgressStorage,
  SmartProgressStorage,
  StatusDiffBaseStorage,
  StatusProgressStorage,
} from "./src/state/mod.ts";
export {
  WebhookDockerDesktopServer,
  WebhookK3dServer,
  WebhookMinikubeServer,
  WebhookServer,
} from "./src/kits/webhook_server.ts";

// Credentials and the client.
export { ConnectionInfo } from "./src/api/connection_info.ts";
export { LoginError } from "./src/api/login_error.ts";
export { loginWithKubeconfig, loginWithServiceAccount } from "./src/api/login.ts";
export { KubeApi } from "./src/api/kube_api.ts";
export type { ApiWatchEvent } from "./src/api/kube_api_options.ts";
export { connect } from "./src/kits/connect.ts";
export {
  ApiBadRequestError,
  ApiConflictError,
  ApiConnectionError,
  ApiError,
  ApiForbiddenError,
  ApiGoneError,
  ApiNotFoundError,
  ApiServerError,
  ApiTooManyRequestsError,
  ApiUnauthorizedError,
  ApiUnprocessableError,
} from "./src/api/errors.ts";
