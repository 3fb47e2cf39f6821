/**
 * The metrics of watch streams and of the processing behind them: events by type, the time since
 * a stream's last event or bookmark, its health, the objects it knows, the depth of its objects'
 * queues, and the time an event waits in them. Streams register what to read; the gauges are
 * set from it when the endpoint is scraped, so the hot path only counts events. The queues stamp
 * each event's arrival on its work item (not here, in a weak map keyed by object: a weak-map
 * write, read and deletion per event were a visible part of the watch's intake).
 *
 * @module
 */

import { kopfMetrics, metricsRegistry } from "./metrics.ts";

/** What a running stream shows of itself to the metrics. */
export interface StreamSource {
  /** The resource's plural, e.g. `kopfexamples`. */
  resource: string;
  /** The stream's namespace; `null` for a cluster-wide stream. */
  namespace: string | null;
  /** The key its events are stamped under (the stream's health object). */
  stream: object;
  /** Whether the stream works (or has not failed for long). */
  healthy(): boolean;
  /** How many objects it knows. */
  objects(): number;
  /** How many events and wake-ups wait in its objects' queues. */
  depth(): number;
}

const sources = new Set<StreamSource>();
/** When each stream last received an event or bookmark (or started), in `performance.now()` ms. */
const lastActivity = new WeakMap<object, number>();

metricsRegistry.collect(() => {
  const { queueDepth, objects, watchSilence, watchHealthy } = kopfMetrics;
  for (const gauge of [queueDepth, objects, watchSilence, watchHealthy]) gauge.reset();
  const now = performance.now();
  for (const source of sources) {
    const namespace = source.namespace ?? "";
    queueDepth.add([source.resource], source.depth());
    objects.add([source.resource], source.objects());
    const last = lastActivity.get(source.stream) ?? now;
    watchSilence.set([source.resource, namespace], Math.round(now - last) / 1000);
    watchHealthy.set([source.resource, namespace], source.healthy() ? 1 : 0);
  }
});

/** Adds a stream to the gauges; the returned function removes it when the stream stops. */
export function registerStream(source: StreamSource): () => void {
  sources.add(source);
  lastActivity.set(source.stream, performance.now());
  return () => sources.delete(source);
}

/** Counts a watch event (bookmarks included) of a stream. */
export function recordWatchEvent(stream: object, resource: string, type: string): void {
  kopfMetrics.watchEvents.inc([resource, type]);
  lastActivity.set(stream, performance.now());
}

/** Counts a watch request sent again after the stream's previous one ended, failed or stalled. */
export function recordWatchReconnect(resource: string): void {
  kopfMetrics.watchReconnects.inc([resource]);
}

/**
 * The processing of a delivered event starts: how long it waited since it arrived
 * (`performance.now()` then; `undefined` for work that did not come from the watch, e.g. a wake-up).
 */
export function recordProcessingStart(resource: string, arrived: number | undefined): void {
  if (arrived === undefined) return;
  kopfMetrics.queueLatency.observe([resource], (performance.now() - arrived) / 1000);
}
