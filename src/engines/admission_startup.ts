/**
 * The operator's entry point to admission control and conversion webhooks: checks that a webhook
 * server is configured when admission handlers or converters exist, runs the server with the
 * review-answering function (admission and conversion reviews alike), keeps the managed webhook
 * configurations and the CRDs' conversion webhooks in line with the server's endpoint and the
 * served resources, and cleans up the non-persistent admission webhooks when closed.
 *
 * @module
 */

import { getLogger } from "@logtape/logtape";
import type { ApiClient } from "../api/client.ts";
import { discoverResources } from "../api/discovery.ts";
import type { AdmissionHandler } from "../handling/admission_handler.ts";
import type { Memo } from "../handling/context.ts";
import type { Registry } from "../handling/registry.ts";
import type { AdmissionServer, AdmissionServerFn, WebhookClientConfig, WebhookFn } from "../model/admission.ts";
import { isConversionReview } from "../model/conversion_review.ts";
import type { Indices } from "../model/index_store.ts";
import { type Resource, resourceName } from "../model/resource.ts";
import { groupsToScan } from "../model/selector.ts";
import type { Settings } from "../settings/settings.ts";
import { admissionFn, AdmissionMemories } from "./admission.ts";
import { conversionFn, type ConversionTarget, resolveTargets } from "./conversion.ts";
import { CrdConversionManager } from "./crd_conversion.ts";
import { WebhookConfigurationManager } from "./webhook_configuration.ts";

const logger = getLogger(["kopf", "admission"]);

/** Kopf's message when admission handlers exist but no server is set. */
export const NO_SERVER_MESSAGE = "Admission handlers exist, but no admission server/tunnel is configured in " +
  "`settings.admission.server`. More: https://kopf.readthedocs.io/en/stable/admission/";

/** The message when converters exist but no server is set. */
export const NO_CONVERSION_SERVER_MESSAGE = "Converters (kopf.on.conversion) exist, but no webhook server/tunnel " +
  "is configured in `settings.admission.server`: the API server needs one to call them (see docs/crds.md).";

/** Options of {@linkcode startAdmission}. */
export interface StartAdmissionOptions {
  /** The registry whose admission handlers (`registry.webhooks`) and converters (`registry.converters`) are served. */
  registry: Registry;
  /** The settings: `settings.admission.server` and `settings.admission.managed` are read here, once. */
  settings: Settings;
  /** The API client, for the managed configurations (and for discovery if `resources` is absent). */
  client: ApiClient;
  /**
   * The discovered resources (all groups the operator scanned). Absent: the groups that the
   * admission handlers' selectors name are discovered here. Resources need no `list`/`watch` verbs.
   */
  resources?: readonly Resource[];
  /** The operator's memo: admission memos start as shallow copies of it. */
  memo?: Memo;
  /** The per-object memos the operator keeps, by uid, to share them with admission handlers. */
  memoOf?: (uid: string) => Memo | undefined;
  /** The operator's indexes, given to handlers as `indices`. */
  indices?: Indices;
  /**
   * The operator's stop: cancels the discovery while starting, and once started, closes as
   * `close()` does (cleaning up the non-persistent webhooks, then stopping the server).
   */
  signal?: AbortSignal;
}

/** A running admission machinery, as {@linkcode startAdmission} returns it. */
export interface RunningAdmission extends AsyncDisposable {
  /** Whether anything runs: `false` when there are neither admission handlers nor converters. */
  readonly active: boolean;
  /**
   * Resolves once the server listens and (if managed) the configurations and the CRDs' conversion
   * webhooks are written for its first endpoint; rejects if that fails (like `done`).
   */
  readonly ready: Promise<void>;
  /**
   * Settles when the server stops: resolves after `close()` (or the signal), rejects if the server
   * fails or ends on its own, or if writing the managed configurations fails (e.g. HTTP 403) --
   * the operator should then stop with that error.
   */
  readonly done: Promise<void>;
  /** The server's latest client config (its URL and CA), once it has reported one. */
  readonly clientConfig: WebhookClientConfig | undefined;
  /** The function that answers reviews (what the server calls), e.g. for tests. */
  readonly fn: WebhookFn;
  /** Tells of newly discovered resources (CRDs added, changed, removed): the webhooks' rules follow. */
  update(resources: readonly Resource[]): Promise<void>;
  /**
   * Removes the non-persistent webhooks from the managed configurations (failures are logged),
   * then stops the server and waits for it. Idempotent.
   */
  close(): Promise<void>;
}

/** The resources each handler serves, by handler id; unresolved and ambiguous selectors are warned about. */
function resolve(handlers: readonly AdmissionHandler[], resources: readonly Resource[]): Map<string, Resource[]> {
  const resolved = new Map<string, Resource[]>();
  for (const handler of handlers) {
    const selection = handler.selector.select(resources);
    if (selection.ambiguous.length) {
      logger.warn("Ambiguous resources will not be served to the admission handler {id}: {resources}", {
        id: handler.id,
        resources: selection.ambiguous.map(resourceName).join(", "),
      });
    } else if (selection.resources.length === 0) {
      logger.warn("The admission handler {id} serves no resource: {selector} is not found.", {
        id: handler.id,
        selector: String(handler.selector),
      });
    }
    resolved.set(handler.id, selection.resources);
  }
  return resolved;
}

function serveWith(server: AdmissionServer | AdmissionServerFn, fn: WebhookFn, signal: AbortSignal) {
  return typeof server === "function" ? server(fn, signal) : server.serve(fn, signal);
}

/**
 * Runs the server until the signal; each endpoint it reports is configured (`configure`) before
 * `ready` resolves. `done` rejects if the server fails or ends on its own; whoever waits for
 * `ready` learns of a failure before the first endpoint too.
 */
function serveEndpoints(
  server: AdmissionServer | AdmissionServerFn,
  fn: WebhookFn,
  signal: AbortSignal,
  configure: (config: WebhookClientConfig) => Promise<void>,
): { done: Promise<void>; ready: Promise<void> } {
  let markReady: () => void = () => {};
  const ready = new Promise<void>((resolve) => markReady = resolve);
  const done = (async () => {
    for await (const config of serveWith(server, fn, signal)) {
      await configure(config);
      markReady();
    }
    if (!signal.aborted) throw new Error("The admission server has exited unexpectedly.");
  })();
  const readyOrFailed = Promise.race([ready, done.then(() => {})]);
  readyOrFailed.catch(() => {});
  done.catch(() => {}); // observed through `done` by the caller; never an unhandled rejection here
  return { done, ready: readyOrFailed };
}

/** The function that webhook servers call: conversion reviews go to the converters, the rest to admission. */
function dispatch(admit: WebhookFn, convert: (review: unknown) => ReturnType<WebhookFn>): WebhookFn {
  return (review, options) => isConversionReview(review) ? convert(review) : admit(review, options);
}

/** A machinery that runs nothing (no admission handlers, no converters): it is done when closed. */
function idle(fn: WebhookFn): RunningAdmission {
  let release: () => void = () => {};
  const done = new Promise<void>((resolve) => release = resolve);
  const close = () => {
    release();
    return Promise.resolve();
  };
  return {
    active: false,
    ready: Promise.resolve(),
    done,
    clientConfig: undefined,
    fn,
    update: () => Promise.resolve(),
    close,
    [Symbol.asyncDispose]: close,
  };
}

/**
 * Starts admission control and conversion webhooks for an operator. Call it after the startup
 * handlers have run (they may set `settings.admission`) and after the initial discovery (so that
 * no review meets an unknown resource), and `close()` it on the operator's exit before the API
 * client closes.
 *
 * - Neither admission handlers nor converters: nothing starts (`active` is false; `ready`
 *   resolves at once).
 * - Some, but no `settings.admission.server`: throws Kopf's error ({@linkcode NO_SERVER_MESSAGE},
 *   or {@linkcode NO_CONVERSION_SERVER_MESSAGE} for converters alone) -- the operator must fail.
 * - Otherwise the server starts; for every client config it yields (its endpoint), when
 *   `settings.admission.managed` is set, the `ValidatingWebhookConfiguration` and
 *   `MutatingWebhookConfiguration` of that name are created if absent (409 is fine) and their
 *   webhooks replaced: one per admission handler; and the `spec.conversion` of each CRD with
 *   converters is pointed at the server. `close()` leaves only the persistent handlers' webhooks,
 *   and the CRDs' conversion webhooks as they are.
 *
 * @example
 * ```ts ignore
 * const admission = await startAdmission({ registry, settings, client, resources, memo, indices });
 * await admission.ready;                          // listening, configurations written
 * // ... on CRD changes: await admission.update(discovery.cached!);
 * // ... watch admission.done: a rejection is fatal for the operator
 * await admission.close();                        // on exit, before the client closes
 * ```
 */
export async function startAdmission(options: StartAdmissionOptions): Promise<RunningAdmission> {
  const handlers = options.registry.webhooks;
  const converters = options.registry.converters;
  const server = options.settings.admission.server;
  const managed = options.settings.admission.managed;
  const memories = new AdmissionMemories(options.memo ?? {}, { lookup: options.memoOf });
  let resolved = new Map<string, Resource[]>();
  let targets: ConversionTarget[] = [];
  const fn = dispatch(
    admissionFn({ handlers, resources: () => resolved, memories, indices: options.indices ?? ({} as Indices) }),
    conversionFn({ targets: () => targets }),
  );
  if (handlers.length === 0 && converters.length === 0) return idle(fn);
  if (server === null || server === undefined) {
    throw new Error(handlers.length ? NO_SERVER_MESSAGE : NO_CONVERSION_SERVER_MESSAGE);
  }
  const resources = options.resources ??
    await discoverResources(options.client, {
      groups: groupsToScan([...handlers, ...converters].map((handler) => handler.selector)),
      signal: options.signal,
    });
  resolved = resolve(handlers, resources);
  targets = resolveTargets(converters, resources);
  const stop = new AbortController();
  const manager = managed && handlers.length
    ? new WebhookConfigurationManager(options.client, { managed, handlers })
    : undefined;
  const crds = managed && converters.length ? new CrdConversionManager(options.client) : undefined;
  let clientConfig: WebhookClientConfig | undefined;
  // Reconfigurations run one after another, so that an older one never overwrites a newer one.
  let queue: Promise<void> = Promise.resolve();
  const reconfigure = (): Promise<void> => {
    const config = clientConfig;
    if (!config) return Promise.resolve();
    const run = queue.then(async () => {
      await manager?.configure(config, resolved, stop.signal);
      await crds?.configure(config, targets, stop.signal);
    });
    queue = run.catch(() => {});
    return run;
  };
  const { done, ready } = serveEndpoints(server, fn, stop.signal, (config) => {
    clientConfig = config;
    return reconfigure();
  });
  let closing: Promise<void> | undefined;
  const close = (): Promise<void> => {
    closing ??= (async () => {
      options.signal?.removeEventListener("abort", onAbort);
      await queue;
      // The CRDs' conversion webhooks stay: without them, the CRDs' other versions cannot be read at all.
      await manager?.cleanup();
      stop.abort(new Error("admission is closing"));
      await done.catch((error) => logger.debug("The admission server ended with: {error}", { error }));
    })();
    return closing;
  };
  // The operator's stop is a graceful exit: the same as `close()`.
  const onAbort = () => void close();
  if (options.signal?.aborted) void close();
  else options.signal?.addEventListener("abort", onAbort, { once: true });
  return {
    active: true,
    ready,
    done,
    get clientConfig() {
      return clientConfig;
    },
    fn,
    update: (fresh: readonly Resource[]) => {
      resolved = resolve(handlers, fresh);
      targets = resolveTargets(converters, fresh);
      return reconfigure();
    },
    close,
    [Symbol.asyncDispose]: close,
  };
}
