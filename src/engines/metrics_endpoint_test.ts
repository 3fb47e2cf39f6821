import assert from "node:assert/strict";
import { answerMetrics, MetricsServer, parseMetricsEndpoint, sharesServer } from "./metrics_endpoint.ts";

Deno.test("metrics URLs: http only, host, port and path; bad ones are refused naming the metrics endpoint", () => {
  assert.deepEqual(parseMetricsEndpoint("http://0.0.0.0:9090/metrics"), {
    hostname: "0.0.0.0",
    port: 9090,
    path: "/metrics",
  });
  assert.throws(() => parseMetricsEndpoint("https://0.0.0.0:9090/metrics"), /metrics endpoint supports only http/);
  assert.throws(
    () => parseMetricsEndpoint("nonsense"),
    /metrics endpoint must be a URL like http:\/\/0\.0\.0\.0:8080\/metrics/,
  );
});

Deno.test("the liveness server also serves the metrics on the same host and port, never on the same path", () => {
  const liveness = parseMetricsEndpoint("http://127.0.0.1:8080/healthz");
  assert.equal(sharesServer(parseMetricsEndpoint("http://127.0.0.1:8080/metrics"), liveness), true);
  assert.equal(sharesServer(parseMetricsEndpoint("http://127.0.0.1:9090/metrics"), liveness), false);
  assert.equal(sharesServer(parseMetricsEndpoint("http://127.0.0.1:8080/metrics"), undefined), false);
  assert.throws(
    () => sharesServer(parseMetricsEndpoint("http://127.0.0.1:8080/healthz"), liveness),
    /need different paths; both are \/healthz/,
  );
});

Deno.test("the metrics server answers GET at its path in the text format, 404 elsewhere, 405 for other methods", async () => {
  await using server = MetricsServer.start(parseMetricsEndpoint("http://127.0.0.1:0/metrics"));
  const response = await fetch(server.url);
  assert.equal(response.status, 200);
  assert.equal(response.headers.get("content-type"), "text/plain; version=0.0.4; charset=utf-8");
  assert.match(await response.text(), /^# TYPE kopf_handler_runs_total counter$/m);
  const other = await fetch(server.url.replace("/metrics", "/other"));
  assert.equal(other.status, 404);
  await other.body?.cancel();
  const post = answerMetrics(new Request(server.url, { method: "POST" }));
  assert.equal(post.status, 405);
});
