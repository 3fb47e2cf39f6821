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
export { NoHandlersError } from "./src/reactor/no_handlers.ts";
export type { WatchHealth, WatchHealthTiming, WatchVerdict } from "./src/api/watch_health.ts";
export { Registry } from "./src/handling/registry.ts";
export type { RegistryOption } from "./src/handling/registration.ts";
export {
  type Activity,
  type ActivityContext,
  ActivityError,
  type ActivityFn,
  type ActivityHandler,
  type ActivityHandlerOptions,
} from "./src/handling/activities.ts";
export {
  HandlerRetriesError,
  HandlerTimeoutError,
  PermanentError,
  TemporaryError,
  type TemporaryErrorOptions,
} from "./src/handling/errors.ts";
export {
  ABSENT,
  allOf,
  anyOf,
  type FilterContext,
  type FilterOptions,
  type MetaFilter,
  type MetaFilterValue,
  noneOf,
  not,
  type PresenceMarker,
  PRESENT,
  type ValueCallback,
  type ValueFilter,
  type WhenCallback,
} from "./src/handling/filters.ts";
export { execute, register, subhandler } from "./src/handling/subhandlers.ts";
export * as lifecycles from "./src/handling/lifecycles.ts";
export type { DueHandler, Lifecycle } from "./src/handling/lifecycles.ts";
export type { Reason } from "./src/handling/causes.ts";
export type { Diff, DiffItem, DiffOperation } from "./src/model/diff.ts";
export type { EssenceOf, EventContext, Memo, ResourceContext, SpecOf, StatusOf } from "./src/handling/context.ts";
export type {
  AnyHandlerFn,
  ChangeContext,
  ChangeFn,
  ChangeHandler,
  ChangeHandlerOptions,
  DaemonHandler,
  DaemonHandlerOptions,
  DeleteHandlerOptions,
  ErrorsMode,
  EventFn,
  EventHandler,
  ExecuteOptions,
  ExecuteSubhandlers,
  HandlerResult,
  IndexHandler,
  RegisterSubhandler,
  ResourceHandler,
  ResourceHandlerOptions,
  ResumeHandlerOptions,
  RetryOptions,
  SubhandlerOptions,
  SubhandlerSpec,
  TimerHandler,
  TimerHandlerOptions,
} from "./src/handling/handlers.ts";
export type { HandlerLogger } from "./src/logging/object_logger.ts";
export { configureLogging, flushLogging, type LogFormat, type LoggingOptions } from "./src/logging/configure.ts";
export type { LogLevel, LogRecord, Sink } from "@logtape/logtape";
export { Patch, type PatchMetadata, type PatchObject, type PatchValue } from "./src/model/patch.ts";
export type { JsonObject, JsonValue, KubernetesObject, ObjectMeta } from "./src/model/body.ts";
export type { Resource } from "./src/model/resource.ts";
export { EVERYTHING, type Selection, Selector, type SelectorInput, type SelectorSpec } from "./src/model/selector.ts";
export { Settings } from "./src/settings/settings.ts";
export { ExecutionSettings } from "./src/settings/execution.ts";
export { NetworkingSettings } from "./src/settings/networking.ts";
export { type LeanStorageOptions, PersistenceSettings } from "./src/settings/persistence.ts";
export { WatchingSettings } from "./src/settings/watching.ts";
export { BatchingSettings } from "./src/settings/batching.ts";
export { BackgroundSettings } from "./src/settings/background.ts";
export { sleep } from "./src/utils/sleep.ts";
export { PostingSettings } from "./src/settings/posting.ts";
export { ProcessSettings } from "./src/settings/process.ts";
export {
  adjustNamespace,
  adopt,
  type AdoptOptions,
  appendOwnerReference,
  buildObjectReference,
  buildOwnerReference,
  type ChildLike,
  type ChildLikeMetadata,
  type ChildMetadata,
  type ChildObject,
  type ChildObjects,
  type FieldPath,
  harmonizeNaming,
  label,
  type LabelOptions,
  type NamespaceOptions,
  type NamingOptions,
  type ObjectReference,
  type OneOrMany,
  type OwnerReference,
  type OwnerReferenceOptions,
  type ReferencedObject,
  removeOwnerReference,
} from "./src/kits/hierarchies.ts";
export {
  event,
  type EventObjects,
  type EventOptions,
  exception,
  type ExceptionOptions,
  info,
  type InfoOptions,
  warn,
} from "./src/engines/explicit_events.ts";
export { postingSink } from "./src/engines/posting_sink.ts";
export {
  AnnotationsDiffBaseStorage,
  AnnotationsProgressStorage,
  type DiffBaseStorage,
  type FieldSpec,
  MultiDiffBaseStorage,
  MultiProgressStorage,
  type ProgressRecord,
  type ProgressStorage,
  ReadOnlyAnnotationsDiffBaseStorage,
  ReadOnlyAnnotationsProgressStorage,
  ReadOnlyStatusProgressStorage,
  SmartProgressStorage,
  StatusDiffBaseStorage,
  StatusProgressStorage,
} from "./src/state/mod.ts";
export { index, type IndexOptions } from "./src/handling/index_registration.ts";
export type { Index, IndexKey, Indices, Store } from "./src/model/index_store.ts";
export type { IndexContext } from "./src/handling/context.ts";
export type { IndexFn, IndexHandlerOptions } from "./src/handling/handlers.ts";
export { daemon, type DaemonOptions, timer, type TimerOptions } from "./src/handling/background_registration.ts";
export { type StopCause, StopReason } from "./src/handling/stopping.ts";
export type { BackgroundContext, DaemonContext, TimerContext } from "./src/handling/context.ts";
export type { DaemonFn, TimerFn } from "./src/handling/handlers.ts";
export { ConnectionInfo, type ConnectionInfoOptions } from "./src/api/connection_info.ts";
export { LoginError } from "./src/api/login_error.ts";
export {
  type KubeconfigLoginOptions,
  loginWithKubeconfig,
  loginWithServiceAccount,
  type ServiceAccountLoginOptions,
} from "./src/api/login.ts";
export type { LoginFn } from "./src/handling/login.ts";
export { AdmissionError, type AdmissionErrorOptions } from "./src/handling/admission.ts";
export type {
  AdmissionContext,
  AdmissionFn,
  AdmissionHandler,
  AdmissionHandlerOptions,
  AdmissionKind,
} from "./src/handling/admission_handler.ts";
export type {
  AdmissionOperation,
  AdmissionRequest,
  AdmissionResponse,
  AdmissionReview,
  AdmissionServer,
  AdmissionServerFn,
  GroupVersionResource,
  WebhookClientConfig,
  WebhookFn,
  WebhookRequestOptions,
} from "./src/model/admission.ts";
export { WebhookError } from "./src/model/admission.ts";
export { AdmissionSettings } from "./src/settings/admission.ts";
export { PeeringSettings } from "./src/settings/peering.ts";
export { LeaderElectionSettings } from "./src/settings/leader_election.ts";
export { MetricsSettings } from "./src/settings/metrics.ts";
export { ScanningSettings } from "./src/settings/scanning.ts";
export {
  WebhookDockerDesktopServer,
  WebhookK3dServer,
  WebhookMinikubeServer,
  WebhookServer,
  type WebhookServerOptions,
} from "./src/kits/webhook_server.ts";
export {
  type ApiApplyOptions,
  type ApiCallOptions,
  type ApiCreateOptions,
  type ApiDeleteOptions,
  type ApiListOptions,
  type ApiObject,
  type ApiPatchOptions,
  type ApiReplaceOptions,
  type ApiWatchEvent,
  type ApiWatchOptions,
  type ApiWriteOptions,
  DEFAULT_FIELD_MANAGER,
  KubeApi,
  type KubeApiSource,
  type ObjectList,
  type PatchType,
  type ResourceArg,
} from "./src/api/kube_api.ts";
export { connect, ConnectedApi, type ConnectOptions } from "./src/kits/connect.ts";
export type { ApiClient, ApiClientOptions, ConnectionProblem, RequestOptions } from "./src/api/client.ts";
export type { RequestCounters, Verb } from "./src/api/counters.ts";
export type { Credentials, TlsMaterial } from "./src/api/credentials.ts";
export type { Vault, VaultEntry, VaultItem, VaultOptions } from "./src/api/vault.ts";
export {
  ApiBadRequestError,
  ApiConflictError,
  ApiConnectionError,
  ApiError,
  ApiForbiddenError,
  ApiGoneError,
  ApiNotFoundError,
  ApiServerError,
  type ApiStatus,
  ApiTooManyRequestsError,
  ApiUnauthorizedError,
  ApiUnprocessableError,
} from "./src/api/errors.ts";
export type { BuiltinTypes, HandledObject, ObjectOf } from "./src/model/builtin_types.ts";
