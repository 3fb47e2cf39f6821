/**
 * The context handlers receive: one object to destructure, with Kopf's keyword arguments under
 * camelCase names.
 *
 * @module
 */

import type { KubeApi } from "../api/kube_api.ts";
import type { KubernetesObject, ObjectMeta, Stored, StoredMetadata } from "../model/body.ts";
import type { Patch } from "../model/patch.ts";
import type { Resource } from "../model/resource.ts";
import type { HandlerLogger } from "../logging/object_logger.ts";
import type { DiffItem } from "../model/diff.ts";
import type { Indices } from "../model/index_store.ts";
import { currentApi } from "./current_api.ts";

export type { DiffItem };

/**
 * What an operator keeps in its memos (the operator's, and each object's, kept between events of
 * the same object while the operator runs), declared by merging into this interface. Once declared,
 * `memo` in handlers has exactly these fields: a misspelt one is a `deno check` error. Declare the
 * fields optional, since the memo is empty until a handler (or `operator({ memo })`) fills it.
 * Undeclared (as it is here), `memo` is an {@linkcode AnyMemo}: any key, of type `unknown`.
 *
 * @example
 * ```ts
 * import * as kopf from "@kopf/kopf";
 * declare module "@kopf/kopf" {
 *   interface Memo {
 *     greeted?: Set<string>;
 *   }
 * }
 * kopf.on.create("kopfexamples", function greet({ memo, name }) {
 *   memo.greeted ??= new Set();
 *   memo.greeted.add(name);
 * });
 * ```
 */
// Empty on purpose: operators declare their fields here; an index signature would let typos pass.
// deno-lint-ignore no-empty-interface
export interface Memo {}

/**
 * A memo with any keys, each of type `unknown`: what `memo` is in handlers while {@linkcode Memo}
 * declares nothing. An operator that declares some fields and wants any others too can declare
 * `interface Memo extends kopf.AnyMemo { ... }`.
 *
 * @example
 * ```ts
 * import * as kopf from "@kopf/kopf";
 * function visits(memo: kopf.AnyMemo): number {
 *   memo.visits = (typeof memo.visits === "number" ? memo.visits : 0) + 1;
 *   return memo.visits as number;
 * }
 * kopf.on.event("kopfexamples", ({ memo }) => visits(memo));
 * ```
 */
export interface AnyMemo {
  /** Whatever handlers keep there. */
  [key: string]: unknown;
}

/** The type of `memo` in contexts: the declared {@linkcode Memo} if it has fields, else {@linkcode AnyMemo}. */
export type ContextMemo = [keyof Memo] extends [never] ? AnyMemo : Memo;

/** The memo as contexts type it: the same object; only its type depends on what {@linkcode Memo} declares. */
export function contextMemo(memo: Memo): ContextMemo {
  return memo as ContextMemo;
}

/**
 * The `spec` of an object type: its declared `spec` (an empty object when the type has none);
 * any record for untyped objects.
 */
export type SpecOf<T> = string extends keyof T ? Readonly<Record<string, unknown>>
  : T extends { spec?: infer S } ? ("spec" extends keyof T ? Readonly<NonNullable<S>> : Readonly<Record<string, never>>)
  : Readonly<Record<string, never>>;

/**
 * The `status` of an object type: its declared `status` (an empty object when the type has none);
 * any record for untyped objects.
 */
export type StatusOf<T> = string extends keyof T ? Readonly<Record<string, unknown>>
  : T extends { status?: infer S }
    ? ("status" extends keyof T ? Readonly<NonNullable<S>> : Readonly<Record<string, never>>)
  : Readonly<Record<string, never>>;

/**
 * What change handlers get as `old` and `new` for an object type: the object without its status
 * (`null` where there is none: `old` on creation, `new` on deletion); `unknown` for untyped objects.
 */
export type EssenceOf<T> = string extends keyof T ? unknown : Readonly<Omit<T, "status">> | null;

/**
 * What every handler of an object receives, admission handlers included: there the object may be
 * one not stored yet, without a uid (and without a name, when made from `generateName`).
 * `T` is the object type, as for {@linkcode ResourceContext}.
 */
export interface ObjectContext<T = KubernetesObject> {
  /** The object (read-only). */
  readonly body: Readonly<T>;
  /** `body.spec` (an empty object when absent). */
  readonly spec: SpecOf<T>;
  /** `body.metadata`. */
  readonly meta: Readonly<ObjectMeta>;
  /** `body.status` (an empty object when absent). */
  readonly status: StatusOf<T>;
  /** `metadata.uid`. */
  readonly uid: string | undefined;
  /** `metadata.name`. */
  readonly name: string | undefined;
  /** `metadata.namespace`; `undefined` for cluster-scoped objects. */
  readonly namespace: string | undefined;
  /** `metadata.labels` (an empty object when absent). */
  readonly labels: Readonly<Record<string, string>>;
  /** `metadata.annotations` (an empty object when absent). */
  readonly annotations: Readonly<Record<string, string>>;
  /** Changes to send in this cycle's patch. */
  readonly patch: Patch;
  /** A logger whose lines name the object. */
  readonly logger: HandlerLogger;
  /** Per-object memory. */
  readonly memo: ContextMemo;
  /** The discovered resource the object belongs to. */
  readonly resource: Resource;
  /** The handler's `param` option. */
  readonly param: unknown;
  /** The operator's in-memory indexes by id (`kopf.index`), always current. */
  readonly indices: Indices;
  /** The operator's API client: typed get/list/create/patch/apply/delete/watch with its credentials. */
  readonly api: KubeApi;
}

/**
 * What every resource handler receives: the object as the API server stores it, so its `name` and
 * `uid` are strings. `T` is the object type: the model of a built-in resource selected by its
 * plural (`"configmaps"` -> `V1ConfigMap`), the type argument of the registration
 * (`kopf.on.create<KopfExample>(...)`), or any object. `N` is the type of `namespace`: `string` for
 * namespaced built-in resources, `undefined` for cluster-scoped ones (`"nodes"`), either for
 * custom resources (their scope is in their CRD, which the types do not see).
 */
export interface ResourceContext<T = KubernetesObject, N extends string | undefined = string | undefined>
  extends ObjectContext<T> {
  /** The object as the event delivered it (read-only). */
  readonly body: Readonly<Stored<T>>;
  /** `body.metadata`. */
  readonly meta: Readonly<ObjectMeta & StoredMetadata>;
  /** `metadata.uid`. */
  readonly uid: string;
  /** `metadata.name`. */
  readonly name: string;
  /** `metadata.namespace`; `undefined` for cluster-scoped objects. */
  readonly namespace: N;
}

/** What event handlers (`on.event`) receive. */
export interface EventContext<T = KubernetesObject, N extends string | undefined = string | undefined>
  extends ResourceContext<T, N> {
  /** The raw watch event: `{ type, object }`. */
  readonly event: { readonly type: string | null; readonly object: Readonly<Stored<T>> };
  /** The event type: `ADDED`, `MODIFIED`, `DELETED`, or `null` for objects found by the initial listing. */
  readonly type: string | null;
}

/** What daemons and timers receive. */
export interface BackgroundContext<T = KubernetesObject, N extends string | undefined = string | undefined>
  extends ResourceContext<T, N> {
  /**
   * Aborted when the daemon or timer must stop (the object is deleted or stops matching, the
   * operator stops); `stopped.reason` is a {@linkcode StopReason}. Pass it to `kopf.sleep()`.
   */
  readonly stopped: AbortSignal;
  /**
   * Aborted when `stopped` is, and at the deadline of the handler's `timeout` (for timers also
   * `settings.execution.handlerTimeout`), counted from `started`: the call then fails with a
   * `HandlerTimeoutError` (for good), and a call still running is left behind.
   */
  readonly signal: AbortSignal;
  /** How many attempts failed before this one (0 after a success). */
  readonly retry: number;
  /** When the first of these attempts started. */
  readonly started: Date;
  /** Milliseconds since `started`. */
  readonly runtime: number;
}

/** What daemons (`kopf.daemon`) receive. */
export type DaemonContext<T = KubernetesObject, N extends string | undefined = string | undefined> = BackgroundContext<
  T,
  N
>;

/** What timers (`kopf.timer`) receive. */
export type TimerContext<T = KubernetesObject, N extends string | undefined = string | undefined> = BackgroundContext<
  T,
  N
>;

/** What index handlers (`kopf.index`) receive. */
export type IndexContext<T = KubernetesObject, N extends string | undefined = string | undefined> = ResourceContext<
  T,
  N
>;

/**
 * Builds the part of the context that every resource handler gets. The body is one that the API
 * server gave (listed or watched), so it has a name, a uid and the rest of {@linkcode StoredMetadata};
 * admission reviews, whose objects may lack them, override `name` and `uid` with what there is.
 */
export function resourceContext(
  body: KubernetesObject,
  extra: { patch: Patch; logger: HandlerLogger; memo: Memo; resource: Resource; param: unknown; indices: Indices },
): ResourceContext {
  const stored = body as Stored<KubernetesObject>;
  const meta = stored.metadata;
  return {
    body: stored,
    spec: (body.spec ?? {}) as Record<string, unknown>,
    meta,
    status: (body.status ?? {}) as Record<string, unknown>,
    uid: meta.uid,
    name: meta.name,
    namespace: meta.namespace,
    labels: meta.labels ?? {},
    annotations: meta.annotations ?? {},
    api: currentApi(),
    // Named one by one, not spread: a spread after the first member is a copy through V8's runtime per context.
    patch: extra.patch,
    logger: extra.logger,
    // Cast here, not by `contextMemo()`: a call more in every handler's context
    // (docs/performance/cpu.md, "Fewer functions, a second pass").
    memo: extra.memo as ContextMemo,
    resource: extra.resource,
    param: extra.param,
    indices: extra.indices,
  };
}
