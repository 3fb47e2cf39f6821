/**
 * Server-side label selectors against a real kube-apiserver: when every handler of a resource
 * filters by literal labels, LIST and WATCH carry the labelSelector and unmatched objects never
 * reach the operator; mixed filters fall back to client-side filtering.
 *
 * What reaches the operator is seen through a label callback placed before the literal label in
 * one handler's filter: it is client-side (never pushed down) and is called for every object the
 * stream delivers, matching or not.
 */

import assert from "node:assert/strict";
import * as kopf from "@kopf/kopf";
import { CONFIGMAPS, freshNamespace, testCluster } from "./support/cluster.ts";
import { eventually } from "./support/eventually.ts";
import { captureLogs } from "./support/logs.ts";
import { runOperator } from "./support/operator.ts";
import { resourcePath } from "../src/api/paths.ts";

async function prepare(prefix: string): Promise<string> {
  const { client } = await testCluster();
  const namespace = await freshNamespace(client, prefix);
  const create = (name: string, labels?: Record<string, string>) =>
    client.request({
      method: "POST",
      path: resourcePath(CONFIGMAPS, { namespace }),
      body: { metadata: { name, labels }, data: { payload: "x".repeat(1000) } },
    });
  for (let i = 0; i < 20; i++) await create(`plain-${i}`);
  for (let i = 0; i < 3; i++) await create(`picked-${i}`, { app: "picked" });
  await create("other-app", { app: "other" });
  return namespace;
}

/**
 * A check for {@linkcode eventually} that the daemons have stopped `count` times; until then it
 * throws with the captured lines about the stream and `name`, so that a timeout shows what came.
 */
function stopsReached(stops: string[], count: number, lines: string[], name: string): () => boolean {
  return () => {
    if (stops.length >= count) return true;
    const related = lines.filter((line) => line.includes(name) || /watch/i.test(line)).slice(-30);
    throw new Error(`stops so far: ${JSON.stringify(stops)}; the last lines about ${name}:\n${related.join("\n")}`);
  };
}

/** The requests (method, path and query) the operator sent for configmaps, from its debug log lines. */
function configMapRequests(lines: string[], namespace: string): string[] {
  return lines.flatMap((line) => {
    const match = line.match(/Sending (GET \/api\/v1\/namespaces\/([^/]+)\/configmaps\S*)\./);
    return match && match[2] === namespace ? [match[1]] : [];
  });
}

Deno.test("literal label filters of every handler go to the server: unmatched objects never arrive", async () => {
  const namespace = await prepare("labels-pushdown");
  const lines = await captureLogs();
  const registry = new kopf.Registry();
  const delivered = new Set<string>();
  const recordAll = (_: unknown, context: { name?: string }) => {
    delivered.add(context.name!);
    return true;
  };
  const events = new Set<string>();
  kopf.on.event("configmaps", { registry, labels: { seen: recordAll, app: "picked" } }, function see({ name }) {
    events.add(name!);
  });
  kopf.index("configmaps", { registry, labels: { app: "picked" } }, function byName({ name }) {
    return name;
  });
  kopf.timer("configmaps", { registry, labels: { app: "picked" }, interval: 3600 }, function tick() {});
  const starts = new Set<string>();
  const stops: string[] = [];
  kopf.daemon("configmaps", { registry, labels: { app: "picked" } }, async function keep({ name, stopped }) {
    starts.add(name!);
    while (!stopped.aborted) await kopf.sleep(3600, stopped);
    stops.push(`${name} ${(stopped.reason as kopf.StopReason).causes.join(",")}`);
  });
  const operator = await runOperator(registry, namespace);
  try {
    await eventually("the picked objects' events", () => events.size === 3 || undefined);
    const requests = configMapRequests(lines, namespace);
    // The listing streams as the watch's first events (or, where the server cannot, comes by LIST): all carry it.
    const lists = requests.filter((request) => !request.includes("watch=true"));
    const watches = requests.filter((request) => request.includes("watch=true"));
    const listings = [...lists, ...watches.filter((request) => request.includes("sendInitialEvents=true"))];
    assert.ok(listings.length >= 1 && watches.length >= 1, requests.join("\n"));
    for (const request of requests) assert.match(request, /[?&]labelSelector=app%3Dpicked(&|$)/, request);
    assert.deepEqual([...delivered].sort(), ["picked-0", "picked-1", "picked-2"]);
    assert.equal(operator.running.client.counters.count({ verb: "list", resource: "configmaps" }), lists.length);

    // A change that makes an object match brings it in; one that makes it stop matching takes it out.
    using api = await kopf.connect({ kubeconfig: (await testCluster()).kubeconfig });
    await api.patch("configmaps", "plain-0", { metadata: { labels: { app: "picked" } } }, { namespace });
    await eventually("the newly matching object", () => events.has("plain-0") || undefined);
    assert.ok(!delivered.has("plain-1"));

    // Leaving the selection is a change that no longer matches (the server reports it as a deletion).
    // The daemon starts once the finalizer is on: a label removed before that only makes the finalizer's addition fail.
    await eventually(
      "the daemons of picked-1 and picked-2",
      () => starts.has("picked-1") && starts.has("picked-2") || undefined,
    );
    await api.patch("configmaps", "picked-1", { metadata: { labels: { app: null } } }, { namespace });
    await eventually("the daemon's stop", stopsReached(stops, 1, lines, "picked-1"));
    assert.deepEqual(stops, ["picked-1 filtersMismatch"]);
    // The object is no longer the operator's: its finalizer goes, though the operator sees it no more.
    await eventually("picked-1's finalizer released", async () => {
      const object = await api.get("configmaps", "picked-1", { namespace });
      return object && !object.metadata.finalizers?.length || undefined;
    });
    await api.delete("configmaps", "picked-2", { namespace });
    await eventually("the daemon's stop", stopsReached(stops, 2, lines, "picked-2"));
    assert.deepEqual(stops, ["picked-1 filtersMismatch", "picked-2 resourceDeleted"]);
  } finally {
    await operator.stop();
  }
});

Deno.test("mixed filters fall back to client-side filtering: no selector, every object arrives", async () => {
  const namespace = await prepare("labels-mixed");
  const lines = await captureLogs();
  const registry = new kopf.Registry();
  const delivered = new Set<string>();
  const events = new Set<string>();
  kopf.on.event("configmaps", {
    registry,
    labels: {
      seen: (_: unknown, context: { name?: string }) => delivered.add(context.name!) !== undefined,
      app: "picked",
    },
  }, function see({ name }) {
    events.add(name!);
  });
  // No label filter at all: this handler needs every object.
  kopf.on.event("configmaps", { registry }, function all() {});
  const operator = await runOperator(registry, namespace);
  try {
    await eventually("the picked objects' events", () => events.size === 3 || undefined);
    const requests = configMapRequests(lines, namespace);
    assert.ok(requests.length >= 1, requests.join("\n"));
    for (const request of requests) assert.doesNotMatch(request, /labelSelector/, request);
    await eventually("every object delivered", () => delivered.size === 24 || undefined);
    assert.deepEqual([...events].sort(), ["picked-0", "picked-1", "picked-2"], "still filtered client-side");
  } finally {
    await operator.stop();
  }
});

Deno.test("a mandatory deletion handler keeps filtering client-side: its finalizer must be released", async () => {
  const namespace = await prepare("labels-finalizer");
  const lines = await captureLogs();
  const registry = new kopf.Registry();
  const events = new Set<string>();
  kopf.on.event("configmaps", { registry, labels: { app: "picked" } }, function see({ name }) {
    events.add(name!);
  });
  kopf.on.delete("configmaps", { registry, labels: { app: "picked" } }, function gone() {});
  const operator = await runOperator(registry, namespace);
  try {
    await eventually("the picked objects' events", () => events.size === 3 || undefined);
    for (const request of configMapRequests(lines, namespace)) assert.doesNotMatch(request, /labelSelector/);
  } finally {
    await operator.stop();
  }
});
