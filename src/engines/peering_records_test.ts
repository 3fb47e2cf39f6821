import assert from "node:assert/strict";
import { FakeApi, json } from "../../tests/support/fake_api.ts";
import {
  PeeringNotFoundError,
  peeringTargets,
  readPeers,
  removePeer,
  touchPeer,
  writePeers,
} from "./peering_records.ts";

const RECORD = { priority: 100, lifetime: 60, lastseen: "2024-05-01T12:00:00.000000+00:00" };

Deno.test("the peering objects of a scope: the ClusterKopfPeering for -A, a KopfPeering per namespace for -n", () => {
  assert.deepEqual(peeringTargets("default", { clusterwide: true, namespaces: ["a"] }), [
    { name: "default", namespace: null },
  ]);
  assert.deepEqual(peeringTargets("p", { clusterwide: false, namespaces: ["a", "b", "a"] }), [
    { name: "p", namespace: "a" },
    { name: "p", namespace: "b" },
  ]);
});

Deno.test("a record is merge-patched into status.<identity>; null removes it", async () => {
  const bodies: { method: string; path: string; type: string | null; body: unknown }[] = [];
  await using api = new FakeApi(async (request, url) => {
    bodies.push({
      method: request.method,
      path: url.pathname,
      type: request.headers.get("content-type"),
      body: await request.json(),
    });
    return json({});
  });
  await touchPeer(api.client, { name: "default", namespace: null }, "ann@box", RECORD);
  await removePeer(api.client, { name: "p", namespace: "ns" }, "ann@box");
  await writePeers(api.client, { name: "p", namespace: "ns" }, { "a": RECORD, "b": null });
  assert.deepEqual(bodies, [
    {
      method: "PATCH",
      path: "/apis/kopf.dev/v1/clusterkopfpeerings/default",
      type: "application/merge-patch+json",
      body: { status: { "ann@box": RECORD } },
    },
    {
      method: "PATCH",
      path: "/apis/kopf.dev/v1/namespaces/ns/kopfpeerings/p",
      type: "application/merge-patch+json",
      body: { status: { "ann@box": null } },
    },
    {
      method: "PATCH",
      path: "/apis/kopf.dev/v1/namespaces/ns/kopfpeerings/p",
      type: "application/merge-patch+json",
      body: { status: { a: RECORD, b: null } },
    },
  ]);
});

Deno.test("the records of a peering object are read from its status", async () => {
  await using api = new FakeApi(() => json({ metadata: { name: "default" }, status: { "ann@box": RECORD, x: 1 } }));
  const peers = await readPeers(api.client, { name: "default", namespace: null });
  assert.deepEqual(peers.map((peer) => [peer.identity, peer.priority, peer.lifetime]), [["ann@box", 100, 60]]);
});

Deno.test("a 404 naming the object: the object is missing, and the message says how to create it", async () => {
  await using api = new FakeApi(() =>
    json({
      kind: "Status",
      status: "Failure",
      reason: "NotFound",
      code: 404,
      message: 'kopfpeerings.kopf.dev "p" not found',
      details: { name: "p", group: "kopf.dev", kind: "kopfpeerings" },
    }, 404)
  );
  const error = await touchPeer(api.client, { name: "p", namespace: "ns" }, "a", RECORD).catch((e) => e);
  assert.ok(error instanceof PeeringNotFoundError, String(error));
  assert.equal(error.crdMissing, false);
  assert.deepEqual(error.target, { name: "p", namespace: "ns" });
  assert.match(error.message, /^The KopfPeering "p" in namespace "ns" does not exist: create it with `/);
  assert.ok(error.message.includes("{apiVersion: kopf.dev/v1, kind: KopfPeering, metadata: {name: p, namespace: ns}}"));
  assert.ok(!error.message.includes("\n"));
});

Deno.test("a 404 without an object's name: the CRD is missing, and the message says to apply peering.yaml", async () => {
  await using api = new FakeApi(() =>
    json({
      kind: "Status",
      status: "Failure",
      reason: "NotFound",
      code: 404,
      message: "the server could not find the requested resource",
      details: {},
    }, 404)
  );
  const error = await removePeer(api.client, { name: "default", namespace: null }, "a").catch((e) => e);
  assert.ok(error instanceof PeeringNotFoundError, String(error));
  assert.equal(error.crdMissing, true);
  assert.match(error.message, /clusterkopfpeerings\.kopf\.dev does not exist in the cluster/);
  assert.ok(error.message.includes("kubectl apply -f peering.yaml"), error.message);
  assert.ok(error.message.includes('ClusterKopfPeering "default"'), error.message);
  assert.ok(!error.message.includes("\n"));
});
