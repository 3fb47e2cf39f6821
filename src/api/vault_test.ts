import assert from "node:assert/strict";
import { ApiClient } from "./client.ts";
import type { Credentials } from "./credentials.ts";
import { ApiUnauthorizedError } from "./errors.ts";
import { LoginError } from "./login_error.ts";
import { RAN_OUT_MESSAGE, REMEMBERED_INVALIDATIONS, Vault, type VaultEntry } from "./vault.ts";

function credentials(name: string, server = "https://example.invalid"): Credentials {
  let invalidations = 0;
  return {
    server,
    tls: { insecure: false },
    source: name,
    authorization: () => Promise.resolve(`Bearer ${name}`),
    invalidate: () => void invalidations++,
    get invalidations() {
      return invalidations;
    },
  } as Credentials;
}

function entry(name: string, priority = 0, extra: Partial<VaultEntry> = {}): VaultEntry {
  return { credentials: credentials(name), priority, fingerprint: name, ...extra };
}

Deno.test("the highest priority wins; among equals a random one is picked", async () => {
  let random = 0;
  const vault = new Vault({ random: () => random });
  vault.populate(new Map([["low", entry("low", 10)], ["a", entry("a", 20)], ["b", entry("b", 20)]]));
  assert.equal((await vault.acquire()).key, "a");
  random = 0.99;
  assert.equal((await vault.acquire()).key, "b");
  assert.equal(vault.size, 3);
});

Deno.test("invalidated credentials are dropped and the next ones are used; repeated invalidations are harmless", async () => {
  const vault = new Vault();
  vault.populate(new Map([["high", entry("high", 20)], ["low", entry("low", 10)]]));
  const dropped: string[] = [];
  vault.onDropped((c) => dropped.push(c.source));
  const first = await vault.acquire();
  assert.equal(first.key, "high");
  vault.invalidate(first);
  vault.invalidate(first); // many requests fail with the same credentials at once
  assert.equal((await vault.acquire()).key, "low");
  assert.deepEqual(dropped, ["high"]);
  assert.equal(vault.size, 1);
});

Deno.test("an empty vault waits for one re-login shared by all waiting requests", async () => {
  let logins = 0;
  const vault: Vault = new Vault({
    reauthenticate: async () => {
      logins++;
      await new Promise((resolve) => setTimeout(resolve, 10));
      vault.populate(new Map([["login", entry(`token-${logins}`)]]));
    },
  });
  const items = await Promise.all([vault.acquire(), vault.acquire(), vault.acquire()]);
  assert.equal(logins, 1);
  assert.deepEqual(items.map((item) => item.fingerprint), ["token-1", "token-1", "token-1"]);
  vault.invalidate(items[0]);
  assert.equal((await vault.acquire()).fingerprint, "token-2");
  assert.equal(logins, 2);
});

Deno.test("a re-login that gives nothing fails the waiting requests with LoginError('Ran out of valid credentials…')", async () => {
  const failure = new LoginError(
    "Re-authentication has failed: no credentials were retrieved from the login handlers.",
  );
  let calls = 0;
  const vault = new Vault({
    reauthenticate: () => {
      calls++;
      return calls === 1 ? Promise.resolve() : Promise.reject(failure);
    },
  });
  await assert.rejects(
    vault.acquire(),
    (error: Error) => error instanceof LoginError && error.message === RAN_OUT_MESSAGE,
  );
  await assert.rejects(vault.acquire(), (error: Error) => error instanceof LoginError && error.cause === failure);
  assert.match(RAN_OUT_MESSAGE, /^Ran out of valid credentials\. .*add a login handler/);
  assert.equal(calls, 2, "each acquire after a failure tries again");
});

Deno.test("without a re-login, an empty vault fails at once", async () => {
  await assert.rejects(new Vault().acquire(), LoginError);
});

Deno.test(`the last ${REMEMBERED_INVALIDATIONS} rejected results per login handler are not accepted again`, async () => {
  const vault = new Vault();
  for (const name of ["t1", "t2", "t3", "t4"]) {
    assert.equal(vault.populate(new Map([["login", entry(name)]])), 1);
    vault.invalidate(await vault.acquire());
  }
  assert.equal(vault.populate(new Map([["login", entry("t4")]])), 0, "rejected just now");
  assert.equal(vault.populate(new Map([["login", entry("t2")]])), 0, "rejected three results ago");
  assert.equal(vault.populate(new Map([["other", entry("t4")]])), 1, "another handler's memory is its own");
  assert.equal(vault.populate(new Map([["login", entry("t1")]])), 1, "forgotten: four results ago");
});

Deno.test("expired credentials are dropped before use; already expired results are not taken", async () => {
  let now = 1000;
  let logins = 0;
  const vault: Vault = new Vault({
    now: () => now,
    reauthenticate: () => {
      logins++;
      vault.populate(new Map([["login", entry(`fresh-${logins}`, 0, { expiration: new Date(now + 100) })]]));
      return Promise.resolve();
    },
  });
  vault.populate(new Map([["login", entry("first", 0, { expiration: new Date(1500) })]]));
  assert.equal((await vault.acquire()).fingerprint, "first");
  now = 1500;
  assert.equal((await vault.acquire()).fingerprint, "fresh-1", "expired at 1500: logged in again");
  assert.equal(logins, 1);
  assert.equal(vault.populate(new Map([["late", entry("late", 99, { expiration: new Date(1400) })]])), 0);
});

Deno.test("a fixed entry survives a 401: it only refreshes itself", async () => {
  const fixed = credentials("fixed");
  const vault = Vault.fixed(fixed);
  const item = await vault.acquire();
  vault.invalidate(item);
  assert.equal((await vault.acquire()).credentials, fixed);
  assert.equal((fixed as unknown as { invalidations: number }).invalidations, 1);
});

Deno.test("waiting for a re-login stops when the signal aborts", async () => {
  const vault = new Vault({ reauthenticate: () => new Promise(() => {}) });
  const controller = new AbortController();
  const waiting = vault.acquire(controller.signal);
  controller.abort(new Error("stopping"));
  await assert.rejects(waiting, /stopping/);
});

Deno.test("the client: a 401 makes the request go again with the next credentials, then with a re-login's", async () => {
  const seen: (string | null)[] = [];
  const valid = new Set(["Bearer good"]);
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, (request) => {
    const authorization = request.headers.get("Authorization");
    seen.push(authorization);
    return valid.has(authorization ?? "")
      ? Response.json({ ok: authorization })
      : Response.json({ kind: "Status", code: 401 }, { status: 401 });
  });
  const url = `http://127.0.0.1:${server.addr.port}`;
  let logins = 0;
  const vault: Vault = new Vault({
    reauthenticate: () => {
      logins++;
      vault.populate(new Map([["login", { ...entry("later"), credentials: credentials("later", url) }]]));
      return Promise.resolve();
    },
  });
  vault.populate(
    new Map([
      ["bad", { ...entry("bad", 20), credentials: credentials("bad", url) }],
      ["good", { ...entry("good", 10), credentials: credentials("good", url) }],
    ]),
  );
  using client = new ApiClient(vault);
  try {
    assert.deepEqual(await client.request({ path: "/x" }), { ok: "Bearer good" });
    assert.deepEqual(seen, ["Bearer bad", "Bearer good"]);
    assert.equal(client.credentials.source, "good");

    valid.clear();
    valid.add("Bearer later");
    seen.length = 0;
    assert.deepEqual(await client.request({ path: "/x" }), { ok: "Bearer later" });
    assert.deepEqual(seen, ["Bearer good", "Bearer later"]);
    assert.equal(logins, 1);

    valid.clear();
    seen.length = 0;
    await assert.rejects(client.request({ path: "/x" }), (error: Error) => {
      assert.ok(error instanceof LoginError, String(error));
      assert.match(error.message, /^Ran out of valid credentials/);
      return true;
    });
    assert.deepEqual(seen, ["Bearer later"], "the re-login gave the rejected credentials again: not used");
  } finally {
    await server.shutdown();
  }
});

Deno.test("the client: fixed credentials get one refresh on 401, then the error", async () => {
  const server = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen: () => {} },
    () => Response.json({ kind: "Status", code: 401 }, { status: 401 }),
  );
  const fixed = credentials("fixed", `http://127.0.0.1:${server.addr.port}`);
  using client = new ApiClient(fixed);
  try {
    await assert.rejects(client.request({ path: "/x" }), ApiUnauthorizedError);
    assert.equal((fixed as unknown as { invalidations: number }).invalidations, 2);
    assert.equal(client.credentials, fixed);
  } finally {
    await server.shutdown();
  }
});
