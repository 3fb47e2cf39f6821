/** Tests of in-cluster credentials and of the rotating token file reader. */

import assert from "node:assert/strict";
import { join } from "node:path";
import { CredentialsError } from "./credentials.ts";
import { inClusterServer, loadServiceAccount, TokenFile } from "./service_account.ts";
import { inTempDir, withEnv } from "../../tests/support/environment.ts";

const CA_PEM = "-----BEGIN CERTIFICATE-----\nQ0EgY2VydA==\n-----END CERTIFICATE-----\n";

const IN_CLUSTER = { KUBERNETES_SERVICE_HOST: "10.96.0.1", KUBERNETES_SERVICE_PORT: "443" };

async function fakeRoot(dir: string, files: Record<string, string>): Promise<string> {
  for (const [name, content] of Object.entries(files)) await Deno.writeTextFile(join(dir, name), content);
  return dir;
}

async function rejection(promise: Promise<unknown>): Promise<CredentialsError> {
  const error = await promise.then(() => assert.fail("expected a CredentialsError"), (error: unknown) => error);
  assert.ok(error instanceof CredentialsError, `not a CredentialsError: ${error}`);
  assert.ok(!error.message.includes("\n"), `not one line: ${JSON.stringify(error.message)}`);
  return error;
}

Deno.test("inClusterServer: https, IPv6 hosts in brackets", () => {
  assert.equal(inClusterServer("10.96.0.1", "443"), "https://10.96.0.1:443");
  assert.equal(inClusterServer("fd00:10:96::1", "6443"), "https://[fd00:10:96::1]:6443");
  assert.equal(inClusterServer("[fd00::1]", "443"), "https://[fd00::1]:443");
});

Deno.test("service account: server, CA, namespace, token; rotated token used after invalidate()", async () => {
  await inTempDir(async (dir) => {
    const root = await fakeRoot(dir, { token: "token-1\n", "ca.crt": CA_PEM, namespace: "operators\n" });
    await withEnv(IN_CLUSTER, async () => {
      const credentials = await loadServiceAccount({ root });
      assert.equal(credentials.server, "https://10.96.0.1:443");
      assert.deepEqual(credentials.tls, { caCerts: [CA_PEM], insecure: false });
      assert.equal(credentials.defaultNamespace, "operators");
      assert.equal(credentials.source, `in-cluster service account (${root})`);
      assert.equal(await credentials.authorization(), "Bearer token-1");

      await Deno.writeTextFile(join(root, "token"), "token-2\n");
      assert.equal(await credentials.authorization(), "Bearer token-1", "not re-read before it is due");
      credentials.invalidate();
      assert.equal(await credentials.authorization(), "Bearer token-2");
      assert.equal(await credentials.authorization(), "Bearer token-2");
    });
  });
});

Deno.test("service account: IPv6 service host; no ca.crt means system roots; no namespace file", async () => {
  await inTempDir(async (dir) => {
    const root = await fakeRoot(dir, { token: "t" });
    await withEnv({ KUBERNETES_SERVICE_HOST: "fd00::1", KUBERNETES_SERVICE_PORT: "443" }, async () => {
      const credentials = await loadServiceAccount({ root });
      assert.equal(credentials.server, "https://[fd00::1]:443");
      assert.equal(credentials.tls.caCerts, undefined);
      assert.equal(credentials.defaultNamespace, undefined);
    });
  });
});

Deno.test("service account errors: missing env vars, bad port, missing or empty token file", async () => {
  await inTempDir(async (dir) => {
    const root = await fakeRoot(dir, { "ca.crt": CA_PEM });
    await withEnv({ KUBERNETES_SERVICE_HOST: undefined, KUBERNETES_SERVICE_PORT: undefined }, async () => {
      const error = await rejection(loadServiceAccount({ root }));
      assert.match(error.message, /^in-cluster service account \(.*\): /);
      assert.match(error.message, /KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT are not set/);
      assert.match(error.message, /kubeconfig/);
    });
    await withEnv({ KUBERNETES_SERVICE_HOST: "10.96.0.1", KUBERNETES_SERVICE_PORT: undefined }, async () => {
      const error = await rejection(loadServiceAccount({ root }));
      assert.match(error.message, /KUBERNETES_SERVICE_PORT is not set/);
    });
    await withEnv({ KUBERNETES_SERVICE_HOST: "10.96.0.1", KUBERNETES_SERVICE_PORT: "https" }, async () => {
      const error = await rejection(loadServiceAccount({ root }));
      assert.match(error.message, /KUBERNETES_SERVICE_PORT="https" is not a port number/);
    });
    await withEnv(IN_CLUSTER, async () => {
      const error = await rejection(loadServiceAccount({ root }));
      assert.ok(error.message.includes(`token file ${join(root, "token")} not found`), error.message);
      assert.match(error.message, /automountServiceAccountToken/);
      await Deno.writeTextFile(join(root, "token"), " \n");
      const empty = await rejection(loadServiceAccount({ root }));
      assert.ok(empty.message.includes(`token file ${join(root, "token")} is empty`), empty.message);
    });
  });
});

Deno.test("service account: the default root and source", async () => {
  await withEnv(IN_CLUSTER, async () => {
    const error = await loadServiceAccount().then(() => undefined, (error: unknown) => error);
    // On a machine that is not a pod there is no token; inside one, loading succeeds.
    if (error !== undefined) {
      assert.ok(error instanceof CredentialsError);
      assert.match(
        error.message,
        /^in-cluster service account: token file \/var\/run\/secrets\/kubernetes\.io\/serviceaccount\/token/,
      );
    }
  });
});

Deno.test("TokenFile: re-read when older than the max age, never before; concurrent reads share one", async () => {
  await inTempDir(async (dir) => {
    const path = join(dir, "token");
    await Deno.writeTextFile(path, "a\n");
    let now = 1_000;
    const tokens = new TokenFile(path, "test", { now: () => now });
    assert.deepEqual(await Promise.all([tokens.read(), tokens.read(), tokens.read()]), ["a", "a", "a"]);
    assert.equal(tokens.reads, 1);

    await Deno.writeTextFile(path, "b\n");
    now += 59_999;
    assert.equal(await tokens.read(), "a");
    assert.equal(tokens.reads, 1, "not re-read before 60 s");
    now += 1;
    assert.equal(await tokens.read(), "b");
    assert.equal(tokens.reads, 2, "re-read at 60 s");
    assert.equal(await tokens.read(), "b");
    assert.equal(tokens.reads, 2, "the age counts from the last read");
  });
});

Deno.test("TokenFile: a failed re-read keeps the last good token until the next re-read is due", async () => {
  await inTempDir(async (dir) => {
    const path = join(dir, "token");
    await Deno.writeTextFile(path, "good");
    let now = 0;
    const tokens = new TokenFile(path, "test", { now: () => now });
    assert.equal(await tokens.read(), "good");
    await Deno.remove(path);
    tokens.invalidate();
    assert.equal(await tokens.read(), "good");
    assert.equal(tokens.reads, 2);
    assert.equal(await tokens.read(), "good");
    assert.equal(tokens.reads, 2, "not retried on every call");
    await Deno.writeTextFile(path, "new");
    now += 60_000;
    assert.equal(await tokens.read(), "new");
  });
});

Deno.test("TokenFile: never read successfully: a CredentialsError naming the source and the file, retried next time", async () => {
  await inTempDir(async (dir) => {
    const path = join(dir, "token");
    const tokens = new TokenFile(path, "kubeconfig /x/config");
    const error = await rejection(tokens.read());
    assert.equal(error.message, `kubeconfig /x/config: token file ${path} not found`);
    await Deno.writeTextFile(path, "late");
    assert.equal(await tokens.read(), "late");
  });
});
