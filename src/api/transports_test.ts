/**
 * The pooled client of a set of credentials: made once, shared by requests and streams, replaced
 * only when the client reported as stalled is still the pooled one.
 */

import assert from "node:assert/strict";
import type { Credentials } from "./credentials.ts";
import { LANE_STREAMS, SHARED_STREAMS, Transports } from "./transports.ts";

const credentials: Credentials = {
  server: "https://127.0.0.1:6443",
  tls: { insecure: false },
  source: "a test",
  authorization: () => Promise.resolve(undefined),
  invalidate: () => {},
};

Deno.test("requests and streams share one client until it is suspected; a replaced one is not suspected twice", async () => {
  const transports = new Transports();
  try {
    const transport = transports.of(credentials);
    const first = await transports.client(transport, credentials);
    assert.equal(await transports.client(transport, credentials), first, "one client for everything");

    const lane = transport.shared;
    assert.equal(transports.suspect(transport, lane, first, credentials, "a test's stall"), false, "not kept");
    const second = await transports.client(transport, credentials);
    assert.notEqual(second, first, "a new client after the suspicion");

    // Many requests on the dead connection time out together: only the first replaces it.
    assert.equal(transports.suspect(transport, lane, first, credentials, "a late timeout on the old one"), false);
    assert.equal(await transports.client(transport, credentials), second, "the new client stays");
  } finally {
    transports.close();
  }
});

Deno.test("a client that answered after the silence began is kept", async () => {
  const transports = new Transports();
  try {
    const transport = transports.of(credentials);
    const client = await transports.client(transport, credentials);
    const silentSince = performance.now();
    const lane = transport.shared;
    lane.answeredAt = silentSince + 1;
    assert.equal(transports.suspect(transport, lane, client, credentials, "a late bookmark", silentSince), true);
    assert.equal(await transports.client(transport, credentials), client, "the same client");
    lane.answeredAt = silentSince - 1;
    assert.equal(transports.suspect(transport, lane, client, credentials, "a dead connection", silentSince), false);
    assert.notEqual(await transports.client(transport, credentials), client, "replaced");
  } finally {
    transports.close();
  }
});

Deno.test("streams beyond the shared connection's share go over lanes of their own, each closed with its last", async () => {
  const transports = new Transports();
  try {
    const transport = transports.of(credentials);
    const shared = await transports.client(transport, credentials);
    const open = (count: number) =>
      Array.from({ length: count }, () => {
        const request = new AbortController();
        return { request, lane: transports.streamLane(transport, credentials, request.signal) };
      });
    const first = open(SHARED_STREAMS);
    assert.ok(first.every(({ lane }) => lane === transport.shared && lane.http === shared), "the shared client");
    const more = open(LANE_STREAMS + 1);
    assert.equal(transport.lanes.length, 2);
    assert.deepEqual(transport.lanes.map((lane) => lane.streams), [LANE_STREAMS, 1]);
    assert.notEqual(transport.lanes[0].http, shared);
    // A stream that ends frees its place; the lane whose last stream ends closes.
    first[0].request.abort();
    assert.equal(transport.shared.streams, SHARED_STREAMS - 1);
    assert.equal(open(1)[0].lane, transport.shared, "the shared client again");
    more.at(-1)!.request.abort();
    assert.equal(transport.lanes.length, 1);
    // A lane that stopped answering is left to its streams; the next streams go elsewhere.
    const lane = transport.lanes[0];
    assert.equal(transports.suspect(transport, lane, lane.http!, credentials, "a test's stall"), false);
    assert.equal(transport.lanes.length, 0);
    assert.notEqual(open(1)[0].lane, lane);
    for (const { request } of [...first, ...more]) request.abort();
  } finally {
    transports.close();
  }
});

Deno.test("an aborted request takes no place in a lane", () => {
  const transports = new Transports();
  try {
    const transport = transports.of(credentials);
    assert.throws(
      () => transports.streamLane(transport, credentials, AbortSignal.abort(new Error("stopped"))),
      /stopped/,
    );
    assert.equal(transport.shared.streams, 0);
  } finally {
    transports.close();
  }
});
