/**
 * The operator once connected, from its first request to its stop: the liveness and metrics
 * endpoints, the discovery of the served resources, the admission server, the observers of
 * namespaces and CRDs, peering or leader election, and one watch stream per resource and
 * namespace -- each part leaving its teardown on one stack, which stops them all in order.
 *
 * @module
 */

import { getLogger } from "@logtape/logtape";
import type { ApiClient } from "../api/client.ts";
import { type CrdBody, Discovery } from "../api/discovery.ts";
import type { WatchHealth } from "../api/watching.ts";
import type { RunningAdmission } from "../engines/admission_startup.ts";
import type { OperatorIndexes } from "../engines/indexing.ts";
import { answerMetrics, MetricsServer, parseMetricsEndpoint, sharesServer } from "../engines/metrics_endpoint.ts";
import { idleCollectionFor } from "../engines/idle_collection.ts";
import { type LivenessEndpoint, LivenessServer } from "../engines/probing.ts";
import type { QueueActivity } from "../engines/queueing.ts";
import type { Memo } from "../handling/context.ts";
import { allAtOnce, type Lifecycle } from "../handling/lifecycles.ts";
import type { Registry } from "../handling/registry.ts";
import { NamespacePatterns } from "../model/namespace_patterns.ts";
import { operatorIdentity } from "../model/peering.ts";
import { resourceName } from "../model/resource.ts";
import { groupsToScan } from "../model/selector.ts";
import type { Settings } from "../settings/settings.ts";
import { Activation } from "./activation.ts";
import { observeCrds, observeNamespaces } from "./observation.ts";
import { Orchestrator } from "./orchestration.ts";
import { ServedResources } from "./resources.ts";
import { serveResource, streamName } from "./serving.ts";

const logger = getLogger(["kopf", "operator"]);

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

/** The operator's client and discovery, as handlers' `api` finds them once they exist. */
export interface Connection {
  /** The API client. */
  client?: ApiClient;
  /** The discovery of the resources. */
  discovery?: Discovery;
}

/** What {@linkcode runConnected} needs: the operator's options, with the defaults resolved. */
export interface RunningOptions {
  /** The handlers. */
  registry: Registry;
  /** The settings, as the startup handlers left them. */
  settings: Settings;
  /** The operator's memo. */
  memo: Memo;
  /** The operator's indexes. */
  indexes: OperatorIndexes;
  /** Where to serve the liveness endpoint, if anywhere. */
  endpoint?: LivenessEndpoint;
  /** Where the handlers' `api` finds the discovery once it exists. */
  connection: Connection;
  /** Which due handlers run per cycle; {@linkcode allAtOnce} by default. */
  lifecycle?: Lifecycle;
  /** Serve all namespaces (also when no namespaces are given). */
  clusterwide?: boolean;
  /** The namespaces to serve: names or patterns. */
  namespaces?: (string | RegExp)[];
  /** This operator's identity in peering records and in the leader-election Lease. */
  identity?: string;
  /** Called once every stream started at the start has listed its objects. */
  ready?: (operator: RunningOperator) => void;
}

/**
 * Starts the admission server (and the conversion webhooks) if there are admission handlers or
 * converters. Its code loads only then: the other operators do not keep it for their lifetime.
 */
async function startAdmissionIfNeeded(wiring: Wiring, late: LateParts, onFailure: (error: unknown) => void) {
  const { options: { registry, settings, memo, indexes }, client, discovery, signal, stack } = wiring;
  if (registry.webhooks.length === 0 && registry.converters.length === 0) return;
  const { startAdmission } = await import("../engines/admission_startup.ts");
  const resources = discovery.cached ?? [];
  const admission = stack.use(
    await startAdmission({ registry, settings, client, resources, memo, indices: indexes.indices, signal }),
  );
  late.admission = admission;
  admission.done.catch(onFailure);
  await admission.ready;
}

/**
 * Serves the liveness endpoint, discovers the resources, finds the namespaces, runs the streams
 * until the stop -- starting and stopping streams as namespaces and CRDs come and go -- and
 * stops them: streams, their daemons and timers, and the objects' queues (up to
 * `settings.batching.exitTimeout`), then the observers and the endpoint.
 *
 * Index readiness with streams that come and go: every stream of an indexed resource is expected
 * by the indexes when it starts -- at start all together, later one batch at a time -- so that
 * the handlers (of all resources, indexers aside) wait while a new indexed stream (e.g. in a
 * namespace that has just appeared) lists and indexes its objects, as they wait at start; a
 * stream that stops removes its objects from the indexes. `ready` is called once, when the
 * streams started at the start have listed; streams started later do not delay or repeat it.
 */
export async function runConnected(options: RunningOptions, client: ApiClient, stop: AbortController): Promise<void> {
  const signal = stop.signal;
  // Admission handlers' and converters' groups are scanned too: their webhooks name the served resources.
  const webhookSelectors = [...options.registry.webhooks, ...options.registry.converters].map((h) => h.selector);
  const selectors = [...options.registry.selectors, ...webhookSelectors];
  const discovery = new Discovery(client, { groups: groupsToScan(selectors) });
  options.connection.discovery = discovery;
  let admissionFailure: unknown;
  {
    // Each part started leaves its teardown here: the last started stops first.
    await using stack = new AsyncDisposableStack();
    try {
      const scanning = !options.settings.scanning.disabled;
      await wire({ options, client, discovery, signal, scanning, stack }, (error) => {
        admissionFailure ??= error;
        stop.abort(error);
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
      // The teardown begins with the stop of everything that follows the signal.
      if (!signal.aborted) stop.abort(new Error("the operator has failed"));
    }
  }
  // The stop is already signalled when the server fails, so the catch above does not see it.
  if (admissionFailure !== undefined) throw admissionFailure;
}

/** What the wiring of the operator's parts needs. */
interface Wiring {
  options: RunningOptions;
  client: ApiClient;
  discovery: Discovery;
  signal: AbortSignal;
  /** Whether namespaces and CRDs are followed as they come and go (not `settings.scanning.disabled`). */
  scanning: boolean;
  /** Where each part leaves its teardown. */
  stack: AsyncDisposableStack;
}

/** The parts that callbacks refer to before they exist: each is set once it has started. */
interface LateParts {
  admission?: RunningAdmission;
  activation?: Activation;
  /** The served namespaces as last observed, also before peering starts and follows them. */
  namespaces: ReadonlySet<string> | null;
}

/**
 * Starts the operator's parts, each leaving its teardown on the stack: the endpoints, the served
 * resources, the observers, the activation, the streams, the admission server.
 */
async function wire(wiring: Wiring, onAdmissionFailure: (error: unknown) => void): Promise<void> {
  const { options, client, discovery, signal, scanning, stack } = wiring;
  const { registry, settings } = options;
  const streams = new Map<string, WatchHealth>();
  const urls = serveEndpoints(options, client, streams, stack, () => late.activation?.sharding?.report());
  const late: LateParts = { namespaces: null };
  const served = new ServedResources(registry, discovery, {
    onChange: (resources) => orchestrator.update({ resources }),
    onRescan: (resources) => late.admission?.update(resources),
  });
  stack.defer(() => served.settled());
  const observers: Promise<void>[] = [];
  stack.defer(async () => {
    await Promise.allSettled(observers);
  });
  // The order is deliberate here: the streams stop (the next line up in the teardown) before the
  // activation closes, so that a replica taking over the Lease does not overlap with this one's work.
  stack.defer(() => late.activation?.close());
  // Stopped after the streams: what their last work schedules does not outlive the operator.
  const activity = stack.use(idleCollectionFor(settings.process));
  // The start is work too: loading and analysing modules, the discovery and the first listings leave
  // garbage (~15 MiB of the C heap where Deno cannot cache its analysis of a bundle: a read-only root
  // filesystem), collected once the streams have listed and the queues are quiet.
  activity?.busy();
  const orchestrator = orchestrate(options, client, streams, served, late, activity);
  stack.defer(() => closeStreams(orchestrator, settings));
  const resources = await served.resolve(signal);
  // After the startup handlers (which may set settings.admission) and the discovery, so that
  // the API server is never sent to a webhook for resources not known yet.
  await startAdmissionIfNeeded(wiring, late, onAdmissionFailure);
  const namespaces = await observeServedNamespaces(wiring, late, orchestrator, observers);
  if (signal.aborted) return;
  let identity = options.identity;
  // Before any stream starts: an operator that a peer pauses must not touch a single object.
  late.activation = await Activation.start({
    client,
    settings,
    identity: () => identity ??= operatorIdentity(),
    orchestrator,
    namespaces: late.namespaces ? [...late.namespaces] : [],
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
        late.activation?.crdChanged((crd as CrdBody).spec?.group);
        served.crdChanged(type, crd, signal);
      },
    }));
  }
  // A shard member without ranges yet serves nothing by design: its streams start with its first ranges.
  if (initial.length === 0 && !signal.aborted && !pausedAtStart && !late.activation?.sharding) {
    // With scanning, namespaces and CRDs that appear later are served: nothing yet is no problem.
    if (scanning) logger.info("There is nothing to serve yet: no handler's resource or no namespace is found.");
    else logger.warn("There is nothing to serve: no handler's resource or no namespace is found.");
  }
  Promise.all(initial.map((stream) => stream.listed)).then(() => {
    activity?.idle();
    if (!signal.aborted) options.ready?.({ client, streams, ...urls });
  });
}

/**
 * Serves the liveness endpoint and the metrics endpoint (on the same server when they share host
 * and port), as asked; returns their URLs.
 */
function serveEndpoints(
  options: RunningOptions,
  client: ApiClient,
  streams: ReadonlyMap<string, WatchHealth>,
  stack: AsyncDisposableStack,
  sharding: () => object | undefined,
): { liveness?: string; metrics?: string } {
  const { registry, settings, memo, indexes } = options;
  const metricsAt = settings.metrics.endpoint === null ? undefined : parseMetricsEndpoint(settings.metrics.endpoint);
  const shared = metricsAt !== undefined && sharesServer(metricsAt, options.endpoint);
  // Each is on the stack as soon as it serves; the liveness endpoint closes first.
  const metrics = stack.use(metricsAt && !shared ? MetricsServer.start(metricsAt) : undefined);
  const probing = stack.use(
    options.endpoint
      ? LivenessServer.start(options.endpoint, {
        registry,
        settings,
        memo,
        indices: indexes.indices,
        streams,
        connection: client,
        sharding,
        also: shared ? { path: metricsAt.path, answer: answerMetrics } : undefined,
      })
      : undefined,
  );
  const metricsUrl = metrics?.url ?? (probing && metricsAt ? new URL(metricsAt.path, probing.url).href : undefined);
  return { liveness: probing?.url, metrics: metricsUrl };
}

/** The orchestrator of the streams: each stream serves its resource's handlers, behind the activation's gate. */
function orchestrate(
  options: RunningOptions,
  client: ApiClient,
  streams: Map<string, WatchHealth>,
  served: ServedResources,
  late: LateParts,
  activity: QueueActivity | undefined,
): Orchestrator {
  const { settings, memo, indexes } = options;
  const lifecycle = options.lifecycle ?? allAtOnce;
  return new Orchestrator({
    streams,
    grace: EXIT_GRACE,
    start: ({ resource, namespace }, instance) => {
      const entry = served.current.find((entry) => resourceName(entry.resource) === resourceName(resource));
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
        gate: late.activation?.gate,
        shard: late.activation?.sharding?.scope,
        activity,
      });
    },
  });
}

/** Stops every stream for the operator's exit, with a warning about the objects left unprocessed. */
async function closeStreams(orchestrator: Orchestrator, settings: Settings): Promise<void> {
  const objects = await orchestrator.close("operatorExiting");
  if (objects.length) {
    logger.warn(
      "Unprocessed objects left after {seconds} s (settings.batching.exitTimeout), not waited for: {objects}",
      { seconds: settings.batching.exitTimeout, objects: objects.join(", ") },
    );
  }
}

/**
 * The namespaces to serve at start (`null`: all of them, cluster-wide), then followed as they come
 * and go -- their observer joins `observers` -- when the operator serves namespaces by patterns.
 */
async function observeServedNamespaces(
  wiring: Wiring,
  late: LateParts,
  orchestrator: Orchestrator,
  observers: Promise<void>[],
): Promise<ReadonlySet<string> | null> {
  const { options, client, signal, scanning } = wiring;
  if (!options.clusterwide && !options.namespaces?.length) {
    logger.warn("No namespaces are given (-n NS or -A); serving all namespaces.");
  }
  if (options.clusterwide || !options.namespaces?.length) return null;
  const patterns = new NamespacePatterns(options.namespaces);
  const observation = await observeNamespaces({
    client,
    patterns,
    scanning,
    settings: options.settings.watching,
    signal,
    onChange: (namespaces) => {
      late.namespaces = namespaces;
      late.activation?.updateNamespaces(namespaces);
      orchestrator.update({ namespaces }).catch((error) => {
        logger.error("Starting or stopping streams for the namespaces has failed: {error}", { error });
      });
    },
  });
  const namespaces = observation.initial;
  late.namespaces ??= namespaces;
  observers.push(observation.done);
  if (!scanning && !patterns.allExact) {
    logger.warn(
      "Namespace patterns are not served with settings.scanning.disabled: only the exact names are: {namespaces}",
      { namespaces: [...namespaces].join(", ") || "(none)" },
    );
  }
  return namespaces;
}
