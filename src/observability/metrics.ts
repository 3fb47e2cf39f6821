/**
 * The operator's metrics (names and labels fixed in API.md) and the small functions that the
 * framework calls where something happens: a handler's outcome, an API request's answer, a watch
 * event, a reconnect, a change of leadership. Each costs a map lookup and an addition; gauges
 * read from the current state (queue depths, known objects, stream health) are collected only
 * when the endpoint is scraped.
 *
 * Labels never hold an object's name or uid: handler ids, resources (plurals), namespaces of the
 * operator's streams, verbs, codes and outcomes are bounded by the operator's code and scope.
 *
 * @module
 */

import { Counter, Gauge, Histogram, MetricsRegistry } from "./exposition.ts";

/** Bounds for durations in seconds: from a fast in-memory handler to a slow external call. */
const SECONDS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60];

/** The registry that `kopf run --metrics` serves; one per process, as the requests are. */
export const metricsRegistry: MetricsRegistry = new MetricsRegistry();

/** How a handler attempt ended: `temporary` is retried, `permanent` and `timeout` are not. */
export type HandlerOutcome = "success" | "temporary" | "permanent" | "timeout";

/** The operator's metrics, registered in {@linkcode metricsRegistry}. */
export const kopfMetrics: {
  readonly handlerRuns: Counter;
  readonly handlerDuration: Histogram;
  readonly handlerRetries: Counter;
  readonly queueDepth: Gauge;
  readonly queueLatency: Histogram;
  readonly cycles: Counter;
  readonly objects: Gauge;
  readonly watchEvents: Counter;
  readonly watchReconnects: Counter;
  readonly watchSilence: Gauge;
  readonly watchHealthy: Gauge;
  readonly apiRequests: Counter;
  readonly apiDuration: Histogram;
  readonly leader: Gauge;
  readonly peeringPaused: Gauge;
  readonly shardMembers: Gauge;
  readonly shardOwnedRatio: Gauge;
  readonly shardHandovers: Counter;
  readonly webhookRequests: Counter;
  readonly webhookDuration: Histogram;
  readonly background: Gauge;
  readonly idleCollections: Counter;
} = {
  handlerRuns: metricsRegistry.add(
    new Counter("kopf_handler_runs_total", "Handler attempts by handler id, resource, cause and outcome.", [
      "handler",
      "resource",
      "cause",
      "outcome",
    ]),
  ),
  handlerDuration: metricsRegistry.add(
    new Histogram("kopf_handler_duration_seconds", "Seconds a handler attempt took.", ["handler", "resource"], SECONDS),
  ),
  handlerRetries: metricsRegistry.add(
    new Counter("kopf_handler_retries_total", "Handler attempts that are retries of an earlier attempt.", [
      "handler",
      "resource",
    ]),
  ),
  queueDepth: metricsRegistry.add(
    new Gauge("kopf_queue_depth", "Events and wake-ups queued for processing, by resource.", ["resource"]),
  ),
  queueLatency: metricsRegistry.add(
    new Histogram(
      "kopf_queue_latency_seconds",
      "Seconds from a watch event's arrival to the start of its processing.",
      ["resource"],
      SECONDS,
    ),
  ),
  cycles: metricsRegistry.add(
    new Counter(
      "kopf_cycles_total",
      "Processing cycles of objects, by resource: the echo of the operator's own write is taken without one.",
      ["resource"],
    ),
  ),
  objects: metricsRegistry.add(
    new Gauge("kopf_objects", "Objects known to the watch streams, by resource.", ["resource"]),
  ),
  watchEvents: metricsRegistry.add(
    new Counter("kopf_watch_events_total", "Watch events received, by resource and type.", ["resource", "type"]),
  ),
  watchReconnects: metricsRegistry.add(
    new Counter(
      "kopf_watch_reconnects_total",
      "Watch requests sent again after a stream ended, failed or stalled.",
      ["resource"],
    ),
  ),
  watchSilence: metricsRegistry.add(
    new Gauge(
      "kopf_watch_seconds_since_last_event",
      "Seconds since the last event or bookmark of each stream (since its start when none came yet).",
      ["resource", "namespace"],
    ),
  ),
  watchHealthy: metricsRegistry.add(
    new Gauge(
      "kopf_watch_stream_healthy",
      "1 while a stream works or has failed for less than settings.watching.unhealthyAfter, else 0.",
      ["resource", "namespace"],
    ),
  ),
  apiRequests: metricsRegistry.add(
    new Counter(
      "kopf_api_requests_total",
      'API request attempts by verb, resource and HTTP status code ("error": no answer).',
      ["verb", "resource", "code"],
    ),
  ),
  apiDuration: metricsRegistry.add(
    new Histogram(
      "kopf_api_request_duration_seconds",
      "Seconds until the API server's answer (headers for streams).",
      ["verb", "resource"],
      SECONDS,
    ),
  ),
  leader: metricsRegistry.add(
    new Gauge("kopf_leader", "1 while this operator does the work (holds the Lease, or no leader election).", []),
  ),
  peeringPaused: metricsRegistry.add(
    new Gauge("kopf_peering_paused", "1 while peering pauses this operator for a peer, else 0.", []),
  ),
  shardMembers: metricsRegistry.add(
    new Gauge("kopf_shard_members", "Live members of the shard group, as this member sees them.", ["group"]),
  ),
  shardOwnedRatio: metricsRegistry.add(
    new Gauge("kopf_shard_owned_ratio", "The fraction of the hash space whose objects this member handles.", [
      "group",
    ]),
  ),
  shardHandovers: metricsRegistry.add(
    new Counter("kopf_shard_handovers_total", "Changes of this member's ranges: gained or lost on reassignment.", [
      "group",
    ]),
  ),
  webhookRequests: metricsRegistry.add(
    new Counter("kopf_webhook_requests_total", "Admission handler and converter calls by handler and outcome.", [
      "handler",
      "outcome",
    ]),
  ),
  webhookDuration: metricsRegistry.add(
    new Histogram(
      "kopf_webhook_duration_seconds",
      "Seconds an admission handler or a converter took.",
      ["handler"],
      SECONDS,
    ),
  ),
  background: metricsRegistry.add(
    new Gauge("kopf_background_running", "Daemons and timers running, by kind.", ["kind"]),
  ),
  idleCollections: metricsRegistry.add(
    new Counter(
      "kopf_idle_collections_total",
      "Full garbage collections run when the object queues went quiet after work (settings.process.idleCollection).",
      [],
    ),
  ),
};

/** Records one handler attempt: its outcome, its duration, and whether it was a retry. */
export function recordHandlerRun(
  handler: string,
  resource: string,
  cause: string,
  outcome: HandlerOutcome,
  retry: number,
  seconds: number,
): void {
  // Into the series' states, not through `inc()` and `observe()`: a call less per count, on every
  // object's path (docs/performance/cpu.md, "Fewer functions, a fourth pass").
  kopfMetrics.handlerRuns.seriesOf([handler, resource, cause, outcome]).value++;
  kopfMetrics.handlerDuration.seriesOf([handler, resource]).observe(seconds);
  if (retry > 0) kopfMetrics.handlerRetries.inc([handler, resource]);
}

/** Records one API request attempt's answer (`code` is the HTTP status, or `"error"`) and its latency. */
export function recordApiRequest(verb: string, resource: string, code: number | "error", seconds: number): void {
  kopfMetrics.apiRequests.seriesOf([verb, resource, String(code)]).value++;
  kopfMetrics.apiDuration.seriesOf([verb, resource]).observe(seconds);
}

/** Records one admission handler call, or one converter call (`success` or `error`). */
export function recordWebhook(handler: string, outcome: "success" | "denied" | "error", seconds: number): void {
  kopfMetrics.webhookRequests.inc([handler, outcome]);
  kopfMetrics.webhookDuration.observe([handler], seconds);
}

/** Counts a daemon or timer while its promise runs. */
export function trackBackground(kind: "daemon" | "timer", run: Promise<unknown>): void {
  kopfMetrics.background.add([kind], 1);
  run.finally(() => kopfMetrics.background.add([kind], -1)).catch(() => {});
}
