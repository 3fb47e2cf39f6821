/**
 * OpenTelemetry traces against a real API server: `kopf run` with Deno's OpenTelemetry on
 * (`OTEL_DENO=true`, OTLP/HTTP in JSON to a receiver on loopback) exports, for a handled object,
 * a cycle span with the handler attempt's `kopf.handler <id>` span under it (API.md's
 * attributes), a user span under the handler's, and the cycle's API requests (Deno's own fetch
 * spans) under the cycle; a failed attempt has the error status and the exception;
 * JSON log lines carry the active span's ids; and the log records are exported too.
 */

import assert from "node:assert/strict";
import { createExample, freshNamespace, KOPFEXAMPLES, testCluster } from "./support/cluster.ts";
import { eventually } from "./support/eventually.ts";
import { ApiError } from "../src/api/errors.ts";
import { resourcePath } from "../src/api/paths.ts";
import { webhookConfigurationPath } from "../src/api/webhook_configurations.ts";
import { KopfProcess } from "./support/kopf_process.ts";

interface OtlpValue {
  stringValue?: string;
  intValue?: string | number;
  doubleValue?: number;
  boolValue?: boolean;
}

interface OtlpSpan {
  traceId: string;
  spanId: string;
  parentSpanId: string;
  name: string;
  attributes: { key: string; value: OtlpValue }[];
  status?: { code?: number; message?: string };
  events?: { name: string; attributes: { key: string; value: OtlpValue }[] }[];
}

/** An OTLP/HTTP receiver of JSON-encoded traces and logs on a free loopback port. */
class OtlpReceiver implements AsyncDisposable {
  readonly spans: OtlpSpan[] = [];
  readonly logs: string[] = [];
  readonly #server: Deno.HttpServer<Deno.NetAddr>;

  constructor() {
    this.#server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, async (request) => {
      const path = new URL(request.url).pathname;
      assert.equal(request.headers.get("content-type"), "application/json", "OTLP in JSON");
      const body = await request.json();
      if (path === "/v1/traces") {
        for (const resource of body.resourceSpans ?? []) {
          for (const scope of resource.scopeSpans ?? []) this.spans.push(...scope.spans);
        }
      } else if (path === "/v1/logs") {
        for (const resource of body.resourceLogs ?? []) {
          for (const scope of resource.scopeLogs ?? []) {
            for (const record of scope.logRecords ?? []) this.logs.push(String(record.body?.stringValue ?? ""));
          }
        }
      }
      return Response.json({});
    });
  }

  get endpoint(): string {
    return `http://127.0.0.1:${this.#server.addr.port}`;
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.#server.shutdown();
  }
}

function attribute(span: OtlpSpan, key: string): string | number | boolean | undefined {
  const value = span.attributes.find((one) => one.key === key)?.value;
  if (!value) return undefined;
  if (value.intValue !== undefined) return Number(value.intValue);
  return value.stringValue ?? value.doubleValue ?? value.boolValue;
}

Deno.test("kopf run with OTEL_DENO=true: cycle → handler → user span, the cycle's API requests, errors, log ids", async () => {
  const { client } = await testCluster();
  const namespace = await freshNamespace(client, "tracing");
  await using receiver = new OtlpReceiver();
  await using operator = await KopfProcess.start(namespace, [
    "--log-format",
    "json",
    "tests/fixtures/tracing_handlers.ts",
  ], {
    OTEL_DENO: "true",
    OTEL_EXPORTER_OTLP_ENDPOINT: receiver.endpoint,
    OTEL_EXPORTER_OTLP_PROTOCOL: "http/json",
    OTEL_SERVICE_NAME: "kopf-tracing-test",
  });
  const ok = await createExample(client, namespace, "traced-ok", {});
  const flaky = await createExample(client, namespace, "traced-flaky", { fail: true });
  await eventually("two successful handler attempts in the output", () => {
    const count = operator.lines.filter((line) => line.includes("Handler 'traced' succeeded")).length;
    return count >= 2 ? true : undefined;
  });
  // The watch delivers in the order of the writes: once a later object is handled, the echoes of traced-ok's writes
  // have come too.
  await createExample(client, namespace, "traced-later", {});
  await eventually(
    "the later object handled",
    () =>
      operator.lines.some((line) => line.includes("traced-later") && line.includes("Handler 'traced' succeeded")) ||
      undefined,
  );
  // Deno exports in batches; stopping the operator flushes what is left.
  assert.equal((await operator.stop()).code, 0);
  const handlerSpans = await eventually("the handler spans at the receiver", () => {
    const spans = receiver.spans.filter((span) => span.name === "kopf.handler traced");
    return spans.length >= 3 ? spans : undefined;
  }, { seconds: 30 });
  const byId = new Map(receiver.spans.map((span) => [span.spanId, span]));

  const okAttempt = handlerSpans.find((span) => attribute(span, "k8s.object.uid") === ok.metadata.uid)!;
  assert.ok(okAttempt, "a span for the attempt of traced-ok");
  assert.equal(attribute(okAttempt, "k8s.resource"), "kopfexamples");
  assert.equal(attribute(okAttempt, "k8s.namespace.name"), namespace);
  assert.equal(attribute(okAttempt, "k8s.object.name"), "traced-ok");
  assert.equal(attribute(okAttempt, "kopf.cause"), "create");
  assert.equal(attribute(okAttempt, "kopf.retry"), 0);
  assert.notEqual(okAttempt.status?.code, 2, "no error");

  const cycle = byId.get(okAttempt.parentSpanId)!;
  assert.equal(cycle?.name, "kopf.cycle", "the handler's parent is the processing cycle");
  assert.equal(attribute(cycle, "k8s.object.uid"), ok.metadata.uid);
  // The echoes of the cycle's two writes (the annotations, then the status) are taken without a cycle of their own.
  const okCycles = receiver.spans.filter((span) =>
    span.name === "kopf.cycle" && attribute(span, "k8s.object.uid") === ok.metadata.uid
  );
  assert.equal(okCycles.length, 1, "one cycle for an object handled at once");
  const user = receiver.spans.find((span) => span.name === "user.work" && span.parentSpanId === okAttempt.spanId);
  assert.ok(user, "the user's span is a child of the handler's");
  assert.equal(user.traceId, okAttempt.traceId);
  // API requests are Deno's own fetch spans (a span of ours around each would double them), under the cycle.
  const requests = receiver.spans.filter((span) =>
    span.parentSpanId === cycle.spanId && attribute(span, "http.request.method") === "PATCH"
  );
  assert.ok(requests.length >= 1, "the cycle's patch is a child span of the cycle");
  assert.match(String(attribute(requests[0], "url.full")), /\/kopfexamples\/traced-ok\b/);
  assert.equal(String(attribute(requests[0], "http.response.status_code")), "200", "Deno writes the code as a string");

  const failed = handlerSpans.find((span) =>
    attribute(span, "k8s.object.uid") === flaky.metadata.uid && attribute(span, "kopf.retry") === 0
  )!;
  assert.ok(failed, "a span for the failed first attempt of traced-flaky");
  assert.equal(failed.status?.code, 2, "error status");
  assert.match(failed.status?.message ?? "", /an injected failure/);
  assert.ok(failed.events?.some((event) => event.name === "exception"), "the exception is recorded");
  const retried = handlerSpans.find((span) =>
    attribute(span, "k8s.object.uid") === flaky.metadata.uid && attribute(span, "kopf.retry") === 1
  );
  assert.ok(retried && retried.status?.code !== 2, "the retry succeeded");

  const inside = operator.lines.map((line) => {
    try {
      return JSON.parse(line);
    } catch {
      return undefined;
    }
  }).find((line) => line?.message === "Inside the user's span." && line.object?.name === "traced-ok");
  assert.ok(inside, "the JSON log line of the handler");
  assert.equal(inside.trace_id, okAttempt.traceId);
  assert.equal(inside.span_id, user.spanId, "the active span is the user's");
  assert.ok(receiver.logs.some((log) => log.includes("Inside the user's span.")), "log records are exported");
});

Deno.test("kopf run with OTEL_DENO=true: admission handler calls get kopf.webhook spans; a denial is no error", async () => {
  const { client } = await testCluster();
  const namespace = await freshNamespace(client, "tracing-webhook");
  const label = crypto.randomUUID().slice(0, 8);
  await using receiver = new OtlpReceiver();
  const operator = await KopfProcess.start(namespace, ["tests/fixtures/webhook_metrics_handlers.ts"], {
    KOPF_TEST_LABEL: label,
    OTEL_DENO: "true",
    OTEL_EXPORTER_OTLP_ENDPOINT: receiver.endpoint,
    OTEL_EXPORTER_OTLP_PROTOCOL: "http/json",
  });
  try {
    const create = (name: string, spec: Record<string, unknown>) =>
      client.request({
        method: "POST",
        path: resourcePath(KOPFEXAMPLES, { namespace }),
        body: {
          apiVersion: "kopf.dev/v1",
          kind: "KopfExample",
          metadata: { name, labels: { "metrics-test": label } },
          spec,
        },
      });
    await eventually("a denial by the webhook", async () => {
      try {
        await create(`deny-${crypto.randomUUID().slice(0, 6)}`, { deny: true });
        return undefined;
      } catch (error) {
        return error instanceof ApiError && /denied by the test/.test(error.message) ? true : undefined;
      }
    });
    await create("allowed", {});
    assert.equal((await operator.stop()).code, 0, operator.output);
    const spans = await eventually("the webhook spans at the receiver", () => {
      const spans = receiver.spans.filter((span) => span.name === "kopf.webhook check");
      return spans.some((span) => attribute(span, "kopf.admission.denied") === true) &&
          spans.some((span) => attribute(span, "kopf.admission.denied") === undefined)
        ? spans
        : undefined;
    }, { seconds: 30 });
    for (const span of spans) assert.notEqual(span.status?.code, 2, "neither an allowance nor a denial is an error");
    const byId = new Map(receiver.spans.map((span) => [span.spanId, span]));
    assert.ok(spans.every((span) => byId.has(span.parentSpanId)), "under the HTTP server's span of the review");
  } finally {
    await operator.stop("SIGKILL");
    for (const type of ["validating", "mutating"] as const) {
      await client.request({ method: "DELETE", path: webhookConfigurationPath(type, `${label}.metrics.kopf.dev`) })
        .catch(() => {});
    }
  }
});
