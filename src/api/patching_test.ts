import assert from "node:assert/strict";
import type { ApiClient, RequestOptions } from "./client.ts";
import { applyMergePatch, applyPatch } from "./patching.ts";
import { ApiNotFoundError } from "./errors.ts";
import type { KubernetesObject } from "../model/body.ts";
import { Patch } from "../model/patch.ts";
import type { Resource } from "../model/resource.ts";

const resource = (subresources: string[]): Resource => ({
  group: "kopf.dev",
  version: "v1",
  plural: "kopfexamples",
  kind: "KopfExample",
  singular: "kopfexample",
  namespaced: true,
  preferred: true,
  shortcuts: [],
  categories: [],
  verbs: ["patch"],
  subresources,
});
const body: KubernetesObject = {
  apiVersion: "kopf.dev/v1",
  kind: "KopfExample",
  metadata: { namespace: "ns", name: "kex" },
};

/** A client that records the requests and answers each with the object it names. */
function recordingClient(fail?: Error): { client: ApiClient; sent: RequestOptions[] } {
  const sent: RequestOptions[] = [];
  const client = {
    request: (options: RequestOptions) => {
      sent.push(options);
      return fail
        ? Promise.reject(fail)
        : Promise.resolve({ ...body, metadata: { ...body.metadata, resourceVersion: String(sent.length) } });
    },
  } as unknown as ApiClient;
  return { client, sent };
}

Deno.test("a merge-patch goes in two parts where status is a subresource: the main part first", async () => {
  const { client, sent } = recordingClient();
  const result = await applyMergePatch(client, resource(["status"]), body, {
    metadata: { annotations: { a: "1" } },
    status: { done: { ok: true } },
  });
  assert.deepEqual(sent.map((options) => [options.path, options.resource, options.body]), [
    ["/apis/kopf.dev/v1/namespaces/ns/kopfexamples/kex", "kopfexamples", { metadata: { annotations: { a: "1" } } }],
    ["/apis/kopf.dev/v1/namespaces/ns/kopfexamples/kex/status", "kopfexamples/status", {
      status: { done: { ok: true } },
    }],
  ]);
  assert.equal(result?.metadata.resourceVersion, "2");
  // The status part ends a write begun: it waits for a request slot ahead of new work, the main part does not.
  assert.deepEqual(sent.map((options) => options.ahead), [false, true]);
});

Deno.test("a merge-patch with status only sends one request to the status subresource", async () => {
  const { client, sent } = recordingClient();
  await applyMergePatch(client, resource(["status"]), body, { status: { done: { ok: true } } });
  assert.deepEqual(sent.map((options) => options.resource), ["kopfexamples/status"]);
  // Alone, it begins the write: no going ahead of others.
  assert.deepEqual(sent.map((options) => options.ahead), [false]);
});

Deno.test("without a status subresource, the whole merge-patch goes in one request", async () => {
  const { client, sent } = recordingClient();
  await applyMergePatch(client, resource([]), body, { spec: { x: 1 }, status: { y: 2 } });
  assert.deepEqual(sent.map((options) => options.body), [{ spec: { x: 1 }, status: { y: 2 } }]);
});

Deno.test("applyPatch renders the patch and sends the same requests; nothing for an empty patch", async () => {
  const { client, sent } = recordingClient();
  assert.equal(await applyPatch(client, resource(["status"]), body, new Patch()), null);
  assert.equal(sent.length, 0);
  const patch = new Patch();
  patch.metadata.labels.app = "x";
  patch.status.done = { ok: true };
  await applyPatch(client, resource(["status"]), body, patch);
  assert.deepEqual(sent.map((options) => options.body), [{ metadata: { labels: { app: "x" } } }, {
    status: { done: { ok: true } },
  }]);
});

Deno.test("an object gone meanwhile gives null", async () => {
  const { client } = recordingClient(new ApiNotFoundError("PATCH x", 404, undefined, ""));
  assert.equal(await applyMergePatch(client, resource([]), body, { spec: { x: 1 } }), null);
});

Deno.test("a stop during the main part does not keep the status part from being sent; before it, nothing is sent", async () => {
  const { client, sent } = recordingClient();
  const stop = new AbortController();
  const original = client.request.bind(client);
  (client as { request: ApiClient["request"] }).request = ((options: RequestOptions) => {
    stop.abort(new Error("the stream is stopping")); // While the first request is under way.
    return original(options);
  }) as ApiClient["request"];
  await applyMergePatch(
    client,
    resource(["status"]),
    body,
    { metadata: { annotations: { a: "b" } }, status: { r: 1 } },
    stop.signal,
  );
  assert.deepEqual(sent.map((options) => options.path.endsWith("/status")), [false, true]);
  assert.ok(sent.every((options) => options.signal === undefined), "no request of a begun write can be aborted");

  const later = recordingClient();
  await assert.rejects(
    applyMergePatch(later.client, resource(["status"]), body, { status: { r: 1 } }, stop.signal),
    /the stream is stopping/,
  );
  assert.equal(later.sent.length, 0);
});
