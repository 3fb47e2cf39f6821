import assert from "node:assert/strict";
import type { ApiClient } from "./client.ts";
import { confirmDeletions, matchesSelector } from "./deletion_confirmation.ts";
import { ApiNotFoundError } from "./errors.ts";
import type { KubernetesObject } from "../model/body.ts";
import type { Resource } from "../model/resource.ts";
import type { WatchEvent } from "./watch_state.ts";

const CONFIGMAPS: Resource = {
  group: "",
  version: "v1",
  plural: "configmaps",
  kind: "ConfigMap",
  singular: "configmap",
  namespaced: true,
  preferred: true,
  shortcuts: [],
  categories: [],
  verbs: ["get", "list", "watch"],
  subresources: [],
};

const object = (labels: Record<string, string>, uid = "u1"): KubernetesObject => ({
  apiVersion: "v1",
  kind: "ConfigMap",
  metadata: { namespace: "ns", name: "cm", uid, labels },
});

/** A client whose GET answers with `current` (or 404 when it is `null`). */
function clientWith(current: KubernetesObject | null): ApiClient {
  return {
    request: () => current ? Promise.resolve(current) : Promise.reject(new ApiNotFoundError("GET", 404, undefined)),
  } as unknown as ApiClient;
}

async function confirmed(deleted: KubernetesObject, current: KubernetesObject | null): Promise<WatchEvent[]> {
  async function* events(): AsyncGenerator<WatchEvent, void, undefined> {
    yield { type: "DELETED", object: deleted };
  }
  const out: WatchEvent[] = [];
  const signal = new AbortController().signal;
  for await (const event of confirmDeletions(events(), clientWith(current), CONFIGMAPS, "app=x", "cm", signal)) {
    out.push(event);
  }
  return out;
}

Deno.test("a deleted object that still exists unmatched has left the selection", async () => {
  const now = object({ app: "y" });
  assert.deepEqual(await confirmed(object({ app: "x" }), now), [{ type: "MODIFIED", object: now, left: true }]);
});

Deno.test("a deleted object that matches again by the time it is checked has not left: it stays known", async () => {
  const now = object({ app: "x" });
  assert.deepEqual(await confirmed(object({ app: "x" }), now), [{ type: "MODIFIED", object: now, left: false }]);
});

Deno.test("a deletion stays one when the object is gone or is another object of the same name", async () => {
  const deleted = object({ app: "x" });
  assert.deepEqual(await confirmed(deleted, null), [{ type: "DELETED", object: deleted }]);
  assert.deepEqual(await confirmed(deleted, object({ app: "x" }, "u2")), [{ type: "DELETED", object: deleted }]);
});

Deno.test("the selectors' equality requirements match as the server applies them", () => {
  const labels = { app: "x", tier: "web" };
  assert.ok(matchesSelector("app=x", labels));
  assert.ok(matchesSelector("app==x,tier", labels));
  assert.ok(matchesSelector("app!=y,!legacy", labels));
  assert.ok(matchesSelector("example.com/part-of", { "example.com/part-of": "" }));
  assert.ok(!matchesSelector("app=y", labels));
  assert.ok(!matchesSelector("app=x,!tier", labels));
  assert.ok(!matchesSelector("app!=x", labels));
  assert.ok(!matchesSelector("legacy", labels));
  assert.ok(!matchesSelector("app in (x,y)", labels), "a set-based requirement is not taken as matched");
});
