/**
 * `operator()`: connects, discovers the resources the handlers select, runs one watch stream per
 * resource and namespace, feeds the events into per-object queues, and stops cleanly.
 *
 * @module
 */

import { getLogger } from "@logtape/logtape";
import { ApiClient } from "../api/client.ts";
import type { Credentials } from "../api/credentials.ts";
import { loadDefaultCredentials } from "../api/default_credentials.ts";
import { Discovery } from "../api/discovery.ts";
import { Watcher, type WatchHealth } from "../api/watching.ts";
import { ObjectQueues } from "../engines/queueing.ts";
import type { ChangeHandler, EventHandler } from "../handling/handlers.ts";
import { defaultRegistry, type Registry } from "../handling/registry.ts";
import { groupsToScan } from "../model/selector.ts";
import { type Resource, resourceName } from "../model/resource.ts";
import { Settings } from "../settings/settings.ts";
import { type ObjectMemory, type ObjectWork, processObject } from "./processing.ts";

const logger = getLogger(["kopf", "operator"]);

/** Options of {@linkcode operator}. */
export interface OperatorOptions {
  /** Namespaces to serve (exact names); ignored when `clusterwide`. */
  namespaces?: string[];
  /** Serve all namespaces. Also the mode when no namespaces are given. */
  clusterwide?: boolean;
  /** Run without peering (the only mode so far). */
  standalone?: boolean;
  /** The handlers to run; the default registry otherwise. */
  registry?: Registry;
  /** Settings; Kopf's defaults otherwise. */
  settings?: Settings;
  /** The credentials; otherwise the kubeconfig (`kubeconfig`, `context`) or the in-cluster service account. */
  credentials?: Credentials;
  /** A kubeconfig file to use instead of `$KUBECONFIG` or `~/.kube/config`. */
  kubeconfig?: string;
  /** A kubeconfig context to use instead of the current one. */
  context?: string;
  /** Stops the operator when aborted; SIGINT and SIGTERM stop it too. */
  signal?: AbortSignal;
  /** Called once every stream has listed its objects. */
  ready?: (operator: RunningOperator) => void;
}

/** What a running operator shows of itself (to `ready`, and to tests). */
export interface RunningOperator {
  /** The API client, with its request counters. */
  readonly client: ApiClient;
  /** The health of each watch stream, by a name like `kopfexamples.v1.kopf.dev in ns`. */
  readonly streams: ReadonlyMap<string, WatchHealth>;
}

/**
 * Runs an operator until the signal aborts or SIGINT/SIGTERM arrives.
 *
 * @example
 * ```ts ignore
 * import * as kopf from "@kopf/kopf";
 * kopf.on.create("kopfexamples", function createFn() { return { message: "hello" }; });
 * await kopf.operator({ clusterwide: true, standalone: true });
 * ```
 */
export async function operator(options: OperatorOptions = {}): Promise<void> {
  const registry = options.registry ?? defaultRegistry;
  const settings = options.settings ?? new Settings();
  const stop = new AbortController();
  const signals: Deno.Signal[] = ["SIGINT", "SIGTERM"];
  const onSignal = (name: Deno.Signal) => () => {
    logger.info("Signal {name} is received. Operator is stopping.", { name });
    stop.abort(new Error(`${name} received`));
  };
  const listeners = signals.map((name) => [name, onSignal(name)] as const);
  for (const [name, listener] of listeners) Deno.addSignalListener(name, listener);
  const onAbort = () => {
    logger.info("Stop-flag is raised. Operator is stopping.");
    stop.abort(options.signal?.reason);
  };
  if (options.signal?.aborted) return;
  options.signal?.addEventListener("abort", onAbort, { once: true });

  const credentials = options.credentials ??
    await loadDefaultCredentials({ kubeconfig: options.kubeconfig, context: options.context });
  using client = new ApiClient(credentials, { networking: settings.networking });
  try {
    if (!options.standalone) {
      logger.warn("Peering is not implemented yet; running as if --standalone were given.");
    }
    const streams = new Map<string, WatchHealth>();
    const selectors = registry.selectors;
    const discovery = new Discovery(client, { groups: groupsToScan(selectors) });
    const patching = registry.handlers.filter((handler) => handler.kind === "change").map((handler) =>
      handler.selector
    );
    const { served } = await discovery.resolve(selectors, { patching, signal: stop.signal });
    // Handlers with equal selectors share one resolution; the registry lists each selector once.
    const resolved = new Map([...served].map(([selector, resources]) => [selector.toString(), resources]));

    const byResource = new Map<string, { resource: Resource; events: EventHandler[]; creates: ChangeHandler[] }>();
    for (const handler of registry.handlers) {
      for (const resource of resolved.get(handler.selector.toString()) ?? []) {
        const key = resourceName(resource);
        const entry = byResource.get(key) ?? { resource, events: [], creates: [] };
        if (handler.kind === "event") entry.events.push(handler);
        else entry.creates.push(handler);
        byResource.set(key, entry);
      }
    }

    const namespaces = options.clusterwide || !options.namespaces?.length ? [null] : options.namespaces;
    if (!options.clusterwide && !options.namespaces?.length) {
      logger.warn("No namespaces are given (-n NS or -A); serving all namespaces.");
    }
    const running: Promise<void>[] = [];
    const listed: Promise<void>[] = [];
    const queues: ObjectQueues<ObjectWork>[] = [];
    for (const { resource, events, creates } of byResource.values()) {
      const scopes = resource.namespaced ? namespaces : [null];
      for (const namespace of scopes) {
        const stream = serveResource({ client, resource, namespace, settings, events, creates, signal: stop.signal });
        streams.set(stream.name, stream.health);
        running.push(stream.done);
        listed.push(stream.listed);
        queues.push(stream.queues);
      }
    }
    if (running.length === 0) logger.warn("There is nothing to serve: no handler's resource was found.");
    Promise.all(listed).then(() => {
      if (!stop.signal.aborted) options.ready?.({ client, streams });
    });
    await new Promise<void>((resolve) => stop.signal.addEventListener("abort", () => resolve(), { once: true }));
    await Promise.allSettled(running);
    await Promise.all(queues.map((queue) => queue.drain(AbortSignal.timeout(5000))));
  } finally {
    options.signal?.removeEventListener("abort", onAbort);
    for (const [name, listener] of listeners) Deno.removeSignalListener(name, listener);
    logger.info("Operator has stopped.");
  }
}

/** One stream and the processing of its objects. */
function serveResource(deps: {
  client: ApiClient;
  resource: Resource;
  namespace: string | null;
  settings: Settings;
  events: EventHandler[];
  creates: ChangeHandler[];
  signal: AbortSignal;
}): {
  name: string;
  health: WatchHealth;
  done: Promise<void>;
  listed: Promise<void>;
  queues: ObjectQueues<ObjectWork>;
} {
  const { client, resource, namespace, settings, signal } = deps;
  const watcher = new Watcher(client, resource, { namespace, settings: settings.watching, signal });
  const name = resourceName(resource) + (namespace ? ` in ${namespace}` : "");
  const memories = new Map<string, ObjectMemory>();
  const wakeups = new Map<string, ReturnType<typeof setTimeout>>();
  const cycle = { client, resource, settings, eventHandlers: deps.events, createHandlers: deps.creates, signal };

  const queues: ObjectQueues<ObjectWork> = new ObjectQueues<ObjectWork>(async (uid, work) => {
    let memory = memories.get(uid);
    if (!memory) memories.set(uid, memory = { memo: {} });
    const outcome = await processObject(work, memory, cycle);
    if (work.kind === "event" && work.type === "DELETED") {
      memories.delete(uid);
      clearTimeout(wakeups.get(uid));
      wakeups.delete(uid);
      return;
    }
    clearTimeout(wakeups.get(uid));
    wakeups.delete(uid);
    if (outcome.wakeupAfter !== undefined && !signal.aborted) {
      // Re-check the latest state of the object later: retries of delayed handlers, or a
      // consistency wait whose echo never came. No write is needed to wake up.
      const object = work.object;
      wakeups.set(uid, setTimeout(() => queues.push(uid, { kind: "wakeup", object }), outcome.wakeupAfter * 1000));
    }
  }, (uid, error) => logger.error("Processing of {uid} failed: {error}", { uid, error }));

  let markListed: () => void = () => {};
  const listed = new Promise<void>((resolve) => markListed = resolve);
  const done = (async () => {
    for await (const event of watcher) {
      if (event.type === "LISTED") {
        markListed();
        continue;
      }
      const uid = event.object.metadata.uid;
      if (!uid) continue;
      // A newer state supersedes the state a pending wake-up carries.
      const pending = wakeups.get(uid);
      if (pending !== undefined) {
        clearTimeout(pending);
        wakeups.delete(uid);
      }
      queues.push(uid, { kind: "event", type: event.type, object: event.object });
    }
    for (const timer of wakeups.values()) clearTimeout(timer);
  })();
  return { name, health: watcher.health, done, listed, queues };
}
