/**
 * The client that handlers and scripts use (`api` in handler contexts, `kopf.connect()` outside):
 * typed get/list/create/replace/patch/apply/delete/watch over the operator's own {@linkcode ApiClient} --
 * its credentials, retries, rate rules and request counters -- with resources named as handlers
 * name them and resolved through discovery, and errors as the framework's typed `ApiError`s.
 *
 * @module
 */

import type { ApiClient } from "./client.ts";
import { Discovery } from "./discovery.ts";
import { ApiNotFoundError } from "./errors.ts";
import { resourcePath } from "./paths.ts";
import { ResourceLookup } from "./resource_lookup.ts";
import { Watcher, type WatchEvent } from "./watching.ts";
import type { KubernetesList, KubernetesObject, Stored } from "../model/body.ts";
import type { HandledObject } from "../model/builtin_types.ts";
import { apiVersionOf, type Resource } from "../model/resource.ts";
import { WatchingSettings } from "../settings/watching.ts";
import { linkSignals } from "../utils/signals.ts";
import type {
  ApiApplyOptions,
  ApiCallOptions,
  ApiCreateOptions,
  ApiDeleteOptions,
  ApiListOptions,
  ApiObject,
  ApiPatchOptions,
  ApiReplaceOptions,
  ApiWatchEvent,
  ApiWatchOptions,
  DryRunFields,
  NotDryRun,
  ObjectList,
  PatchType,
  ResourceArg,
} from "./kube_api_options.ts";

/** Where a {@linkcode KubeApi} gets its connection: the operator's, or one of its own. */
export interface KubeApiSource {
  /** The client; throws with an explanation if there is none (yet). */
  client(): ApiClient;
  /** The operator's discovery, if any: its cached resources are used first (it is never asked to scan). */
  discovery?(): { readonly cached: readonly Resource[] | undefined } | undefined;
  /** The watch settings of `watch`; Kopf's defaults when absent. */
  watching?(): WatchingSettings;
}

const CONTENT_TYPES: Record<PatchType, string> = {
  merge: "application/merge-patch+json",
  json: "application/json-patch+json",
  strategic: "application/strategic-merge-patch+json",
  apply: "application/apply-patch+yaml",
};

/** The field manager of server-side apply when none is given. */
export const DEFAULT_FIELD_MANAGER = "kopf";

const PAGE_SIZE = 500;

/**
 * A typed Kubernetes client: the `api` of handler contexts and the result of `kopf.connect()`.
 * Built-in resources named by their plural give typed objects (`api.get("pods", ...)` is a
 * `V1Pod`); objects given to `create`/`apply` keep their type. Failures are `kopf.ApiError`s
 * (`ApiNotFoundError`, `ApiConflictError`, `ApiUnprocessableError`, ...) with `code` and `reason`.
 *
 * @example
 * ```ts ignore
 * const api = await kopf.connect();
 * const cm = await api.get("configmaps", "x", { namespace: "default" }); // V1ConfigMap | null
 * await api.patch("configmaps", "x", { data: { a: "1" } }, { namespace: "default" });
 * ```
 */
export class KubeApi {
  readonly #source: KubeApiSource;
  #lookup: ResourceLookup | undefined;
  #own: Discovery | undefined;
  #ownOf: ApiClient | undefined;

  /** Creates a client over a connection source; nothing is requested until the first call. */
  constructor(source: KubeApiSource) {
    this.#source = source;
  }

  /** The framework's client underneath: its request counters show what this client sent too. */
  get client(): ApiClient {
    return this.#source.client();
  }

  /**
   * Reads one object; `null` if it does not exist (404). Built-in plurals give their model type;
   * custom resources take one: `api.get<KopfExample>("kopfexamples", name, { namespace })`.
   */
  async get<T = never, R extends ResourceArg = ResourceArg>(
    resource: R,
    name: string,
    options: ApiCallOptions = {},
  ): Promise<Stored<HandledObject<T, R>> | null> {
    const target = await this.#resolve(resource, options.signal);
    try {
      const object = await this.client.request<KubernetesObject>({
        path: resourcePath(target, { namespace: this.#namespace(target, options.namespace, name), name }),
        signal: options.signal,
      });
      return object as Stored<HandledObject<T, R>>;
    } catch (error) {
      if (error instanceof ApiNotFoundError) return null;
      throw error;
    }
  }

  /**
   * Lists objects of one namespace (or of all, without `namespace`), all pages, with label and
   * field selectors; each item gets the apiVersion and kind that lists leave out.
   */
  async list<T = never, R extends ResourceArg = ResourceArg>(
    resource: R,
    options: ApiListOptions = {},
  ): Promise<ObjectList<Stored<HandledObject<T, R>>>> {
    const target = await this.#resolve(resource, options.signal);
    const path = resourcePath(target, { namespace: target.namespaced ? options.namespace : null });
    const items: KubernetesObject[] = [];
    let first: KubernetesList | undefined;
    let token: string | undefined;
    do {
      const page: KubernetesList = await this.client.request<KubernetesList>({
        path,
        query: {
          labelSelector: options.labelSelector,
          fieldSelector: options.fieldSelector,
          limit: options.pageSize ?? PAGE_SIZE,
          continue: token,
        },
        verb: "list",
        signal: options.signal,
      });
      first ??= page;
      for (const item of page.items ?? []) {
        item.apiVersion ??= apiVersionOf(target);
        item.kind ??= target.kind;
        items.push(item);
      }
      token = page.metadata?.continue || undefined;
    } while (token);
    return {
      apiVersion: first?.apiVersion,
      kind: first?.kind,
      metadata: { resourceVersion: first?.metadata?.resourceVersion },
      items: items as Stored<HandledObject<T, R>>[],
    };
  }

  /**
   * Creates an object (POST); its resource is found by its apiVersion and kind. Returns the created
   * object, with its name (also one made from `generateName`), uid, resourceVersion and creationTimestamp.
   */
  create<T extends ApiObject>(object: T, options?: ApiCreateOptions & NotDryRun): Promise<Stored<T>>;
  /** A dry run (`dryRun: true`): the answer has no `resourceVersion`, since nothing was stored. */
  create<T extends ApiObject>(object: T, options: ApiCreateOptions): Promise<Stored<T, DryRunFields>>;
  async create<T extends ApiObject>(object: T, options: ApiCreateOptions = {}): Promise<Stored<T, DryRunFields>> {
    const target = await this.#resolveObject(object, options.signal);
    const what = object.metadata?.name ?? object.metadata?.generateName ?? "the object";
    const namespace = this.#namespace(target, options.namespace ?? object.metadata?.namespace, what);
    return await this.client.request<Stored<T, DryRunFields>>({
      method: "POST",
      path: resourcePath(target, { namespace }),
      query: { fieldManager: options.fieldManager, dryRun: options.dryRun ? "All" : undefined },
      body: object,
      signal: options.signal,
    });
  }

  /**
   * Replaces an object (PUT): the object given becomes the whole object, or the whole subresource
   * with `subresource: "status"`; its resource is found by its apiVersion and kind. Fields it leaves
   * out are removed, whoever set them (unlike `apply`, which removes only its own manager's). With
   * `metadata.resourceVersion` (as read), the write succeeds only if nobody changed the object since:
   * else the server answers 409 and this throws an `ApiConflictError` -- read it again and redo the
   * change. Without it, the object is overwritten unconditionally. Returns the replaced object, with
   * its new resourceVersion.
   *
   * @example
   * ```ts ignore
   * const cm = await api.get("configmaps", "settings", { namespace });
   * if (cm) {
   *   try {
   *     await api.replace({ ...cm, data: { mode: "strict" } }); // cm.metadata.resourceVersion guards it
   *   } catch (error) {
   *     if (!(error instanceof kopf.ApiConflictError)) throw error; // changed meanwhile: read again, retry
   *   }
   * }
   * ```
   */
  replace<T extends ApiObject>(object: T, options?: ApiReplaceOptions & NotDryRun): Promise<Stored<T>>;
  /** A dry run (`dryRun: true`): the answer may lack a `resourceVersion` (where the resource creates on PUT). */
  replace<T extends ApiObject>(object: T, options: ApiReplaceOptions): Promise<Stored<T, DryRunFields>>;
  async replace<T extends ApiObject>(object: T, options: ApiReplaceOptions = {}): Promise<Stored<T, DryRunFields>> {
    const target = await this.#resolveObject(object, options.signal);
    const name = object.metadata?.name;
    if (!name) throw new TypeError("replace() needs metadata.name: a replacement addresses one object by name.");
    const namespace = this.#namespace(target, options.namespace ?? object.metadata?.namespace, name);
    return await this.client.request<Stored<T, DryRunFields>>({
      method: "PUT",
      path: resourcePath(target, { namespace, name, subresource: options.subresource }),
      query: { fieldManager: options.fieldManager, dryRun: options.dryRun ? "All" : undefined },
      body: object,
      signal: options.signal,
    });
  }

  /**
   * Patches an object: a JSON merge patch by default; `type` picks a JSON patch (an array of
   * operations), a strategic merge patch (built-in resources only) or a server-side apply.
   */
  patch<T = never, R extends ResourceArg = ResourceArg>(
    resource: R,
    name: string,
    patch: object,
    options?: ApiPatchOptions & NotDryRun,
  ): Promise<Stored<HandledObject<T, R>>>;
  /** A dry run (`dryRun: true`): the answer lacks a `resourceVersion` where an apply-patch would create the object. */
  patch<T = never, R extends ResourceArg = ResourceArg>(
    resource: R,
    name: string,
    patch: object,
    options: ApiPatchOptions,
  ): Promise<Stored<HandledObject<T, R>, DryRunFields>>;
  async patch<T = never, R extends ResourceArg = ResourceArg>(
    resource: R,
    name: string,
    patch: object,
    options: ApiPatchOptions = {},
  ): Promise<Stored<HandledObject<T, R>, DryRunFields>> {
    const target = await this.#resolve(resource, options.signal);
    const type = options.type ?? "merge";
    const namespace = this.#namespace(target, options.namespace, name);
    return await this.client.request<Stored<HandledObject<T, R>, DryRunFields>>({
      method: "PATCH",
      path: resourcePath(target, { namespace, name, subresource: options.subresource }),
      query: {
        fieldManager: options.fieldManager ?? (type === "apply" ? DEFAULT_FIELD_MANAGER : undefined),
        force: type === "apply" && options.force ? "true" : undefined,
        dryRun: options.dryRun ? "All" : undefined,
      },
      body: patch,
      contentType: CONTENT_TYPES[type],
      signal: options.signal,
    });
  }

  /**
   * Server-side apply: the object becomes the field manager's intent (created if absent); fields
   * it leaves out that the manager set before are removed. The field manager is `kopf` unless given.
   */
  apply<T extends ApiObject>(object: T, options?: ApiApplyOptions & NotDryRun): Promise<Stored<T>>;
  /** A dry run (`dryRun: true`): the answer has no `resourceVersion` if the object did not exist. */
  apply<T extends ApiObject>(object: T, options: ApiApplyOptions): Promise<Stored<T, DryRunFields>>;
  async apply<T extends ApiObject>(object: T, options: ApiApplyOptions = {}): Promise<Stored<T, DryRunFields>> {
    const target = await this.#resolveObject(object, options.signal);
    const name = object.metadata?.name;
    if (!name) throw new TypeError("apply() needs metadata.name: server-side apply addresses one object by name.");
    const namespace = this.#namespace(target, options.namespace ?? object.metadata?.namespace, name);
    return await this.client.request<Stored<T, DryRunFields>>({
      method: "PATCH",
      path: resourcePath(target, { namespace, name, subresource: options.subresource }),
      query: {
        fieldManager: options.fieldManager ?? DEFAULT_FIELD_MANAGER,
        force: options.force ? "true" : undefined,
        dryRun: options.dryRun ? "All" : undefined,
      },
      body: object,
      contentType: CONTENT_TYPES.apply,
      signal: options.signal,
    });
  }

  /** Deletes an object, with a propagation policy and preconditions if given; a 404 is an `ApiNotFoundError`. */
  async delete(resource: ResourceArg, name: string, options: ApiDeleteOptions = {}): Promise<void> {
    const target = await this.#resolve(resource, options.signal);
    const body: Record<string, unknown> = { apiVersion: "v1", kind: "DeleteOptions" };
    if (options.propagationPolicy) body.propagationPolicy = options.propagationPolicy;
    if (options.preconditions) body.preconditions = options.preconditions;
    if (options.gracePeriodSeconds !== undefined) body.gracePeriodSeconds = options.gracePeriodSeconds;
    if (options.dryRun) body.dryRun = ["All"];
    await this.client.request({
      method: "DELETE",
      path: resourcePath(target, { namespace: this.#namespace(target, options.namespace, name), name }),
      body,
      signal: options.signal,
    });
  }

  /**
   * Watches a resource with the framework's watch layer: lists, then watches from there with
   * bookmarks; resumes after disconnects and API server restarts, relists after 410 Gone, never
   * gives up. The iteration ends when the signal aborts or the loop breaks.
   *
   * @example
   * ```ts ignore
   * for await (const event of api.watch("configmaps", { namespace: "default", signal })) {
   *   if (event.type !== "LISTED") console.log(event.type, event.object.metadata?.name);
   * }
   * ```
   */
  async *watch<T = never, R extends ResourceArg = ResourceArg>(
    resource: R,
    options: ApiWatchOptions = {},
  ): AsyncGenerator<ApiWatchEvent<Stored<HandledObject<T, R>>>, void, undefined> {
    const target = await this.#resolve(resource, options.signal);
    const stop = new AbortController();
    using linked = linkSignals(stop.signal, options.signal);
    const watcher = new Watcher(this.client, target, {
      namespace: target.namespaced ? options.namespace : null,
      labelSelector: options.labelSelector,
      fieldSelector: options.fieldSelector,
      settings: this.#source.watching?.() ?? new WatchingSettings(),
      signal: linked.signal,
    });
    try {
      for await (const event of watcher) yield event as WatchEvent as ApiWatchEvent<Stored<HandledObject<T, R>>>;
    } finally {
      stop.abort();
    }
  }

  #resolve(resource: ResourceArg, signal: AbortSignal | undefined): Promise<Resource> {
    return this.#lookups().bySelector(resource, signal);
  }

  #resolveObject(object: ApiObject, signal: AbortSignal | undefined): Promise<Resource> {
    return this.#lookups().byObject(object, signal);
  }

  /** The lookup over the current client: a new client (e.g. an operator's restart) gets a new own discovery. */
  #lookups(): ResourceLookup {
    const client = this.client;
    if (!this.#lookup || this.#ownOf !== client) {
      this.#ownOf = client;
      this.#own = new Discovery(client);
      this.#lookup = new ResourceLookup({ shared: () => this.#source.discovery?.(), own: this.#own });
    }
    return this.#lookup;
  }

  /** The namespace of a request to a named object (`name`), which a namespaced resource requires. */
  #namespace(target: Resource, namespace: string | null | undefined, name: string): string | null {
    if (!target.namespaced) return null;
    if (namespace) return namespace;
    throw new TypeError(
      `${target.plural} are namespaced: pass { namespace } (or set metadata.namespace) to address ${name}.`,
    );
  }
}
