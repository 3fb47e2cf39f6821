/**
 * Authentication against a real API server: login handlers and what
 * they return (`kopf.ConnectionInfo`, `null`), the ready-made logins without handlers, the
 * vault's re-authentication after a 401 and on expiration, and the ordering after the startup
 * handlers.
 */

import assert from "node:assert/strict";
import * as kopf from "@kopf/kopf";
import type { ApiClient } from "../src/api/client.ts";
import { createExample, freshNamespace, getExample, testCluster } from "./support/cluster.ts";
import { eventually } from "./support/eventually.ts";
import { KopfProcess } from "./support/kopf_process.ts";
import { runOperator } from "./support/operator.ts";
import { TcpProxy } from "./support/tcp_proxy.ts";

const FIXTURE = "tests/fixtures/login/handlers.ts";

/** The server, base64 CA and admin token of the shared cluster, from the kubeconfig it wrote (JSON). */
async function clusterAccess(): Promise<{ server: string; caData: string; token: string }> {
  const config = JSON.parse(await Deno.readTextFile(Deno.env.get("KOPF_TEST_KUBECONFIG")!));
  return {
    server: config.clusters[0].cluster.server,
    caData: config.clusters[0].cluster["certificate-authority-data"],
    token: config.users[0].user.token,
  };
}

/** Creates an example and waits until the create handler has stored its result. */
async function handled(client: ApiClient, namespace: string, name: string): Promise<unknown> {
  await createExample(client, namespace, name);
  return await eventually(`${name} to be handled`, async () => {
    const body = await getExample(client, namespace, name);
    return (body.status as Record<string, unknown> | undefined)?.createFn;
  });
}

/** A registry with a create handler, to see that the operator works. */
function registryWithCreate(): kopf.Registry {
  const registry = new kopf.Registry();
  kopf.on.create("kopfexamples", { registry }, function createFn() {
    return { handled: true };
  });
  return registry;
}

function indexOf(lines: string[], pattern: RegExp): number {
  return lines.findIndex((line) => pattern.test(line));
}

Deno.test("kopf run: a login handler returning loginWithKubeconfig() authenticates; objects are handled", async () => {
  const { client } = await testCluster();
  const namespace = await freshNamespace(client, "login-kc");
  await using operator = await KopfProcess.start(namespace, [FIXTURE], { KOPF_TEST_LOGIN: "kubeconfig" });
  await operator.waitForLine(/Initial authentication has finished\./);
  assert.deepEqual(await handled(client, namespace, "a"), { handled: true });
  assert.ok(operator.lines.some((line) => /Activity 'loginFn' succeeded\./.test(line)), operator.output);
  assert.equal((await operator.stop()).code, 0, operator.output);
});

Deno.test("kopf run: a login handler returning only null fails the operator with one line, exit 1", async () => {
  const { client } = await testCluster();
  const namespace = await freshNamespace(client, "login-null");
  await createExample(client, namespace, "untouched");
  await using operator = await KopfProcess.start(namespace, [FIXTURE], { KOPF_TEST_LOGIN: "nothing" });
  const status = await operator.exited;
  assert.equal(status.code, 1, operator.output);
  assert.equal(
    operator.lines.at(-1),
    "kopf: Initial authentication has failed: no credentials were retrieved from the login handlers.",
    operator.output,
  );
  const body = await getExample(client, namespace, "untouched");
  assert.equal(body.status, undefined);
  assert.deepEqual(body.metadata.finalizers ?? [], []);
});

Deno.test("in-process: null → LoginError; a login handler out of retries → LoginError naming it", async () => {
  const { client } = await testCluster();
  const namespace = await freshNamespace(client, "login-err");
  const nothing = registryWithCreate();
  kopf.on.login({ registry: nothing, id: "nothingFn" }, () => null);
  await assert.rejects(
    runOperator(nothing, namespace, { credentials: undefined }),
    (error: Error) =>
      error instanceof kopf.LoginError &&
      error.message === "Initial authentication has failed: no credentials were retrieved from the login handlers.",
  );

  const failing = registryWithCreate();
  let attempts = 0;
  kopf.on.login({ registry: failing, retries: 2, backoff: 0.1 }, function brokenLogin() {
    attempts++;
    throw new Error("the secret store is down");
  });
  await assert.rejects(runOperator(failing, namespace, { credentials: undefined }), (error: Error) => {
    assert.ok(error instanceof kopf.LoginError, String(error));
    assert.match(error.message, /^Initial authentication has failed: Login handler 'brokenLogin' failed: /);
    return true;
  });
  assert.equal(attempts, 2);
});

Deno.test("in-process: ConnectionInfo with a token and base64 CA data works", async () => {
  const { client } = await testCluster();
  const namespace = await freshNamespace(client, "login-token");
  const { server, caData, token } = await clusterAccess();
  const registry = registryWithCreate();
  let logins = 0;
  kopf.on.login({ registry }, function tokenLogin() {
    logins++;
    return new kopf.ConnectionInfo({ server, caData, token, defaultNamespace: namespace });
  });
  const operator = await runOperator(registry, namespace, { credentials: undefined });
  try {
    assert.deepEqual(await handled(client, namespace, "a"), { handled: true });
    assert.equal(operator.running.client.credentials.defaultNamespace, namespace);
    assert.equal(operator.running.client.credentials.source, "login handler 'tokenLogin'");
  } finally {
    await operator.stop();
  }
  assert.equal(logins, 1, "no re-authentication was needed");
});

Deno.test("in-process: insecure: true without a CA works against the cluster's untrusted certificate", async () => {
  const { client } = await testCluster();
  const namespace = await freshNamespace(client, "login-insecure");
  const { server, token } = await clusterAccess();
  const registry = registryWithCreate();
  kopf.on.login({ registry }, function insecureLogin() {
    return new kopf.ConnectionInfo({ server, token, insecure: true });
  });
  const operator = await runOperator(registry, namespace, { credentials: undefined });
  try {
    assert.deepEqual(await handled(client, namespace, "a"), { handled: true });
    assert.equal(operator.running.client.credentials.tls.insecure, true);
  } finally {
    await operator.stop();
  }
});

Deno.test("in-process: the highest priority is used first; rejected (401), it gives way to the next", async () => {
  const { client } = await testCluster();
  const namespace = await freshNamespace(client, "login-prio");
  const { server, caData, token } = await clusterAccess();
  const registry = registryWithCreate();
  const calls: string[] = [];
  kopf.on.login({ registry }, function revokedLogin() {
    calls.push("revoked");
    return new kopf.ConnectionInfo({ server, caData, token: "revoked-token", priority: 100 });
  });
  kopf.on.login({ registry }, function validLogin() {
    calls.push("valid");
    return new kopf.ConnectionInfo({ server, caData, token, priority: 1 });
  });
  const operator = await runOperator(registry, namespace, { credentials: undefined });
  try {
    assert.deepEqual(await handled(client, namespace, "a"), { handled: true });
    assert.equal(operator.running.client.credentials.source, "login handler 'validLogin'");
  } finally {
    await operator.stop();
  }
  assert.deepEqual(calls, ["revoked", "valid"], "the login handlers ran once: the vault still had valid credentials");
});

Deno.test("kopf run without login handlers: the kubeconfig is used; objects are handled", async () => {
  const { client } = await testCluster();
  const namespace = await freshNamespace(client, "login-default");
  await using operator = await KopfProcess.start(namespace, [FIXTURE], { KOPF_TEST_LOGIN: "none" });
  await operator.waitForLine(/Initial authentication has finished\./);
  assert.deepEqual(await handled(client, namespace, "a"), { handled: true });
  assert.equal((await operator.stop()).code, 0, operator.output);
});

Deno.test("kopf run: a bogus token first, valid ones later → re-authentication, then objects are handled", async () => {
  const { client } = await testCluster();
  const namespace = await freshNamespace(client, "login-reauth");
  await using operator = await KopfProcess.start(namespace, [FIXTURE], { KOPF_TEST_LOGIN: "bogus-first" });
  await operator.waitForLine(/Re-authentication has been initiated\./);
  await operator.waitForLine(/Re-authentication has finished\./);
  assert.deepEqual(await handled(client, namespace, "a"), { handled: true });
  const lines = operator.lines;
  assert.equal(lines.filter((line) => /Login number \d+\./.test(line)).length, 2, operator.output);
  assert.ok(
    indexOf(lines, /Login number 1\./) < indexOf(lines, /Re-authentication has been initiated\./) &&
      indexOf(lines, /Re-authentication has been initiated\./) < indexOf(lines, /Login number 2\./),
    operator.output,
  );
  assert.equal((await operator.stop()).code, 0, operator.output);
});

Deno.test("in-process: expired credentials make the login handlers run again", async () => {
  const { client } = await testCluster();
  const namespace = await freshNamespace(client, "login-expire");
  const { server, caData, token } = await clusterAccess();
  const registry = registryWithCreate();
  let logins = 0;
  kopf.on.login({ registry }, function shortLived() {
    logins++;
    return new kopf.ConnectionInfo({ server, caData, token, expiration: new Date(Date.now() + 1000) });
  });
  const operator = await runOperator(registry, namespace, { credentials: undefined });
  try {
    assert.deepEqual(await handled(client, namespace, "a"), { handled: true });
    // Any request after the expiration logs in again; creating objects makes requests.
    await eventually("a login after the expiration", async () => {
      await createExample(client, namespace, `b-${crypto.randomUUID().slice(0, 6)}`);
      return logins >= 2 || undefined;
    });
  } finally {
    await operator.stop();
  }
});

Deno.test("in-process: re-authentication giving only rejected credentials fails the operator with LoginError", async () => {
  const { client } = await testCluster();
  const namespace = await freshNamespace(client, "login-ranout");
  const { server, caData } = await clusterAccess();
  const registry = registryWithCreate();
  let logins = 0;
  kopf.on.login({ registry }, function staleLogin() {
    logins++;
    return new kopf.ConnectionInfo({ server, caData, token: "always-the-same-bogus-token" });
  });
  await assert.rejects(runOperator(registry, namespace, { credentials: undefined }), (error: Error) => {
    assert.ok(error instanceof kopf.LoginError, String(error));
    assert.match(error.message, /^Re-authentication has failed: .*rejected before/);
    return true;
  });
  assert.equal(logins, 2, "the initial login and one re-authentication: no loop");
});

Deno.test("kopf run --debug: the first API request comes after the startup handler and the authentication", async () => {
  const { client } = await testCluster();
  const namespace = await freshNamespace(client, "login-order");
  await using operator = await KopfProcess.start(namespace, ["--debug", FIXTURE], { KOPF_TEST_LOGIN: "kubeconfig" });
  await operator.waitForLine(/Sending GET /);
  await operator.stop();
  const lines = operator.lines;
  const startup = indexOf(lines, /The startup handler is done\./);
  const initiated = indexOf(lines, /Initial authentication has been initiated\./);
  const finished = indexOf(lines, /Initial authentication has finished\./);
  const firstRequest = indexOf(lines, /Sending (GET|POST|PATCH|PUT|DELETE) /);
  assert.ok(startup >= 0 && initiated > startup && finished > initiated && firstRequest > finished, operator.output);
});

Deno.test("in-process: login handlers run after the startup handlers and before any connection", async () => {
  const { client } = await testCluster();
  const namespace = await freshNamespace(client, "login-order2");
  const { server, caData, token } = await clusterAccess();
  await using proxy = new TcpProxy(Number(new URL(server).port));
  const registry = registryWithCreate();
  const order: string[] = [];
  kopf.on.startup({ registry }, function first() {
    order.push("startup");
  });
  kopf.on.login({ registry }, function second() {
    order.push(`login with ${proxy.open} connections`);
    return new kopf.ConnectionInfo({ server: `https://127.0.0.1:${proxy.port}`, caData, token });
  });
  const operator = await runOperator(registry, namespace, { credentials: undefined });
  try {
    assert.ok(proxy.open > 0, "the operator connects through the login handler's server");
    assert.deepEqual(await handled(client, namespace, "a"), { handled: true });
  } finally {
    await operator.stop();
  }
  assert.deepEqual(order, ["startup", "login with 0 connections"]);
});
