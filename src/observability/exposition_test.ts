import assert from "node:assert/strict";
import { Counter, Gauge, Histogram, MetricsRegistry } from "./exposition.ts";

Deno.test("the exposition: HELP and TYPE per family, escaped label values, cumulative buckets with +Inf, _sum and _count", () => {
  const registry = new MetricsRegistry();
  const runs = registry.add(new Counter("app_runs_total", "Runs\nso far.", ["handler", "outcome"]));
  const depth = registry.add(new Gauge("app_depth", "Queued.", []));
  const took = registry.add(new Histogram("app_seconds", "Durations.", ["handler"], [0.1, 1]));
  runs.inc(['a"b\\c\nd', "success"]);
  runs.inc(['a"b\\c\nd', "success"], 2);
  depth.set([], 4);
  took.observe(["h"], 0.05);
  took.observe(["h"], 0.5);
  took.observe(["h"], 5);
  assert.equal(
    registry.render(),
    [
      "# HELP app_runs_total Runs\\nso far.",
      "# TYPE app_runs_total counter",
      'app_runs_total{handler="a\\"b\\\\c\\nd",outcome="success"} 3',
      "# HELP app_depth Queued.",
      "# TYPE app_depth gauge",
      "app_depth 4",
      "# HELP app_seconds Durations.",
      "# TYPE app_seconds histogram",
      'app_seconds_bucket{handler="h",le="0.1"} 1',
      'app_seconds_bucket{handler="h",le="1"} 2',
      'app_seconds_bucket{handler="h",le="+Inf"} 3',
      'app_seconds_sum{handler="h"} 5.55',
      'app_seconds_count{handler="h"} 3',
      "",
    ].join("\n"),
  );
});

Deno.test("collectors set gauges before each rendering; a stopped collector no longer does", () => {
  const registry = new MetricsRegistry();
  const gauge = registry.add(new Gauge("app_objects", "Objects.", ["resource"]));
  let objects = 2;
  const stop = registry.collect(() => {
    gauge.reset();
    gauge.set(["pods"], objects);
  });
  assert.match(registry.render(), /^app_objects\{resource="pods"\} 2$/m);
  objects = 5;
  assert.match(registry.render(), /^app_objects\{resource="pods"\} 5$/m);
  stop();
  gauge.reset();
  assert.doesNotMatch(registry.render(), /resource="pods"/);
});

Deno.test("bad names, label names, label counts, bucket orders and duplicate metrics are refused with the reason", () => {
  assert.throws(() => new Counter("1bad", "", []), /must match/);
  assert.throws(() => new Counter("ok_total", "", ["le"]), /cannot be a label name/);
  assert.throws(() => new Histogram("ok_seconds", "", [], [1, 1]), /must ascend/);
  assert.throws(() => new Counter("ok_total", "", ["a", "b"]).inc(["x"]), /takes the labels a, b/);
  const registry = new MetricsRegistry();
  registry.add(new Gauge("twice", "", []));
  assert.throws(() => registry.add(new Gauge("twice", "", [])), /registered twice/);
});
