import assert from "node:assert/strict";
import { kopfMetrics, metricsRegistry } from "./metrics.ts";
import { registerStream } from "./stream_metrics.ts";

Deno.test("registered streams set the per-resource gauges at each scrape, summed over namespaces; unregistered ones leave", () => {
  const state = { depth: 3, objects: 5, healthy: true };
  const source = (namespace: string) => ({
    resource: "unit-widgets",
    namespace,
    lastEvent: () => performance.now(),
    healthy: () => state.healthy,
    objects: () => state.objects,
    depth: () => state.depth,
  });
  const first = registerStream(source("a"));
  const second = registerStream(source("b"));
  metricsRegistry.render();
  assert.equal(kopfMetrics.queueDepth.get(["unit-widgets"]), 6);
  assert.equal(kopfMetrics.objects.get(["unit-widgets"]), 10);
  assert.equal(kopfMetrics.watchHealthy.get(["unit-widgets", "a"]), 1);
  state.healthy = false;
  state.depth = 0;
  second();
  const text = metricsRegistry.render();
  assert.equal(kopfMetrics.queueDepth.get(["unit-widgets"]), 0);
  assert.equal(kopfMetrics.objects.get(["unit-widgets"]), 5);
  assert.match(text, /^kopf_watch_stream_healthy\{resource="unit-widgets",namespace="a"\} 0$/m);
  assert.doesNotMatch(text, /namespace="b"/);
  first();
});

Deno.test("a histogram's series kept by its user counts into the exposition; a counter's too", () => {
  const before = kopfMetrics.queueLatency.count(["unit-gadgets"]);
  const latency = kopfMetrics.queueLatency.seriesOf(["unit-gadgets"]);
  latency.observe(0.02);
  assert.equal(kopfMetrics.queueLatency.seriesOf(["unit-gadgets"]), latency, "one series per label values");
  kopfMetrics.watchEvents.seriesOf(["unit-gadgets", "ADDED"]).value++;
  assert.equal(kopfMetrics.watchEvents.get(["unit-gadgets", "ADDED"]), 1);
  assert.equal(kopfMetrics.queueLatency.count(["unit-gadgets"]), before + 1);
  const text = metricsRegistry.render();
  const sum = text.match(/^kopf_queue_latency_seconds_sum\{resource="unit-gadgets"\} (\S+)$/m);
  assert.ok(Number(sum?.[1]) >= 0.02, `the observation is rendered: ${sum?.[0]}`);
  assert.match(text, /^kopf_queue_latency_seconds_bucket\{resource="unit-gadgets",le="0.025"\} 1$/m);
});

Deno.test("seconds since the last event: from the stream's start, then from each event or bookmark", async () => {
  const stream = { lastEvent: performance.now() };
  const stop = registerStream({
    resource: "unit-silent",
    namespace: null,
    lastEvent: () => stream.lastEvent,
    healthy: () => true,
    objects: () => 0,
    depth: () => 0,
  });
  await new Promise((resolve) => setTimeout(resolve, 50));
  metricsRegistry.render();
  assert.ok(kopfMetrics.watchSilence.get(["unit-silent", ""]) >= 0.04);
  stream.lastEvent = performance.now();
  metricsRegistry.render();
  assert.ok(kopfMetrics.watchSilence.get(["unit-silent", ""]) < 0.04);
  stop();
});
