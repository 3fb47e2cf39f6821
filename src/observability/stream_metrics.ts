/**
 * The metrics of watch streams and of the processing behind them: events by type, the time since
 * a stream's last event or bookmark, its health, the objects it knows, the depth of its objects'
 * queues, and the time an event waits in them. Streams register what to read; the gauges are
 * set from it when the endpoint is scraped, so the hot path only counts events, into the series
 * that the stream keeps (`seriesOf()`), and stamps the time of the last one on itself. The queues
 * stamp each event's arrival on its work item (not here, in a weak map keyed by object: a
 * weak-map write, read and deletion per event were a visible part of the watch's intake).
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
  /** When its last event or bookmark arrived (`performance.now()`); its start until one does. */
  lastEvent(): number;
  /** Whether the stream works (or has not failed for long). */
  healthy(): boolean;
  /** How many objects it knows. */
  objects(): number;
  /** How many events and wake-ups wait in its objects' queues. */
  depth(): number;
}

const sources = new Set<StreamSource>();

metricsRegistry.collect(() => {
  const { queueDepth, objects, watchSilence, watchHealthy } = kopfMetrics;
  for (const gauge of [queueDepth, objects, watchSilence, watchHealthy]) gauge.reset();
  const now = performance.now();
  for (const source of sources) {
    const namespace = source.namespace ?? "";
    queueDepth.add([source.resource], source.depth());
    objects.add([source.resource], source.objects());
    watchSilence.set([source.resource, namespace], Math.round(now - source.lastEvent()) / 1000);
    watchHealthy.set([source.resource, namespace], source.healthy() ? 1 : 0);
  }
});

/** Adds a stream to the gauges; the returned function removes it when the stream stops. */
export function registerStream(source: StreamSource): () => void {
  sources.add(source);
  return () => sources.delete(source);
}

/** Counts a watch request sent again after the stream's previous one ended, failed or stalled. */
export function recordWatchReconnect(resource: string): void {
  kopfMetrics.watchReconnects.inc([resource]);
}
