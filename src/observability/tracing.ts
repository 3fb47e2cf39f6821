/**
 * OpenTelemetry spans of the operator through Deno's built-in OpenTelemetry (`OTEL_DENO=true`,
 * exported over OTLP by Deno itself): a span per processing cycle of an object, per handler
 * attempt (`kopf.handler <id>`), per API request and per admission handler call. Deno's own
 * `fetch` spans nest under the request spans, and the spans users start with
 * `@opentelemetry/api` inside a handler nest under the handler's, because Deno registers its
 * context manager with that package.
 *
 * With OpenTelemetry off, `@opentelemetry/api` is not even loaded: every function here calls
 * its callback and returns, and nothing is recorded.
 *
 * @module
 */

import type { Span, SpanOptions, Tracer } from "@opentelemetry/api";
import type { KubernetesObject } from "../model/body.ts";

/** Whether Deno exports OpenTelemetry data: `OTEL_DENO=true` (or `1`), readable without a prompt. */
function otelEnabled(): boolean {
  try {
    const permission = Deno.permissions.querySync({ name: "env", variable: "OTEL_DENO" });
    if (permission.state !== "granted") return false;
    const value = Deno.env.get("OTEL_DENO")?.toLowerCase();
    return value === "true" || value === "1";
  } catch {
    return false;
  }
}

const api = otelEnabled() ? await import("@opentelemetry/api") : undefined;
const tracer: Tracer | undefined = api?.trace.getTracer("kopf");

/** Whether spans are recorded (Deno's OpenTelemetry is on). */
export const tracingEnabled: boolean = tracer !== undefined;

/** What a span attribute may hold. */
type Attributes = Record<string, string | number | boolean | undefined>;

function objectAttributes(resource: string, body: KubernetesObject): Attributes {
  return {
    "k8s.resource": resource,
    "k8s.namespace.name": body.metadata?.namespace ?? undefined,
    "k8s.object.name": body.metadata?.name ?? undefined,
    "k8s.object.uid": body.metadata?.uid ?? undefined,
  };
}

/** Runs `fn` in an active span; a throw that `failed` accepts marks the span as an error. */
async function inSpan<T>(
  name: string,
  options: SpanOptions,
  fn: (span: Span) => Promise<T>,
  failed: (error: unknown) => boolean = () => true,
): Promise<T> {
  return await tracer!.startActiveSpan(name, options, async (span) => {
    try {
      return await fn(span);
    } catch (error) {
      if (failed(error)) {
        span.recordException(error instanceof Error ? error : String(error));
        span.setStatus({
          code: api!.SpanStatusCode.ERROR,
          message: error instanceof Error ? error.message : String(error),
        });
      }
      throw error;
    } finally {
      span.end();
    }
  });
}

/** Runs one processing cycle of an object in a `kopf.cycle` span (the parent of its handlers' spans). */
export function traceCycle<T>(
  resource: string,
  body: KubernetesObject,
  event: string,
  fn: () => Promise<T>,
): Promise<T> {
  if (!tracer) return fn();
  return inSpan("kopf.cycle", { attributes: { ...objectAttributes(resource, body), "kopf.event": event } }, fn);
}

/**
 * Runs one handler attempt in a `kopf.handler <id>` span; a throw marks it as an error with the
 * exception, unless `ignored` says the throw is no failure (e.g. waiting for sub-handlers).
 */
export function traceHandler<T>(
  id: string,
  resource: string,
  body: KubernetesObject,
  cause: string,
  retry: number,
  fn: () => Promise<T>,
  ignored?: (error: unknown) => boolean,
): Promise<T> {
  if (!tracer) return fn();
  const attributes = { ...objectAttributes(resource, body), "kopf.cause": cause, "kopf.retry": retry };
  return inSpan(`kopf.handler ${id}`, { attributes }, fn, ignored && ((error) => !ignored(error)));
}

/** Runs one API request attempt in a client span `<method> <resource>`, with the answer's status code. */
export function traceRequest<T extends { readonly status: number }>(
  method: string,
  resource: string,
  fn: () => Promise<T>,
): Promise<T> {
  if (!tracer) return fn();
  const attributes = { "http.request.method": method, "k8s.resource": resource };
  return inSpan(`${method} ${resource}`, { kind: api!.SpanKind.CLIENT, attributes }, async (span) => {
    const response = await fn();
    span.setAttribute("http.response.status_code", response.status);
    if (response.status >= 400) span.setStatus({ code: api!.SpanStatusCode.ERROR, message: `HTTP ${response.status}` });
    return response;
  });
}

/** Runs one admission handler call in a `kopf.webhook <id>` span; `denial` tells a denial (no error) from a failure. */
export function traceWebhook<T>(id: string, fn: () => Promise<T>, denial: (error: unknown) => boolean): Promise<T> {
  if (!tracer) return fn();
  return inSpan(`kopf.webhook ${id}`, {}, async (span) => {
    try {
      return await fn();
    } catch (error) {
      if (denial(error)) span.setAttribute("kopf.admission.denied", true);
      throw error;
    }
  }, (error) => !denial(error));
}

/** The ids of the active span, for log lines; `undefined` without one (and always with OpenTelemetry off). */
export function activeTraceIds(): { trace_id: string; span_id: string } | undefined {
  const context = api?.trace.getActiveSpan()?.spanContext();
  if (!context || !api!.isSpanContextValid(context)) return undefined;
  return { trace_id: context.traceId, span_id: context.spanId };
}
