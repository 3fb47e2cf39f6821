/**
 * One stream against a scripted API server whose watch sends what the test releases: what the
 * stream does with each event, between the watch and the cycles.
 */

import assert from "node:assert/strict";
import * as kopf from "../../mod.ts";
import { KOPFEXAMPLES } from "../../tests/support/cluster.ts";
import { eventually } from "../../tests/support/eventually.ts";
import { FakeApi, json, mergePatch } from "../../tests/support/fake_api.ts";
import { OperatorIndexes } from "../engines/indexing.ts";
import type { ChangeHandler } from "../handling/handlers.ts";
import { allAtOnce } from "../handling/lifecycles.ts";
import type { KubernetesObject } from "../model/body.ts";
import type { Resource } from "../model/resource.ts";
import { kopfMetrics, metricsRegistry } from "../observability/metrics.ts";
import { Settings } from "../settings/settings.ts";
import { serveResource } from "./serving.ts";

// Without a status subresource: the cycle's patch is one write, so one echo.
const EXAMPLES: Resource = { ...KOPFEXAMPLES, subresources: [] };

/** Events of the stream's resource, by type, and queued events whose wait was observed, so far in this process. */
function counts(): { modified: number; queued: number; depth: number } {
  metricsRegistry.render(); // the depth gauge is collected from the streams when rendered
  return {
    modified: kopfMetrics.watchEvents.get([EXAMPLES.plural, "MODIFIED"]),
    queued: kopfMetrics.queueLatency.count([EXAMPLES.plural]),
    depth: kopfMetrics.queueDepth.get([EXAMPLES.plural]),
  };
}

Deno.test("the echo of the operator's own write, with nothing of the object queued, is taken on arrival: never queued, no cycle", async () => {
  const encoder = new TextEncoder();
  let object: KubernetesObject = {
    apiVersion: "kopf.dev/v1",
    kind: "KopfExample",
    metadata: { name: "echoed", namespace: "ns", uid: "uid-echoed", resourceVersion: "2" },
    spec: { field: "value" },
  };
  const watch = Promise.withResolvers<(event: unknown) => void>();
  const patched = Promise.withResolvers<void>();
  await using api = new FakeApi(async (request, url) => {
    if (request.method === "PATCH") {
      object = mergePatch(object, await request.json()) as KubernetesObject;
      object.metadata.resourceVersion = "3";
      patched.resolve();
      return json(object);
    }
    if (!url.searchParams.get("watch")) return json({ metadata: { resourceVersion: "1" }, items: [] });
    const body = new ReadableStream<Uint8Array>({
      start(controller) {
        watch.resolve((event) => controller.enqueue(encoder.encode(`${JSON.stringify(event)}\n`)));
      },
    });
    return new Response(body, { headers: { "Content-Type": "application/json" } });
  });
  const registry = new kopf.Registry();
  let calls = 0;
  kopf.on.create("kopfexamples", { registry, id: "created" }, () => ++calls);
  const changes = registry.handlers.filter((handler): handler is ChangeHandler => handler.kind === "change");
  // Listings by pages: the scripted watch sends no bookmark ending a streamed one.
  const settings = new Settings();
  settings.watching.streamingLists = false;
  const before = counts();
  const stream = serveResource({
    client: api.client,
    resource: EXAMPLES,
    namespace: "ns",
    settings,
    lifecycle: allAtOnce,
    memo: {},
    events: [],
    changes,
    background: [],
    indexes: new OperatorIndexes([]),
    indexKey: "ns",
  });
  try {
    const send = await watch.promise;
    send({ type: "ADDED", object });
    await patched.promise;
    await eventually("the creation's cycle over", () => counts().depth === 0 && counts().queued > before.queued);
    assert.equal(counts().queued - before.queued, 1, "the creation was queued");
    send({ type: "MODIFIED", object });
    // Delivered and no longer queued or running (checked between tasks: never amid the event's way).
    await eventually("the echo over", () => counts().modified - before.modified === 1 && counts().depth === 0);
    assert.equal(counts().queued - before.queued, 1, "the echo was not queued");
    // A change by someone else, once the echo is taken, is queued and handled as ever.
    send({ type: "MODIFIED", object: { ...object, metadata: { ...object.metadata, resourceVersion: "4" } } });
    await eventually("the change over", () => counts().modified - before.modified === 2 && counts().depth === 0);
    assert.equal(counts().queued - before.queued, 2, "the change was queued");
    assert.equal(calls, 1, "the handler ran for the creation alone");
    assert.equal(api.requests.filter((url) => !url.searchParams.get("watch")).length, 2, "a LIST and one PATCH");
  } finally {
    await stream.stop("operatorExiting", 0);
  }
});
