/**
 * The building blocks behind `@kopf/kopf`, for code that extends or embeds the framework rather
 * than handles objects: the handler records a `Registry` holds and the option interfaces
 * they are built from, the settings groups, the storage interfaces (for custom progress and
 * diff-base storages), the admission model (for custom webhook servers and tunnels), the API
 * client's plumbing (credentials, vault, request counters, watch health), the logging sink that
 * posts log lines as Events, and the types the main entry point's signatures are made of.
 *
 * Handler authors rarely need anything here: `import * as kopf from "@kopf/kopf"` has the
 * registration functions, the contexts, errors, events, hierarchies, settings and the client.
 *
 * @example A progress storage that keeps the records in memory (a sketch: they do not survive a restart)
 * ```ts
 * import * as kopf from "@kopf/kopf";
 * import type { ProgressRecord, ProgressStorage } from "@kopf/kopf/advanced";
 *
 * class MemoryProgressStorage implements ProgressStorage {
 *   readonly #records = new Map<string, ProgressRecord>();
 *   fetch(key: string, body: kopf.KubernetesObject): ProgressRecord | null {
 *     return this.#records.get(`${body.metadata?.uid}/${key}`) ?? null;
 *   }
 *   store(key: string, record: ProgressRecord, body: kopf.KubernetesObject): void {
 *     this.#records.set(`${body.metadata?.uid}/${key}`, record);
 *   }
 *   purge(key: string, body: kopf.KubernetesObject): void {
 *     this.#records.delete(`${body.metadata?.uid}/${key}`);
 *   }
 *   touch(): void {}
 *   clear<T>(essence: T): T {
 *     return essence;
 *   }
 * }
 *
 * kopf.on.startup(({ settings }) => {
 *   settings.persistence.progressStorage = new MemoryProgressStorage();
 * });
 * ```
 *
 * @module
 */

// Handler records (what a Registry holds) and the option interfaces that `on.*Options` are made of.
export type {
  AnyHandlerFn,
  ChangeHandler,
  ChangeHandlerOptions,
  DaemonHandler,
  DaemonHandlerOptions,
  DeleteHandlerOptions,
  ErrorsMode,
  EventHandler,
  ExecuteOptions,
  ExecuteSubhandlers,
  HandlerResult,
  IndexHandler,
  IndexHandlerOptions,
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
export type { Activity, ActivityHandler, ActivityHandlerOptions } from "./src/handling/activities.ts";
export type { AdmissionHandler, AdmissionHandlerOptions, AdmissionKind } from "./src/handling/admission_handler.ts";
export type { ConversionHandler, ConversionHandlerOptions } from "./src/handling/conversion_handler.ts";
export type { AdmissionErrorOptions } from "./src/handling/admission.ts";
export type { RegistryOption } from "./src/handling/registration.ts";
export type { TemporaryErrorOptions } from "./src/handling/errors.ts";
export type {
  FilterOptions,
  MetaFilter,
  MetaFilterValue,
  PresenceMarker,
  ValueFilter,
} from "./src/handling/filters.ts";
export type { DueHandler, Lifecycle } from "./src/handling/lifecycles.ts";
export type { StopCause } from "./src/handling/stopping.ts";

// The parts of the contexts and of the typed bodies.
export type {
  BackgroundContext,
  ContextMemo,
  EssenceOf,
  ObjectContext,
  SpecOf,
  StatusOf,
} from "./src/handling/context.ts";
export type { ClusterScopedPlural, HandledObject, NamespaceOf, ObjectOf } from "./src/model/builtin_types.ts";
export type { DiffOperation } from "./src/model/diff.ts";
export type { IndexKey } from "./src/model/index_store.ts";
export type { JsonObject, JsonValue, Stored, StoredMetadata } from "./src/model/body.ts";
export type { PatchMetadata, PatchObject, PatchValue } from "./src/model/patch.ts";
export { type Selection, Selector, type SelectorInput, type SelectorSpec } from "./src/model/selector.ts";

// Options of the events and hierarchy functions.
export type { EventObjects, ExceptionOptions, InfoOptions, PostEventOptions } from "./src/engines/explicit_events.ts";
export type {
  AdoptOptions,
  ChildLike,
  ChildLikeMetadata,
  ChildMetadata,
  ChildObjects,
  FieldPath,
  LabelOptions,
  NamespaceOptions,
  NamingOptions,
  ObjectReference,
  OneOrMany,
  OwnerReference,
  OwnerReferenceOptions,
  ReferencedObject,
} from "./src/kits/hierarchies.ts";

// Settings groups: `settings.posting` is a PostingSettings, and so on.
export { AdmissionSettings } from "./src/settings/admission.ts";
export { BackgroundSettings } from "./src/settings/background.ts";
export { BatchingSettings } from "./src/settings/batching.ts";
export { ExecutionSettings } from "./src/settings/execution.ts";
export { LeaderElectionSettings } from "./src/settings/leader_election.ts";
export { ShardingSettings } from "./src/settings/sharding.ts";
export { MetricsSettings } from "./src/settings/metrics.ts";
export { NetworkingSettings } from "./src/settings/networking.ts";
export { type LeanStorageOptions, PersistenceSettings } from "./src/settings/persistence.ts";
export { PeeringSettings } from "./src/settings/peering.ts";
export { PostingSettings } from "./src/settings/posting.ts";
export { ProcessSettings } from "./src/settings/process.ts";
export { ScanningSettings } from "./src/settings/scanning.ts";
export { WatchingSettings } from "./src/settings/watching.ts";

// Storages: the interfaces to implement, and the read-only ones for taking over Kopf's state.
export {
  type DiffBaseStorage,
  type FieldSpec,
  type ProgressRecord,
  type ProgressStorage,
  ReadOnlyAnnotationsDiffBaseStorage,
  ReadOnlyAnnotationsProgressStorage,
  ReadOnlyStatusProgressStorage,
} from "./src/state/mod.ts";

// Logging: the options of `kopf.configureLogging()`, and the sink that posts log lines as Events.
export type { LogFormat, LoggingOptions } from "./src/logging/configure.ts";
export type { LogLevel, LogRecord, Sink } from "@logtape/logtape";
export { postingSink } from "./src/engines/posting_sink.ts";

// Admission and conversion: the review models, and what a custom webhook server or tunnel implements.
export {
  type AdmissionOperation,
  type AdmissionRequest,
  type AdmissionResponse,
  type AdmissionReview,
  type AdmissionServer,
  type AdmissionServerFn,
  type GroupVersionResource,
  type WebhookClientConfig,
  WebhookError,
  type WebhookFn,
  type WebhookRequestOptions,
} from "./src/model/admission.ts";
export type { ConversionRequest, ConversionResponse, ConversionReview } from "./src/model/conversion_review.ts";
export type { WebhookServerOptions } from "./src/kits/webhook_server.ts";

// The client: its options and results, the connection and its credentials, counters, watch health.
export { DEFAULT_FIELD_MANAGER, type KubeApiSource } from "./src/api/kube_api.ts";
export type {
  ApiApplyOptions,
  ApiCallOptions,
  ApiCreateOptions,
  ApiDeleteOptions,
  ApiListOptions,
  ApiObject,
  ApiPatchOptions,
  ApiReplaceOptions,
  ApiWatchOptions,
  ApiWriteOptions,
  DryRunFields,
  NotDryRun,
  ObjectList,
  PatchType,
  ResourceArg,
} from "./src/api/kube_api_options.ts";
export type { ApiStatus } from "./src/api/errors.ts";
export { ConnectedApi, type ConnectOptions } from "./src/kits/connect.ts";
export type { ConnectionInfoOptions } from "./src/api/connection_info.ts";
export type { KubeconfigLoginOptions, ServiceAccountLoginOptions } from "./src/api/login.ts";
export type { ApiClient, ApiClientOptions, ConnectionProblem, RequestOptions } from "./src/api/client.ts";
export type { RequestCounters, Verb } from "./src/api/counters.ts";
export type { Congestion } from "./src/utils/turns.ts";
export type { Credentials, TlsMaterial } from "./src/api/credentials.ts";
export type { Vault, VaultEntry, VaultItem, VaultOptions } from "./src/api/vault.ts";
export type { WatchHealth, WatchHealthTiming, WatchVerdict } from "./src/api/watch_health.ts";
