import assert from "node:assert/strict";
import { ConnectionInfo } from "../api/connection_info.ts";
import { LoginError } from "../api/login_error.ts";
import { Vault } from "../api/vault.ts";
import { Settings } from "../settings/settings.ts";
import { authenticate, openVault } from "./login.ts";
import { login } from "./registration.ts";
import { Registry } from "./registry.ts";

const SERVER = "https://10.0.0.1:6443";

function run(registry: Registry) {
  return { registry, settings: new Settings(), memo: {} };
}

Deno.test("on.login registers a login activity; unknown options are TypeErrors", () => {
  const registry = new Registry();
  const fn = login({ registry, retries: 3 }, function loginFn() {
    return null;
  });
  assert.equal(typeof fn, "function");
  assert.deepEqual(registry.activities("login").map((handler) => handler.id), ["loginFn"]);
  assert.throws(
    () =>
      login({ registry, labels: {} } as never, function other() {
        return null;
      }),
    {
      name: "TypeError",
      message: "kopf.on.login(other): unknown option labels; " +
        "the options of on.login are: id, param, registry, errors, timeout, retries, backoff.",
    },
  );
});

Deno.test("all login handlers' results go into the vault by handler id, with their priorities", async () => {
  const registry = new Registry();
  login({ registry }, function low() {
    return new ConnectionInfo({ server: SERVER, token: "low", priority: 1 });
  });
  login({ registry }, function high() {
    return new ConnectionInfo({ server: SERVER, token: "high", priority: 2 });
  });
  login({ registry }, function none() {
    return null;
  });
  const vault = new Vault();
  await authenticate(run(registry), vault, "Initial authentication");
  assert.equal(vault.size, 2);
  const best = await vault.acquire();
  assert.equal(best.key, "high");
  assert.equal(await best.credentials.authorization(), "Bearer high");
  assert.equal(best.credentials.source, "login handler 'high'");
});

Deno.test("nothing, or something other than a ConnectionInfo, fails the authentication with a LoginError", async () => {
  const nothing = new Registry();
  login({ registry: nothing }, function none() {
    return undefined;
  });
  await assert.rejects(
    authenticate(run(nothing), new Vault(), "Initial authentication"),
    new LoginError("Initial authentication has failed: no credentials were retrieved from the login handlers."),
  );
  const wrong = new Registry();
  login({ registry: wrong, id: "wrong" }, (() => ({ server: SERVER, token: "t" })) as never);
  await assert.rejects(
    authenticate(run(wrong), new Vault(), "Re-authentication"),
    /^LoginError: Re-authentication has failed: login handler 'wrong' has returned an object of Object; return a kopf\.ConnectionInfo/,
  );
});

Deno.test("given credentials make a fixed vault: the login handlers do not run", async () => {
  const registry = new Registry();
  let calls = 0;
  login({ registry }, function notRun() {
    calls++;
    return null;
  });
  const credentials = {
    server: SERVER,
    tls: { insecure: false },
    source: "given",
    authorization: () => Promise.resolve(undefined),
    invalidate: () => {},
  };
  const vault = await openVault(run(registry), credentials, () => {});
  assert.equal((await vault.acquire()).credentials, credentials);
  assert.equal(calls, 0);
});

Deno.test("a vault that runs dry logs in again; a failed re-login reaches onFailure", async () => {
  const registry = new Registry();
  let calls = 0;
  login({ registry }, function counting() {
    calls++;
    return calls <= 2 ? new ConnectionInfo({ server: SERVER, token: `t${calls}` }) : null;
  });
  const failures: unknown[] = [];
  const vault = await openVault(run(registry), undefined, (error) => failures.push(error));
  vault.invalidate(await vault.acquire());
  assert.equal(await (await vault.acquire()).credentials.authorization(), "Bearer t2");
  vault.invalidate(await vault.acquire());
  await assert.rejects(vault.acquire(), /^LoginError: Ran out of valid credentials\./);
  assert.equal(calls, 3);
  assert.equal(failures.length, 1);
  assert.match(String(failures[0]), /Re-authentication has failed: no credentials were retrieved/);
});
