/**
 * `operator()`: runs the startup handlers, connects, serves the liveness endpoint, discovers the
 * resources the handlers select, runs one watch stream per resource and namespace, feeds the
 * events into per-object queues, and stops cleanly: streams, queues, cleanup handlers, Events.
 *
 * @module
 */

import { getLogger } from "@logtape/logtape";
import { ApiClient } from "../api/client.ts";
import type { Credentials } from "../api/credentials.ts";
import type { Vault } from "../api/vault.ts";
import { openVault } from "../handling/login.ts";
import { Discovery } from "../api/discovery.ts";
import { Watcher, type WatchHealth } from "../api/watching.ts";
import { EventPoster } from "../engines/posting.ts";
import { type LivenessEndpoint, LivenessServer, parseLivenessEndpoint } from "../engines/probing.ts";
import { runWithPoster } from "../engines/posting_context.ts";
import { ObjectQueues } from "../engines/queueing.ts";
import { runActivity } from "../handling/activities.ts";
import type { Memo } from "../handling/context.ts";
import type { BackgroundHandler, ChangeHandler, EventHandler, IndexHandler } from "../handling/handlers.ts";
import { OperatorIndexes } from "../engines/indexing.ts";
import type { Indices } from "../model/index_store.ts";
import { ObjectBackground } from "../engines/background.ts";
import { allAtOnce, type Lifecycle } from "../handling/lifecycles.ts";
import { defaultRegistry, type Registry } from "../handling/registry.ts";
import { groupsToScan } from "../model/selector.ts";
import type { KubernetesObject } from "../model/body.ts";
import { type Resource, resourceName } from "../model/resource.ts";
import { ObjectLogger } from "../logging/object_logger.ts";
import { Settings } from "../settings/settings.ts";
import { newMemory, type ObjectMemory, type ObjectWork, processObject } from "./processing.ts";

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
  /** Settings; Kopf's defaults otherwise. Startup handlers may change them. */
  settings?: Settings;
  /** The credentials; otherwise the kubeconfig (`kubeconfig`, `context`) or the in-cluster service account. */
  credentials?: Credentials;
  /** A kubeconfig file to use instead of `$KUBECONFIG` or `~/.kube/config`. */
  kubeconfig?: string;
  /** A kubeconfig context to use instead of the current one. */
  context?: string;
  /** Stops the operator when aborted; SIGINT and SIGTERM stop it too. */
  signal?: AbortSignal;
  /** Which due handlers run per cycle; {@linkcode allAtOnce} (all of them, one patch) by default. */
  lifecycle?: Lifecycle;
  /**
   * The operator's memo: activity handlers get it as `memo`, and each object's memo starts as a
   * shallow copy of it (taken when the operator first sees the object, so after startup).
   */
  memo?: Memo;
  /**
   * A liveness endpoint to serve once the startup handlers have succeeded, e.g.
   * `http://0.0.0.0:8080/healthz` (only `http`; port 0 picks a free one): see `on.probe`.
   */
  liveness?: string;
  /** Called once the startup handlers have succeeded and every stream has listed its objects. */
  ready?: (operator: RunningOperator) => void;
}

/** What a running operator shows of itself (to `ready`, and to tests). */
export interface RunningOperator {
  /** The API client, with its request counters. */
  readonly client: ApiClient;
  /** The health of each watch stream, by a name like `kopfexamples.v1.kopf.dev in ns`. */
  readonly streams: ReadonlyMap<string, WatchHealth>;
  /** The URL of the liveness endpoint (with the actual port), if one is served. */
  readonly liveness?: string;
}

/** Seconds that daemons without a `cancellationTimeout` get to finish when the operator stops. */
const EXIT_GRACE = 5;

/** Exit codes a shell reports for a process killed by these signals (128 + the signal number). */
const KILLED_BY: Partial<Record<Deno.Signal, number>> = { SIGINT: 130, SIGTERM: 143 };

/**
 * Runs an operator until the signal aborts or SIGINT/SIGTERM arrives.
 *
 * Starting: the startup handlers run first (before anything touches the API), then the
 * credentials are loaded, the liveness endpoint is served (if asked), the resources are
 * discovered and the watch streams start; `ready` is called once all of them have listed.
 *
 * Stopping (the first SIGINT/SIGTERM, or `signal`): the watch streams stop, the objects' queues
 * get `settings.batching.exitTimeout` to drain, the liveness endpoint closes, the cleanup handlers run (within
 * `settings.process.cleanupTimeout`), queued Events are posted, and the promise resolves. A
 * second SIGINT/SIGTERM while stopping — or `settings.process.ultimateExitingTimeout` passing
 * after the first — exits the process at once with code 130 (SIGINT) or 143 (SIGTERM), as a
 * shell reports a process killed by that signal.
 *
 * Rejects if the startup handlers fail for good (an {@linkcode ActivityError}), or on a fatal
 * error (credentials, discovery); the cleanup handlers still run in the latter case.
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
  const memo = options.memo ?? {};
  // The indexes exist (empty) from the start, so that every handler, even a startup one, sees them.
  const indexes = new OperatorIndexes(registry.handlers, { settings });
  const endpoint = options.liveness === undefined ? undefined : parseLivenessEndpoint(options.liveness);
  if (options.signal?.aborted) return;

  const stop = new AbortController();
  let ultimate: ReturnType<typeof setTimeout> | undefined;
  const onSignal = (name: Deno.Signal) => () => {
    const code = KILLED_BY[name] ?? 1;
    if (stop.signal.aborted) {
      logger.warn("Signal {name} is received again while stopping. Operator is exiting at once (code {code}).", {
        name,
        code,
      });
      Deno.exit(code);
    }
    logger.info("Signal {name} is received. Operator is stopping.", { name });
    const timeout = settings.process.ultimateExitingTimeout;
    if (timeout !== null) {
      ultimate = setTimeout(() => {
        logger.error(
          "The operator has not stopped within {timeout} s (settings.process.ultimateExitingTimeout); " +
            "exiting at once (code {code}).",
          { timeout, code },
        );
        Deno.exit(code);
      }, timeout * 1000);
      Deno.unrefTimer(ultimate);
    }
    stop.abort(new Error(`${name} received`));
  };
  const listeners = (["SIGINT", "SIGTERM"] as const).map((name) => [name, onSignal(name)] as const);
  for (const [name, listener] of listeners) Deno.addSignalListener(name, listener);
  const onAbort = () => {
    if (stop.signal.aborted) return;
    logger.info("Stop-flag is raised. Operator is stopping.");
    stop.abort(options.signal?.reason);
  };
  options.signal?.addEventListener("abort", onAbort, { once: true });

  try {
    // Startup handlers first: nothing has touched the API yet, and they may change the settings.
    try {
      await runActivity(registry.activities("startup"), {
        activity: "startup",
        settings,
        memo,
        indices: indexes.indices,
        signal: stop.signal,
      });
    } catch (error) {
      if (!stop.signal.aborted) throw error;
      logger.warn(
        "The startup activity is only partially executed: the operator is stopping. " +
          "Cleanup handlers are not run.",
      );
      logger.info("Operator has stopped.");
      return;
    }
    await serve({ ...options, registry, settings, memo, endpoint, indexes }, stop);
  } finally {
    clearTimeout(ultimate);
    options.signal?.removeEventListener("abort", onAbort);
    for (const [name, listener] of listeners) Deno.removeSignalListener(name, listener);
  }
}

/** What `serve` needs: the options, with the defaults resolved. */
type Resolved = OperatorOptions & {
  registry: Registry;
  settings: Settings;
  memo: Memo;
  endpoint?: LivenessEndpoint;
  indexes: OperatorIndexes;
};

/**
 * Everything after the startup handlers: connecting, serving until the stop, stopping, and the
 * cleanup handlers — also after a fatal error, with the poster and client still open for them.
 */
async function serve(options: Resolved, stop: AbortController): Promise<void> {
  const { registry, settings, memo } = options;
  let client: ApiClient | undefined;
  let poster: EventPoster | undefined;
  try {
    // After the startup handlers, before any request: they may prepare what the login handlers use.
    let failure: unknown;
    let vault: Vault;
    try {
      const { kubeconfig, context } = options;
      vault = await openVault(
        { registry, settings, memo, indices: options.indexes.indices, signal: stop.signal, kubeconfig, context },
        options.credentials,
        (error) => {
          failure ??= error;
          stop.abort(error);
        },
      );
    } catch (error) {
      if (!stop.signal.aborted) throw error;
      logger.warn("The initial authentication is interrupted: the operator is stopping.");
      return;
    }
    client = new ApiClient(vault, { networking: settings.networking });
    // Explicit events and posted log lines of everything started below find this operator's poster.
    poster = new EventPoster(client, settings.posting);
    await runWithPoster(poster, () => watch(options, client!, stop));
    if (failure !== undefined) throw failure;
  } finally {
    try {
      const clean = () => cleanup(registry, settings, memo, options.indexes.indices);
      await (poster ? runWithPoster(poster, clean) : clean());
    } finally {
      await poster?.close();
      client?.[Symbol.dispose]();
      // Failures before connecting (e.g. credentials) are reported by the caller alone.
      if (client) logger.info("Operator has stopped.");
    }
  }
}

/**
 * Serves the liveness endpoint, discovers the resources, runs the streams until the stop, and
 * stops them: streams first, then the objects' queues (up to `settings.batching.exitTimeout`),
 * then the endpoint.
 */
async function watch(options: Resolved, client: ApiClient, stop: AbortController): Promise<void> {
  const { registry, settings, memo } = options;
  const streams = new Map<string, WatchHealth>();
  const running: Promise<void>[] = [];
  const queues: ObjectQueues<ObjectWork>[] = [];
  const shutdowns: ((grace: number) => Promise<void>)[] = [];
  let probing: LivenessServer | undefined;
  try {
    if (options.endpoint) {
      probing = LivenessServer.start(options.endpoint, {
        registry,
        settings,
        memo,
        indices: options.indexes.indices,
        streams,
      });
    }
    if (!options.standalone) {
      logger.warn("Peering is not implemented yet; running as if --standalone were given.");
    }
    const selectors = registry.selectors;
    const discovery = new Discovery(client, { groups: groupsToScan(selectors) });
    const patching = registry.handlers.filter((handler) => handler.kind === "change").map((handler) =>
      handler.selector
    );
    const { served } = await discovery.resolve(selectors, { patching, signal: stop.signal });
    // Handlers with equal selectors share one resolution; the registry lists each selector once.
    const resolved = new Map([...served].map(([selector, resources]) => [selector.toString(), resources]));

    const byResource = new Map<
      string,
      { resource: Resource; events: EventHandler[]; changes: ChangeHandler[]; background: BackgroundHandler[] }
    >();
    for (const handler of registry.handlers) {
      for (const resource of resolved.get(handler.selector.toString()) ?? []) {
        const key = resourceName(resource);
        const entry = byResource.get(key) ?? { resource, events: [], changes: [], background: [] };
        if (handler.kind === "event") entry.events.push(handler);
        else if (handler.kind === "change") entry.changes.push(handler);
        else if (handler.kind === "daemon" || handler.kind === "timer") entry.background.push(handler);
        // Index handlers only need the stream: `indexes.handlersFor()` finds them per resource.
        byResource.set(key, entry);
      }
    }

    const namespaces = options.clusterwide || !options.namespaces?.length ? [null] : options.namespaces;
    if (!options.clusterwide && !options.namespaces?.length) {
      logger.warn("No namespaces are given (-n NS or -A); serving all namespaces.");
    }
    const listed: Promise<void>[] = [];
    const lifecycle = options.lifecycle ?? allAtOnce;
    const { indexes } = options;
    // Every indexed stream is expected before any starts, so that readiness waits for all of them.
    for (const { resource } of byResource.values()) {
      if (indexes.handlersFor(resource).length === 0) continue;
      for (const namespace of resource.namespaced ? namespaces : [null]) {
        indexes.expect(streamName(resource, namespace));
      }
    }
    for (const { resource, events, changes, background } of byResource.values()) {
      const scopes = resource.namespaced ? namespaces : [null];
      for (const namespace of scopes) {
        if (stop.signal.aborted) break;
        const stream = serveResource({
          client,
          resource,
          namespace,
          settings,
          lifecycle,
          memo,
          events,
          changes,
          background,
          indexes,
          signal: stop.signal,
        });
        streams.set(stream.name, stream.health);
        running.push(stream.done);
        listed.push(stream.listed);
        queues.push(stream.queues);
        shutdowns.push(stream.shutdown);
      }
    }
    if (running.length === 0 && !stop.signal.aborted) {
      logger.warn("There is nothing to serve: no handler's resource was found.");
    }
    Promise.all(listed).then(() => {
      if (!stop.signal.aborted) options.ready?.({ client, streams, liveness: probing?.url });
    });
    await new Promise<void>((resolve) => {
      if (stop.signal.aborted) resolve();
      stop.signal.addEventListener("abort", () => resolve(), { once: true });
    });
  } catch (error) {
    // A stop during discovery interrupts its requests: that is no failure.
    if (!stop.signal.aborted) throw error;
    logger.debug("Stopped while starting: {error}", { error });
  } finally {
    if (!stop.signal.aborted) stop.abort(new Error("the operator has failed"));
    // Daemons and timers learn of the stop at once; the queues drain meanwhile.
    const stopping = Promise.all(shutdowns.map((shutdown) => shutdown(EXIT_GRACE)));
    await Promise.allSettled(running);
    const exitTimeout = settings.batching.exitTimeout;
    const left = await Promise.all(queues.map((queue) => queue.drain(AbortSignal.timeout(exitTimeout * 1000))));
    const objects = left.flatMap((items) => [...items.values()].map((work) => describe(work[0].object)));
    if (objects.length) {
      logger.warn(
        "Unprocessed objects left after {seconds} s (settings.batching.exitTimeout), not waited for: {objects}",
        { seconds: exitTimeout, objects: objects.join(", ") },
      );
    }
    await stopping;
    await probing?.close();
  }
}

/** Runs the cleanup handlers; their failures are logged, never raised. */
async function cleanup(registry: Registry, settings: Settings, memo: Memo, indices: Indices): Promise<void> {
  const handlers = registry.activities("cleanup");
  if (handlers.length === 0) return;
  try {
    await runActivity(handlers, {
      activity: "cleanup",
      settings,
      memo,
      indices,
      timeout: settings.process.cleanupTimeout,
    });
  } catch (error) {
    logger.error("The cleanup activity has failed; the operator stops anyway: {error}", { error });
  }
}

/** One stream and the processing of its objects. */
function serveResource(deps: {
  client: ApiClient;
  resource: Resource;
  namespace: string | null;
  settings: Settings;
  lifecycle: Lifecycle;
  memo: Memo;
  events: EventHandler[];
  changes: ChangeHandler[];
  background: BackgroundHandler[];
  indexes: OperatorIndexes;
  signal: AbortSignal;
}): {
  name: string;
  health: WatchHealth;
  done: Promise<void>;
  listed: Promise<void>;
  queues: ObjectQueues<ObjectWork>;
  /** Stops the daemons and timers of all objects (for the operator's exit) and waits for them. */
  shutdown: (grace: number) => Promise<void>;
} {
  const { client, resource, namespace, settings, signal } = deps;
  const watcher = new Watcher(client, resource, { namespace, settings: settings.watching, signal });
  const name = streamName(resource, namespace);
  const { indexes } = deps;
  const indexers: IndexHandler[] = indexes.handlersFor(resource);
  const handled = deps.events.length + deps.changes.length + deps.background.length > 0;
  const memories = new Map<string, ObjectMemory & { throttles?: number; throttledUntil?: number }>();
  const wakeups = new Map<string, ReturnType<typeof setTimeout>>();
  const cycle = {
    client,
    resource,
    settings,
    lifecycle: deps.lifecycle,
    eventHandlers: deps.events,
    changeHandlers: deps.changes,
    backgroundHandlers: deps.background,
    indices: indexes.indices,
    signal,
  };
  const backgroundFor = (uid: string, memory: ObjectMemory, object: KubernetesObject) =>
    new ObjectBackground(object, {
      client,
      resource,
      memo: memory.memo,
      indices: indexes.indices,
      defaultBackoff: settings.execution.defaultBackoff,
      settings: settings.background,
      // Another look at the object, e.g. to release the finalizer once its daemons have exited.
      wake: () => {
        if (signal.aborted || memories.get(uid) !== memory) return;
        queues.push(uid, { kind: "wakeup", object: memory.background?.live.current ?? object });
      },
    });
  const wakeLater = (uid: string, object: KubernetesObject, seconds: number) => {
    clearTimeout(wakeups.get(uid));
    wakeups.set(uid, setTimeout(() => queues.push(uid, { kind: "wakeup", object }), seconds * 1000));
  };

  const memoryOf = (uid: string, work: ObjectWork): ObjectMemory & { throttles?: number; throttledUntil?: number } => {
    let memory = memories.get(uid);
    if (!memory) {
      memories.set(uid, memory = newMemory(deps.memo, work.kind === "event" && work.type === null));
      if (deps.background.length) memory.background = backgroundFor(uid, memory, work.object);
    }
    return memory;
  };

  const queues: ObjectQueues<ObjectWork> = new ObjectQueues<ObjectWork>(
    async (uid, work, more) => {
      // Handlers never see a partial index: they wait until every indexed stream has been listed.
      if (!indexes.isReady) await indexes.whenReady(signal).catch(() => {});
      if (signal.aborted) return;
      const memory = memoryOf(uid, work);
      clearTimeout(wakeups.get(uid));
      wakeups.delete(uid);
      if (work.kind === "event" && work.type === "DELETED") {
        memories.delete(uid);
        void memory.background?.stop("resourceDeleted");
        await processObject(work, memory, cycle).catch((error) => reportError(work.object, error));
        return;
      }
      // After an unexpected error, the object rests for a while; newer events wait for the end of it.
      if (memory.throttledUntil !== undefined && Date.now() < memory.throttledUntil) {
        wakeLater(uid, work.object, (memory.throttledUntil - Date.now()) / 1000);
        return;
      }
      let outcome;
      try {
        outcome = await processObject(work, memory, cycle, more);
        if (memory.throttles) {
          new ObjectLogger(work.object).info("Throttling is over. Switching back to normal operations.");
        }
        memory.throttles = memory.throttledUntil = undefined;
      } catch (error) {
        if (signal.aborted) return;
        const delays = settings.batching.errorDelays;
        if (delays.length === 0) {
          reportError(work.object, error);
          return;
        }
        const delay = delays[Math.min(memory.throttles ?? 0, delays.length - 1)];
        memory.throttles = (memory.throttles ?? 0) + 1;
        memory.throttledUntil = Date.now() + delay * 1000;
        reportError(work.object, error, delay);
        wakeLater(uid, work.object, delay);
        return;
      }
      if (outcome.wakeupAfter !== undefined && !signal.aborted) {
        // Re-check the latest state of the object later: retries of delayed handlers, or a
        // consistency wait whose echo never came. No write is needed to wake up.
        wakeLater(uid, work.object, outcome.wakeupAfter);
      }
    },
    (uid, error) => logger.error("Processing of {uid} failed: {error}", { uid, error }),
    {
      limit: settings.batching.workerLimit,
    },
  );

  let markListed: () => void = () => {};
  const listed = new Promise<void>((resolve) => markListed = resolve);
  const done = (async () => {
    for await (const event of watcher) {
      if (event.type === "LISTED") {
        // Indexing happens right here, in the stream's order: the listing is fully indexed now.
        if (indexers.length) indexes.listed(name);
        markListed();
        continue;
      }
      const uid = event.object.metadata.uid;
      if (!uid) continue;
      if (indexers.length) {
        const work: ObjectWork = { kind: "event", type: event.type, object: event.object };
        const memo = event.type === "DELETED" ? memories.get(uid)?.memo ?? {} : memoryOf(uid, work).memo;
        await indexes.indexObject(indexers, event.type, event.object, { memo, resource });
      }
      if (!handled) {
        if (event.type === "DELETED") memories.delete(uid);
        continue;
      }
      // A newer state supersedes the state a pending wake-up carries.
      const pending = wakeups.get(uid);
      if (pending !== undefined) {
        clearTimeout(pending);
        wakeups.delete(uid);
      }
      queues.push(uid, { kind: "event", type: event.type, object: event.object });
    }
    for (const timer of wakeups.values()) clearTimeout(timer);
  })().finally(() => {
    // A stream that stops before its listing must not hold the other handlers back for ever.
    if (indexers.length) indexes.listed(name);
  });
  const shutdown = async (grace: number) => {
    await Promise.all([...memories.values()].map((memory) => memory.background?.shutdown("operatorExiting", grace)));
  };
  return { name, health: watcher.health, done, listed, queues, shutdown };
}

/** The name of a stream: its resource, and its namespace unless it watches all of them. */
function streamName(resource: Resource, namespace: string | null): string {
  return resourceName(resource) + (namespace ? ` in ${namespace}` : "");
}

/** An object as `namespace/name` (or `name`) for log lines about several objects. */
function describe(body: KubernetesObject): string {
  const { namespace, name } = body.metadata;
  return namespace ? `${namespace}/${name}` : `${name}`;
}

/** Logs an unexpected error of a cycle with the object's reference. */
function reportError(body: KubernetesObject, error: unknown, delay?: number): void {
  const message = delay === undefined
    ? "An unexpected error while processing the object."
    : `Throttling for ${delay} seconds due to an unexpected error.`;
  new ObjectLogger(body).exception(message, error);
}
