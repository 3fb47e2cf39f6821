/**
 * The registration functions behind `kopf.on.*` for change, event and activity handlers: each
 * parses its arguments through `parseRegistration` (the same checks and messages for every kind)
 * and adds a handler to a registry.
 *
 * @module
 */

import type { SelectorInput } from "../model/selector.ts";
import type { Activity, ActivityFn, ActivityHandlerOptions } from "./activities.ts";
import type { LoginFn } from "./login.ts";
import type { Reason } from "./causes.ts";
import type { JsonValue } from "../model/body.ts";
import type { HandledObject, NamespaceOf } from "../model/builtin_types.ts";
import type {
  AnyHandlerFn,
  ChangeFn,
  ChangeHandlerOptions,
  DeleteHandlerOptions,
  EventFn,
  ResourceHandlerOptions,
  ResumeHandlerOptions,
} from "./handlers.ts";
import type { EssenceOf } from "./context.ts";
import type { Registry } from "./registry.ts";
import { parseRegistration } from "./registration_arguments.ts";

/** Where a handler is registered. */
export interface RegistryOption {
  /** The registry to add the handler to; the default registry otherwise. */
  registry?: Registry;
}

/** Options of `on.create` and `on.update`. */
export type ChangeOptions = ChangeHandlerOptions & RegistryOption;
/** Options of `on.create`. */
export type CreateOptions = ChangeOptions;
/** Options of `on.update`. */
export type UpdateOptions = ChangeOptions;
/** Options of `on.delete`. */
export type DeleteOptions = DeleteHandlerOptions & RegistryOption;
/** Options of `on.resume`. */
export type ResumeOptions = ResumeHandlerOptions & RegistryOption;
/** Options of `on.field`; `field` is required. */
export type FieldOptions = ChangeHandlerOptions & RegistryOption & { field: string | string[] };
/** Options of `on.event`. */
export type EventOptions = ResourceHandlerOptions & RegistryOption;
/** Options of `on.startup`, `on.cleanup` and `on.probe`. */
export type ActivityOptions = ActivityHandlerOptions & RegistryOption;

function registerChange(
  kind: Reason | "field",
  args: readonly [unknown, unknown, unknown?],
): AnyHandlerFn {
  const { selector, registry, options, fn, id, field } = parseRegistration<
    DeleteHandlerOptions & ResumeHandlerOptions,
    ChangeFn
  >(kind, args);
  const { optional, deleted, ...rest } = options;
  registry.add({
    kind: "change",
    reason: kind === "field" ? null : kind,
    id,
    selector,
    fn,
    options: rest,
    field,
    requiresFinalizer: kind === "delete" && !optional,
    initial: kind === "resume",
    deleted: kind === "resume" && deleted === true,
  });
  return fn;
}

/**
 * Registers a handler for the creation of objects: it runs once per object (also for objects
 * created while the operator was down), and its result is stored at `status[id]`.
 *
 * @example
 * ```ts
 * import * as kopf from "@kopf/kopf";
 * kopf.on.create("kopfexamples", function createFn({ spec, logger }) {
 *   logger.info(`Created with ${JSON.stringify(spec)}`);
 *   return { message: "hello world" };
 * });
 * ```
 */
export function create<T = never, R extends SelectorInput = SelectorInput>(
  resource: R,
  fn: ChangeFn<HandledObject<T, R>, EssenceOf<HandledObject<T, R>>, NamespaceOf<R>>,
): ChangeFn<HandledObject<T, R>, EssenceOf<HandledObject<T, R>>, NamespaceOf<R>>;
/** With a `field`: `old`, `new` and `diff` are those of the field's value (`null` where absent). */
export function create<T = never, R extends SelectorInput = SelectorInput>(
  resource: R,
  options: CreateOptions & { field: string | string[] },
  fn: ChangeFn<HandledObject<T, R>, JsonValue, NamespaceOf<R>>,
): ChangeFn<HandledObject<T, R>, JsonValue, NamespaceOf<R>>;
/** With options: the handler id, filters, retries, the registry, .... */
export function create<T = never, R extends SelectorInput = SelectorInput>(
  resource: R,
  options: CreateOptions,
  fn: ChangeFn<HandledObject<T, R>, EssenceOf<HandledObject<T, R>>, NamespaceOf<R>>,
): ChangeFn<HandledObject<T, R>, EssenceOf<HandledObject<T, R>>, NamespaceOf<R>>;
export function create(
  resource: SelectorInput,
  optionsOrFn: CreateOptions | AnyHandlerFn,
  maybeFn?: AnyHandlerFn,
): AnyHandlerFn {
  return registerChange("create", [resource, optionsOrFn, maybeFn]);
}

/**
 * Registers a handler for changes of objects (their spec, labels, annotations, other top-level
 * fields -- not status): `old`, `new` and `diff` say what changed.
 *
 * @example
 * ```ts
 * import * as kopf from "@kopf/kopf";
 * kopf.on.update("kopfexamples", { field: "spec.size" }, function resize({ old, new: now }) {
 *   return { resizedFrom: old, resizedTo: now };
 * });
 * ```
 */
export function update<T = never, R extends SelectorInput = SelectorInput>(
  resource: R,
  fn: ChangeFn<HandledObject<T, R>, EssenceOf<HandledObject<T, R>>, NamespaceOf<R>>,
): ChangeFn<HandledObject<T, R>, EssenceOf<HandledObject<T, R>>, NamespaceOf<R>>;
/** With a `field`: `old`, `new` and `diff` are those of the field's value (`null` where absent). */
export function update<T = never, R extends SelectorInput = SelectorInput>(
  resource: R,
  options: UpdateOptions & { field: string | string[] },
  fn: ChangeFn<HandledObject<T, R>, JsonValue, NamespaceOf<R>>,
): ChangeFn<HandledObject<T, R>, JsonValue, NamespaceOf<R>>;
/** With options: the handler id, filters, retries, the registry, .... */
export function update<T = never, R extends SelectorInput = SelectorInput>(
  resource: R,
  options: UpdateOptions,
  fn: ChangeFn<HandledObject<T, R>, EssenceOf<HandledObject<T, R>>, NamespaceOf<R>>,
): ChangeFn<HandledObject<T, R>, EssenceOf<HandledObject<T, R>>, NamespaceOf<R>>;
export function update(
  resource: SelectorInput,
  optionsOrFn: UpdateOptions | AnyHandlerFn,
  maybeFn?: AnyHandlerFn,
): AnyHandlerFn {
  return registerChange("update", [resource, optionsOrFn, maybeFn]);
}

/**
 * Registers a handler for the deletion of objects. Unless `optional`, matching objects get the
 * operator's finalizer, so they are not deleted before the handler has finished.
 *
 * @example
 * ```ts
 * import * as kopf from "@kopf/kopf";
 * kopf.on.delete("kopfexamples", function cleanUp({ name, logger }) {
 *   logger.info(`Cleaning up after ${name}`);
 * });
 * ```
 */
export function del<T = never, R extends SelectorInput = SelectorInput>(
  resource: R,
  fn: ChangeFn<HandledObject<T, R>, EssenceOf<HandledObject<T, R>>, NamespaceOf<R>>,
): ChangeFn<HandledObject<T, R>, EssenceOf<HandledObject<T, R>>, NamespaceOf<R>>;
/** With a `field`: `old`, `new` and `diff` are those of the field's value (`null` where absent). */
export function del<T = never, R extends SelectorInput = SelectorInput>(
  resource: R,
  options: DeleteOptions & { field: string | string[] },
  fn: ChangeFn<HandledObject<T, R>, JsonValue, NamespaceOf<R>>,
): ChangeFn<HandledObject<T, R>, JsonValue, NamespaceOf<R>>;
/** With options: the handler id, filters, retries, the registry, .... */
export function del<T = never, R extends SelectorInput = SelectorInput>(
  resource: R,
  options: DeleteOptions,
  fn: ChangeFn<HandledObject<T, R>, EssenceOf<HandledObject<T, R>>, NamespaceOf<R>>,
): ChangeFn<HandledObject<T, R>, EssenceOf<HandledObject<T, R>>, NamespaceOf<R>>;
export function del(
  resource: SelectorInput,
  optionsOrFn: DeleteOptions | AnyHandlerFn,
  maybeFn?: AnyHandlerFn,
): AnyHandlerFn {
  return registerChange("delete", [resource, optionsOrFn, maybeFn]);
}

/**
 * Registers a handler for objects that the operator finds when it starts and that were handled
 * before: it runs once per object per operator process (mixed into an update if the object
 * changed meanwhile), not for objects being deleted unless `deleted` is set.
 *
 * @example
 * ```ts
 * import * as kopf from "@kopf/kopf";
 * kopf.on.resume("kopfexamples", function reconnect({ name, memo }) {
 *   memo.connected = name;
 * });
 * ```
 */
export function resume<T = never, R extends SelectorInput = SelectorInput>(
  resource: R,
  fn: ChangeFn<HandledObject<T, R>, EssenceOf<HandledObject<T, R>>, NamespaceOf<R>>,
): ChangeFn<HandledObject<T, R>, EssenceOf<HandledObject<T, R>>, NamespaceOf<R>>;
/** With a `field`: `old`, `new` and `diff` are those of the field's value (`null` where absent). */
export function resume<T = never, R extends SelectorInput = SelectorInput>(
  resource: R,
  options: ResumeOptions & { field: string | string[] },
  fn: ChangeFn<HandledObject<T, R>, JsonValue, NamespaceOf<R>>,
): ChangeFn<HandledObject<T, R>, JsonValue, NamespaceOf<R>>;
/** With options: the handler id, filters, retries, the registry, .... */
export function resume<T = never, R extends SelectorInput = SelectorInput>(
  resource: R,
  options: ResumeOptions,
  fn: ChangeFn<HandledObject<T, R>, EssenceOf<HandledObject<T, R>>, NamespaceOf<R>>,
): ChangeFn<HandledObject<T, R>, EssenceOf<HandledObject<T, R>>, NamespaceOf<R>>;
export function resume(
  resource: SelectorInput,
  optionsOrFn: ResumeOptions | AnyHandlerFn,
  maybeFn?: AnyHandlerFn,
): AnyHandlerFn {
  return registerChange("resume", [resource, optionsOrFn, maybeFn]);
}

/**
 * Registers a handler for changes of one field, whatever the cause (creation, update, deletion,
 * resuming): it runs when the field's value differs from the last handled one; `old`, `new` and
 * `diff` are those of the field.
 *
 * @example
 * ```ts
 * import * as kopf from "@kopf/kopf";
 * kopf.on.field("kopfexamples", { field: "spec.replicas" }, function scale({ old, new: now }) {
 *   return { from: old, to: now };
 * });
 * ```
 */
export function field<T = never, R extends SelectorInput = SelectorInput>(
  resource: R,
  options: FieldOptions,
  fn: ChangeFn<HandledObject<T, R>, JsonValue, NamespaceOf<R>>,
): ChangeFn<HandledObject<T, R>, JsonValue, NamespaceOf<R>> {
  return registerChange("field", [resource, options, fn]) as ChangeFn<HandledObject<T, R>, JsonValue, NamespaceOf<R>>;
}

/**
 * Registers a handler for every watch event of matching objects (including the objects found by
 * the initial listing, with `type` null). Its errors are logged and ignored; its result is
 * stored at `status[id]` and its patch applied, except for deletions.
 *
 * @example
 * ```ts
 * import * as kopf from "@kopf/kopf";
 * kopf.on.event("pods", function seen({ type, name, logger }) {
 *   logger.info(`${type} ${name}`);
 * });
 * ```
 */
export function event<T = never, R extends SelectorInput = SelectorInput>(
  resource: R,
  fn: EventFn<HandledObject<T, R>, NamespaceOf<R>>,
): EventFn<HandledObject<T, R>, NamespaceOf<R>>;
/** With options: the handler id, filters, retries, the registry, .... */
export function event<T = never, R extends SelectorInput = SelectorInput>(
  resource: R,
  options: EventOptions,
  fn: EventFn<HandledObject<T, R>, NamespaceOf<R>>,
): EventFn<HandledObject<T, R>, NamespaceOf<R>>;
export function event(
  resource: SelectorInput,
  optionsOrFn: EventOptions | AnyHandlerFn,
  maybeFn?: AnyHandlerFn,
): AnyHandlerFn {
  const { selector, registry, options, fn, id, field } = parseRegistration<ResourceHandlerOptions, EventFn>(
    "event",
    [resource, optionsOrFn, maybeFn],
  );
  registry.add({ kind: "event", id, selector, fn, options, field });
  return fn;
}

function registerActivity(activity: Activity, args: readonly [unknown, unknown?]): ActivityFn {
  const { registry, options, fn, id } = parseRegistration<ActivityHandlerOptions, ActivityFn>(activity, args);
  registry.add({ kind: "activity", activity, id, fn, options });
  return fn;
}

/**
 * Registers a startup handler: it runs when the operator starts, before anything touches the
 * Kubernetes API, and may change the `settings` for everything started afterwards or fill the
 * operator's `memo`. All startup handlers run, retried until each succeeds (arbitrary errors
 * after `backoff` seconds, a `TemporaryError` after its delay); if one fails for good
 * (`PermanentError`, `errors: "permanent"`, its `timeout` or `retries` used up), the operator
 * stops with an error (`kopf run` exits with code 1).
 *
 * @example
 * ```ts
 * import * as kopf from "@kopf/kopf";
 * kopf.on.startup(function configure({ settings, memo, logger }) {
 *   settings.persistence.finalizer = "example.com/finalizer";
 *   memo.startedAt = new Date().toISOString();
 *   logger.info("Configured.");
 * });
 * ```
 */
export function startup(fn: ActivityFn): ActivityFn;
/** Registers a startup handler with options: `id`, `param`, `errors`, `timeout`, `retries`, `backoff`, `registry`. */
export function startup(options: ActivityOptions, fn: ActivityFn): ActivityFn;
export function startup(optionsOrFn: ActivityOptions | ActivityFn, maybeFn?: ActivityFn): ActivityFn {
  return registerActivity("startup", [optionsOrFn, maybeFn]);
}

/**
 * Registers a cleanup handler: it runs when the operator stops (SIGINT, SIGTERM, its `signal`,
 * or a fatal error, provided the startup handlers have succeeded), after the watch streams have
 * stopped and the objects' queues are drained. Each cleanup handler is retried by the same rules
 * as startup handlers, within `settings.process.cleanupTimeout` for all of them; failures are
 * logged, and the operator stops anyway.
 *
 * @example
 * ```ts
 * import * as kopf from "@kopf/kopf";
 * kopf.on.cleanup(function disconnect({ memo, logger }) {
 *   logger.info("Bye.");
 * });
 * ```
 */
export function cleanup(fn: ActivityFn): ActivityFn;
/** Registers a cleanup handler with options: `id`, `param`, `errors`, `timeout`, `retries`, `backoff`, `registry`. */
export function cleanup(options: ActivityOptions, fn: ActivityFn): ActivityFn;
export function cleanup(optionsOrFn: ActivityOptions | ActivityFn, maybeFn?: ActivityFn): ActivityFn {
  return registerActivity("cleanup", [optionsOrFn, maybeFn]);
}

/**
 * Registers a probe handler: with a liveness endpoint (`kopf run --liveness URL`), each request
 * answers with the JSON object of all probe handlers' results by id, recomputed at most once per
 * `settings.process.probingMaxAge` seconds. A probe failing for good makes the answer HTTP 500.
 *
 * @example
 * ```ts
 * import * as kopf from "@kopf/kopf";
 * kopf.on.probe({ id: "now" }, () => new Date().toISOString());
 * ```
 */
export function probe(fn: ActivityFn): ActivityFn;
/** Registers a probe handler with options: `id`, `param`, `errors`, `timeout`, `retries`, `backoff`, `registry`. */
export function probe(options: ActivityOptions, fn: ActivityFn): ActivityFn;
export function probe(optionsOrFn: ActivityOptions | ActivityFn, maybeFn?: ActivityFn): ActivityFn {
  return registerActivity("probe", [optionsOrFn, maybeFn]);
}

/**
 * Registers a login handler: it returns where the API server is and how to authenticate (a
 * `kopf.ConnectionInfo`), or `null` for nothing. All login handlers run after the startup
 * handlers and before any API request, and again whenever the API server has rejected (HTTP 401)
 * or the expiration has ended all the credentials they gave; retried like startup handlers
 * (forever by default: limit them with `retries`/`timeout`). Registering any login handler
 * replaces the ready-made logins (the service account in a pod, then the kubeconfig); call
 * `kopf.loginWithKubeconfig()` or `kopf.loginWithServiceAccount()` inside to reuse them.
 *
 * @example
 * ```ts
 * import * as kopf from "@kopf/kopf";
 * kopf.on.login(async function fromFiles() {
 *   return new kopf.ConnectionInfo({
 *     server: "https://10.0.0.1:6443",
 *     token: (await Deno.readTextFile("/etc/operator/token")).trim(),
 *     caPath: "/etc/operator/ca.crt",
 *   });
 * });
 * ```
 */
export function login(fn: LoginFn): LoginFn;
/** Registers a login handler with options: `id`, `param`, `errors`, `timeout`, `retries`, `backoff`, `registry`. */
export function login(options: ActivityOptions, fn: LoginFn): LoginFn;
export function login(optionsOrFn: ActivityOptions | LoginFn, maybeFn?: LoginFn): LoginFn {
  return registerActivity("login", [optionsOrFn, maybeFn]) as LoginFn;
}
