/**
 * docs/observability.md documents every metric the operator registers, with its labels and type,
 * so that a metric added, renamed or relabelled in src/observability/metrics.ts cannot leave the
 * page behind.
 */

import assert from "node:assert/strict";
import { Counter, type Gauge, Histogram } from "../src/observability/exposition.ts";
import { kopfMetrics } from "../src/observability/metrics.ts";

const page = await Deno.readTextFile(new URL("../docs/observability.md", import.meta.url));

function typeOf(metric: Counter | Gauge | Histogram): string {
  if (metric instanceof Counter) return "counter";
  if (metric instanceof Histogram) return "histogram";
  return "gauge";
}

Deno.test("docs/observability.md has a table row for every metric: its name, its labels in order, its type", () => {
  const metrics = Object.values(kopfMetrics);
  assert.ok(metrics.length >= 17, "the metrics of API.md are registered");
  for (const metric of metrics) {
    const written = metric.labelNames.length
      ? `\`${metric.name}{${metric.labelNames.join(",")}}\``
      : `\`${metric.name}\``;
    const row = page.split("\n").find((line) => line.startsWith(`| ${written} `));
    assert.ok(row, `no row for ${written} in docs/observability.md`);
    assert.equal(row.split("|")[2].trim(), typeOf(metric), `the type of ${metric.name}`);
  }
  const documented = [...page.matchAll(/^\| `(kopf_[a-z_]+)[{`]/gm)].map((match) => match[1]);
  const registered = new Set(metrics.map((metric) => metric.name));
  assert.deepEqual(documented.filter((name) => !registered.has(name)), [], "rows for metrics that do not exist");
});
