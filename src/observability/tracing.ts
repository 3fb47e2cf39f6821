/**
 * OpenTelemetry spans of the operator through Deno's built-in OpenTelemetry (`OTEL_DENO=true`,
 * exported over OTLP by Deno itself): a span per processing cycle of an object, per handler
 * attempt (`kopf.handler <id>`) and per admission handler call. API requests are traced by Deno's
 * own `fetch` spans, which nest under the cycle's or handler's span: a span of ours around each
 * would double the spans per request and add nothing they lack (method, URL, status code). The
 * spans users start with `@opentelemetry/api` inside a handler nest under the handler's, because
 * Deno registers its context manager with that package.
 *
 * Each span that Deno records costs a fixed price when it ends (bench/otel_runtime.ts), so the
 * operator makes few, and none under a cycle that the sampler dropped: every standard sampler
 * decides per trace, so a handler's span there would be dropped too. Attributes are only built
 * for sampled spans. Deno's spans say they are recording even when dropped; the sampled flag of
 * their context tells.
 *
 * With OpenTelemetry off, `@opentelemetry/api` is not even loaded: every function here calls
 * its callback and returns, and nothing is recorded.
 *
 * @module
 */

import type { Span, Tracer } from "@opentelemetry/api";
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

/** The sampled bit of W3C trace flags (`TraceFlags.SAMPLED`). */
const SAMPLED = 1;

/** Whether Deno exports a span: the sampler's decision, which `isRecording()` does not reflect. */
function sampled(span: Span): boolean {
  return (span.spanContext().traceFlags & SAMPLED) !== 0;
}

/** Whether a span made now would be dropped with its parent: the active span is not sampled. */
function parentDropped(): boolean {
  const active = api!.trace.getActiveSpan();
  return active !== undefined && !sampled(active);
}

function setObjectAttributes(span: Span, resource: string, body: KubernetesObject): void {
  const metadata = body.metadata;
  span.setAttribute("k8s.resource", resource);
  if (metadata?.namespace) span.setAttribute("k8s.namespace.name", metadata.namespace);
  if (metadata?.name) span.setAttribute("k8s.object.name", metadata.name);
  if (metadata?.uid) span.setAttribute("k8s.object.uid", metadata.uid);
}

/** Runs `fn` in an active span; a throw that `failed` accepts marks the span as an error. */
async function inSpan<T>(
  name: string,
  fn: (span: Span) => Promise<T>,
  failed: (error: unknown) => boolean = () => true,
): Promise<T> {
  return await tracer!.startActiveSpan(name, async (span) => {
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
  return inSpan("kopf.cycle", (span) => {
    if (sampled(span)) {
      setObjectAttributes(span, resource, body);
      span.setAttribute("kopf.event", event);
    }
    return fn();
  });
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
  if (!tracer || parentDropped()) return fn();
  return inSpan(`kopf.handler ${id}`, (span) => {
    if (sampled(span)) {
      setObjectAttributes(span, resource, body);
      span.setAttribute("kopf.cause", cause);
      span.setAttribute("kopf.retry", retry);
    }
    return fn();
  }, ignored && ((error) => !ignored(error)));
}

/** Runs one admission handler call in a `kopf.webhook <id>` span; `denial` tells a denial (no error) from a failure. */
export function traceWebhook<T>(id: string, fn: () => Promise<T>, denial: (error: unknown) => boolean): Promise<T> {
  if (!tracer || parentDropped()) return fn();
  return inSpan(`kopf.webhook ${id}`, async (span) => {
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
