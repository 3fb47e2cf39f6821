/**
 * `operator()`: runs the startup handlers, connects, serves the liveness endpoint, discovers the
 * resources the handlers select, runs one watch stream per resource and namespace — starting and
 * stopping streams as namespaces and CRDs come and go (`orchestration.ts`, `observation.ts`,
 * `resources.ts`) and as peering or leader election allow (`activation.ts`) — feeds the events
 * into per-object queues (`serving.ts`), and stops cleanly: streams, queues, cleanup handlers,
 * Events.
 *
 * @module
 */

import { getLogger } from "@logtape/logtape";
import { ApiClient } from "../api/client.ts";
import type { Credentials } from "../api/credentials.ts";
import type { Vault } from "../api/vault.ts";
import { openVault } from "../handling/login.ts";
import { KubeApi } from "../api/kube_api.ts";
import { runWithApi } from "../handling/current_api.ts";
import { type CrdBody, Discovery } from "../api/discovery.ts";
import type { WatchHealth } from "../api/watching.ts";
import { EventPoster } from "../engines/posting.ts";
import { type LivenessEndpoint, LivenessServer, parseLivenessEndpoint } from "../engines/probing.ts";
import { answerMetrics, MetricsServer, parseMetricsEndpoint, sharesServer } from "../engines/metrics_endpoint.ts";
import { runWithPoster } from "../engines/posting_context.ts";
import { postingSink } from "../engines/posting_sink.ts";
import { configureDefaultLogging, flushLogging } from "../logging/configure.ts";
import { runActivity } from "../handling/activities.ts";
import { type RunningAdmission, startAdmission } from "../engines/admission_startup.ts";
import type { Memo } from "../handling/context.ts";
import { OperatorIndexes } from "../engines/indexing.ts";
import type { Indices } from "../model/index_store.ts";
import { allAtOnce, type Lifecycle } from "../handling/lifecycles.ts";
import { defaultRegistry, type Registry } from "../handling/registry.ts";
import { NamespacePatterns } from "../model/namespace_patterns.ts";
import { operatorIdentity } from "../model/peering.ts";
import { groupsToScan } from "../model/selector.ts";
import { resourceName } from "../model/resource.ts";
import { Settings } from "../settings/settings.ts";
import { Activation } from "./activation.ts";
import { checkSomethingToRun } from "./no_handlers.ts";
import { observeCrds, observeNamespaces } from "./observation.ts";
import { Orchestrator } from "./orchestration.ts";
import { ServedResources } from "./resources.ts";
import { serveResource, streamName } from "./serving.ts";
import { trapStopSignals } from "./stop_signals.ts";

const logger = getLogger(["kopf", "operator"]);

/** Options of {@linkcode operator}. */
export interface OperatorOptions {
  /**
   * Namespaces to serve: exact names, or patterns of globs (`myapp-*,!*-pr-*`), or regular
   * expressions (matching whole names); ignored when `clusterwide`. Patterns other than exact
   * names make the operator list and watch namespaces, and serve the matching ones as they come
   * and go (unless `settings.scanning.disabled`).
   */
  namespaces?: (string | RegExp)[];
  /** Serve all namespaces. Also the mode when no namespaces are given. */
  clusterwide?: boolean;
  /**
   * Run without peering: no keep-alives, never paused by other operators
   * (`settings.peering.standalone`). Otherwise peering is used when its CRDs exist.
   */
  standalone?: boolean;
  /** The peering priority (`settings.peering.priority`; Kopf's `--priority`, `--dev` is 666). */
  priority?: number;
  /**
   * The peering object's name (`settings.peering.name`); giving it makes peering mandatory: the
   * operator stays paused while the peering CRD or the object is missing (Kopf's `--peering`).
   */
  peeringName?: string;
  /**
   * This operator's identity in peering records and in the leader-election Lease; by default
   * `POD_ID`, else `<user>@<host>/<time>/<3 random characters>`.
   */
  identity?: string;
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
  /**
   * A Prometheus metrics endpoint to serve with the liveness endpoint, e.g. `http://0.0.0.0:9090/metrics`
   * (sets `settings.metrics.endpoint`; on the liveness server when host and port are the same).
   */
  metrics?: string;
  /**
   * Called once the startup handlers have succeeded and every stream has listed its objects — or,
   * when peering pauses the operator from the start, once that is known.
   */
  ready?: (operator: RunningOperator) => void;
}

/** What a running operator shows of itself (to `ready`, and to tests). */
export interface RunningOperator {
  /** The API client, with its request counters. */
  readonly client: ApiClient;
  /**
   * The health of each running watch stream, by a name like `kopfexamples.v1.kopf.dev in ns`; a live
   * view: streams appear and disappear as namespaces and CRDs come and go.
   */
  readonly streams: ReadonlyMap<string, WatchHealth>;
  /** The URL of the liveness endpoint (with the actual port), if one is served. */
  readonly liveness?: string;
  /** The URL of the metrics endpoint (with the actual port), if one is served. */
  readonly metrics?: string;
}

/** Seconds that daemons without a `cancellationTimeout` get to finish when the operator stops. */
const EXIT_GRACE = 5;

/**
 * Runs an operator until the signal aborts or SIGINT/SIGTERM arrives.
 *
 * Starting: the startup handlers run first (before anything touches the API), then the
 * credentials are loaded, the liveness endpoint is served (if asked), the resources are
 * discovered and the watch streams start; `ready` is called once all of them have listed.
 *
 * Stopping (the first SIGINT/SIGTERM, or `signal`): the watch streams stop, the objects' queues
 * get `settings.batching.exitTimeout` to drain, the liveness endpoint closes, the cleanup handlers run (within
 * `settings.process.cleanupTimeout`), queued Events are posted, and the promise resolves.
 * Copies of the first signal within a second (a Ctrl+C under `deno task` arrives twice) are the
 * same stop; a SIGINT/SIGTERM after that — or `settings.process.ultimateExitingTimeout` passing
 * after the first — exits the process at once with code 130 (SIGINT) or 143 (SIGTERM), as a
 * shell reports a process killed by that signal (see `stop_signals.ts`).
 *
 * Logging: unless the program has configured LogTape itself, it is configured as `kopf run` does
 * (Kopf's `full` format on stderr, level info), so that the operator's and the handlers' messages show.
 * Several operators in one process share it: the first to start configures it, the others keep
 * it, and an operator that stops leaves it to the others.
 *
 * Rejects at once with a {@linkcode NoHandlersError} if the registry has nothing to run (no resource,
 * admission or startup handler). Rejects if the startup handlers fail for good (an
 * {@linkcode ActivityError}), or on a fatal error (credentials, discovery); the cleanup handlers
 * still run in the latter case.
 *
 * @example
 * ```ts ignore
 * import * as kopf from "@kopf/kopf";
 * kopf.on.create("kopfexamples", function createFn() { return { message: "hello" }; });
 * await kopf.operator({ clusterwide: true, standalone: true });
 * ```
 */
export async function operator(options: OperatorOptions = {}): Promise<void> {
  // Silence would hide even the handlers' own messages; a program with its own logging keeps it.
  await configureDefaultLogging({ postingSink });
  const registry = options.registry ?? defaultRegistry;
  checkSomethingToRun(registry);
  const settings = options.settings ?? new Settings();
  // As Kopf does: the options override the settings before the startup handlers, which may change them.
  if (options.standalone !== undefined) settings.peering.standalone = options.standalone;
  if (options.priority !== undefined) settings.peering.priority = options.priority;
  if (options.peeringName !== undefined) {
    settings.peering.name = options.peeringName;
    settings.peering.mandatory = true;
  }
  settings.peering.clusterwide = options.clusterwide || !options.namespaces?.length;
  if (options.metrics !== undefined) settings.metrics.endpoint = options.metrics;
  const memo = options.memo ?? {};
  // The indexes exist (empty) from the start, so that every handler, even a startup one, sees them.
  const indexes = new OperatorIndexes(registry.handlers, { settings });
  const endpoint = options.liveness === undefined ? undefined : parseLivenessEndpoint(options.liveness);
  using stopping = trapStopSignals();
  if (options.signal?.aborted || stopping.signal.aborted) return;
  // The handlers' `api`: the operator's own client and discovery, once connected.
  const connection: Connection = {};
  const api = new KubeApi({
    client: () => {
      if (connection.client) return connection.client;
      throw new Error(
        "The operator's API client is not connected yet: startup and login handlers run before the operator " +
          "logs in. Use `await kopf.connect()` there, or move the call to a resource or cleanup handler.",
      );
    },
    discovery: () => connection.discovery,
    watching: () => settings.watching,
  });

  const stop = new AbortController();
  let ultimate: ReturnType<typeof setTimeout> | undefined;
  const onStopSignal = () => {
    const timeout = settings.process.ultimateExitingTimeout;
    if (timeout !== null) {
      const code = stopping.exitCode;
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
    stop.abort(stopping.signal.reason);
  };
  stopping.signal.addEventListener("abort", onStopSignal, { once: true });
  const onAbort = () => {
    if (stop.signal.aborted) return;
    logger.info("Stop-flag is raised. Operator is stopping.");
    stop.abort(options.signal?.reason);
  };
  options.signal?.addEventListener("abort", onAbort, { once: true });

  try {
    // Startup handlers first: nothing has touched the API yet, and they may change the settings.
    try {
      await runWithApi(api, () =>
        runActivity(registry.activities("startup"), {
          activity: "startup",
          settings,
          memo,
          indices: indexes.indices,
          signal: stop.signal,
        }));
    } catch (error) {
      if (!stop.signal.aborted) throw error;
      logger.warn(
        "The startup activity is only partially executed: the operator is stopping. " +
          "Cleanup handlers are not run.",
      );
      logger.info("Operator has stopped.");
      return;
    }
    await runWithApi(api, () => serve({ ...options, registry, settings, memo, endpoint, indexes, connection }, stop));
  } finally {
    clearTimeout(ultimate);
    options.signal?.removeEventListener("abort", onAbort);
    stopping.signal.removeEventListener("abort", onStopSignal);
    // The last lines are out before the caller exits or prints its own (they go out in batches).
    await flushLogging();
  }
}

/** What `serve` needs: the options, with the defaults resolved. */
type Resolved = OperatorOptions & {
  registry: Registry;
  settings: Settings;
  memo: Memo;
  endpoint?: LivenessEndpoint;
  indexes: OperatorIndexes;
  connection: Connection;
};

/** The operator's client and discovery, as handlers' `api` finds them once they exist. */
interface Connection {
  client?: ApiClient;
  discovery?: Discovery;
}

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
    options.connection.client = client;
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
 * Serves the liveness endpoint, discovers the resources, finds the namespaces, runs the streams
 * until the stop — starting and stopping streams as namespaces and CRDs come and go — and
 * stops them: streams, their daemons and timers, and the objects' queues (up to
 * `settings.batching.exitTimeout`), then the observers and the endpoint.
 *
 * Index readiness with streams that come and go: every stream of an indexed resource is expected
 * by the indexes when it starts — at start all together, later one batch at a time — so that
 * the handlers (of all resources, indexers aside) wait while a new indexed stream (e.g. in a
 * namespace that has just appeared) lists and indexes its objects, as they wait at start; a
 * stream that stops removes its objects from the indexes. `ready` is called once, when the
 * streams started at the start have listed; streams started later do not delay or repeat it.
 */
async function watch(options: Resolved, client: ApiClient, stop: AbortController): Promise<void> {
  const { registry, settings, memo, indexes } = options;
  const signal = stop.signal;
  const streams = new Map<string, WatchHealth>();
  const lifecycle = options.lifecycle ?? allAtOnce;
  const scanning = !settings.scanning.disabled;
  // Admission handlers' groups are scanned too: their webhooks' rules name the served resources.
  const webhookSelectors = registry.webhooks.map((handler) => handler.selector);
  const discovery = new Discovery(client, { groups: groupsToScan([...registry.selectors, ...webhookSelectors]) });
  options.connection.discovery = discovery;
  let admission: RunningAdmission | undefined;
  let admissionFailure: unknown;
  let served: ServedResources | undefined;
  let activation: Activation | undefined;
  // The served namespaces as last observed, also before peering starts and follows them.
  let latestNamespaces: ReadonlySet<string> | null = null;
  const orchestrator = new Orchestrator({
    streams,
    grace: EXIT_GRACE,
    start: ({ resource, namespace }, instance) => {
      const entry = served?.current.find((entry) => resourceName(entry.resource) === resourceName(resource));
      const name = streamName(resource, namespace);
      // Each start of a stream is a new listing to wait for, even for a name seen before.
      const indexKey = instance === 1 ? name : `${name} (#${instance})`;
      if (indexes.handlersFor(resource).length > 0) indexes.expect(indexKey);
      return serveResource({
        client,
        resource,
        namespace,
        settings,
        lifecycle,
        memo,
        events: entry?.events ?? [],
        changes: entry?.changes ?? [],
        background: entry?.background ?? [],
        indexes,
        indexKey,
        gate: activation?.gate,
      });
    },
  });
  const observers: Promise<void>[] = [];
  let probing: LivenessServer | undefined;
  let metrics: MetricsServer | undefined;
  let metricsUrl: string | undefined;
  try {
    const metricsAt = settings.metrics.endpoint === null ? undefined : parseMetricsEndpoint(settings.metrics.endpoint);
    const shared = metricsAt !== undefined && sharesServer(metricsAt, options.endpoint);
    if (options.endpoint) {
      probing = LivenessServer.start(options.endpoint, {
        registry,
        settings,
        memo,
        indices: indexes.indices,
        streams,
        connection: client,
        also: shared ? { path: metricsAt.path, answer: answerMetrics } : undefined,
      });
    }
    if (metricsAt && !shared) metrics = MetricsServer.start(metricsAt);
    metricsUrl = metrics?.url ?? (probing && metricsAt ? new URL(metricsAt.path, probing.url).href : undefined);
    served = new ServedResources(registry, discovery, {
      onChange: (resources) => orchestrator.update({ resources }),
      onRescan: (resources) => admission?.update(resources),
    });
    const resources = await served.resolve(signal);
    // After the startup handlers (which may set settings.admission) and the discovery, so that
    // the API server is never sent to a webhook for resources not known yet.
    admission = await startAdmission({
      registry,
      settings,
      client,
      resources: discovery.cached ?? [],
      memo,
      indices: indexes.indices,
      signal,
    });
    admission.done.catch((error) => {
      admissionFailure ??= error;
      stop.abort(error);
    });
    await admission.ready;

    const patterns = options.clusterwide || !options.namespaces?.length
      ? null
      : new NamespacePatterns(options.namespaces);
    if (!options.clusterwide && !options.namespaces?.length) {
      logger.warn("No namespaces are given (-n NS or -A); serving all namespaces.");
    }
    let namespaces: ReadonlySet<string> | null = null;
    if (patterns) {
      const observation = await observeNamespaces({
        client,
        patterns,
        scanning,
        settings: settings.watching,
        signal,
        onChange: (namespaces) => {
          latestNamespaces = namespaces;
          activation?.updateNamespaces(namespaces);
          orchestrator.update({ namespaces }).catch((error) => {
            logger.error("Starting or stopping streams for the namespaces has failed: {error}", { error });
          });
        },
      });
      namespaces = observation.initial;
      latestNamespaces ??= namespaces;
      observers.push(observation.done);
      if (!scanning && !patterns.allExact) {
        logger.warn(
          "Namespace patterns are not served with settings.scanning.disabled: only the exact names are: {namespaces}",
          { namespaces: [...namespaces].join(", ") || "(none)" },
        );
      }
    }
    if (signal.aborted) return;
    // Before any stream starts: an operator that a peer pauses must not touch a single object.
    activation = await Activation.start({
      client,
      settings,
      identity: options.identity ?? operatorIdentity(),
      orchestrator,
      namespaces: latestNamespaces ? [...latestNamespaces] : [],
      signal,
    });
    const pausedAtStart = orchestrator.paused;
    const initial = await orchestrator.update({ resources, namespaces });
    if (scanning) {
      observers.push(observeCrds({
        client,
        settings: settings.watching,
        signal,
        onChange: (type, crd) => {
          activation?.crdChanged((crd as CrdBody).spec?.group);
          served!.crdChanged(type, crd, signal);
        },
      }));
    }
    if (initial.length === 0 && !signal.aborted && !pausedAtStart) {
      // With scanning, namespaces and CRDs that appear later are served: nothing yet is no problem.
      if (scanning) logger.info("There is nothing to serve yet: no handler's resource or no namespace is found.");
      else logger.warn("There is nothing to serve: no handler's resource or no namespace is found.");
    }
    Promise.all(initial.map((stream) => stream.listed)).then(() => {
      if (!signal.aborted) options.ready?.({ client, streams, liveness: probing?.url, metrics: metricsUrl });
    });
    await new Promise<void>((resolve) => {
      if (signal.aborted) resolve();
      signal.addEventListener("abort", () => resolve(), { once: true });
    });
  } catch (error) {
    // A stop during discovery interrupts its requests: that is no failure.
    if (!signal.aborted) throw error;
    logger.debug("Stopped while starting: {error}", { error });
  } finally {
    if (!signal.aborted) stop.abort(new Error("the operator has failed"));
    await admission?.close();
    const objects = await orchestrator.close("operatorExiting");
    if (objects.length) {
      logger.warn(
        "Unprocessed objects left after {seconds} s (settings.batching.exitTimeout), not waited for: {objects}",
        { seconds: settings.batching.exitTimeout, objects: objects.join(", ") },
      );
    }
    // After the streams: a replica taking over the Lease must not overlap with this one's work.
    await activation?.close();
    await Promise.allSettled(observers);
    await served?.settled();
    await probing?.close();
    await metrics?.close();
  }
  // The stop is already signalled when the server fails, so the catch above does not see it.
  if (admissionFailure !== undefined) throw admissionFailure;
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
