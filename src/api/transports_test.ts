/**
 * The pooled client of a set of credentials: made once, shared by requests and streams, replaced
 * only when the client reported as stalled is still the pooled one.
 */

import assert from "node:assert/strict";
import type { Credentials } from "./credentials.ts";
import { Transports } from "./transports.ts";

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

    assert.equal(transports.suspect(transport, first, credentials, "a test's stall"), false, "not kept");
    const second = await transports.client(transport, credentials);
    assert.notEqual(second, first, "a new client after the suspicion");

    // Many requests on the dead connection time out together: only the first replaces it.
    assert.equal(transports.suspect(transport, first, credentials, "a late timeout on the old connection"), false);
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
    transport.answeredAt = silentSince + 1;
    assert.equal(transports.suspect(transport, client, credentials, "a late bookmark", silentSince), true, "kept");
    assert.equal(await transports.client(transport, credentials), client, "the same client");
    transport.answeredAt = silentSince - 1;
    assert.equal(transports.suspect(transport, client, credentials, "a dead connection", silentSince), false);
    assert.notEqual(await transports.client(transport, credentials), client, "replaced");
  } finally {
    transports.close();
  }
});
