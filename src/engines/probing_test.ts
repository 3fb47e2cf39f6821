import assert from "node:assert/strict";
import { WatchHealth } from "../api/watching.ts";
import { configureLogging } from "../logging/configure.ts";
import { PermanentError } from "../handling/errors.ts";
import { probe } from "../handling/registration.ts";
import { Registry } from "../handling/registry.ts";
import { Settings } from "../settings/settings.ts";
import { LivenessServer, parseLivenessEndpoint } from "./probing.ts";

await configureLogging({ level: "warning", write: () => {} });

function local(path = "/healthz"): ReturnType<typeof parseLivenessEndpoint> {
  return parseLivenessEndpoint(`http://127.0.0.1:0${path}`);
}

async function get(url: string, init?: RequestInit): Promise<{ status: number; body: unknown }> {
  const response = await fetch(url, init);
  const text = await response.text();
  return { status: response.status, body: text ? JSON.parse(text) : undefined };
}

Deno.test("liveness URLs: http only, Kopf's defaults for host, port and path", () => {
  assert.deepEqual(parseLivenessEndpoint("http://0.0.0.0:8080/healthz"), {
    hostname: "0.0.0.0",
    port: 8080,
    path: "/healthz",
  });
  assert.deepEqual(parseLivenessEndpoint("http://localhost"), { hostname: "localhost", port: 80, path: "/" });
  assert.deepEqual(parseLivenessEndpoint("http://[::1]:81/x"), { hostname: "::1", port: 81, path: "/x" });
  assert.throws(() => parseLivenessEndpoint("https://0.0.0.0:8080/healthz"), /only http:\/\//);
  assert.throws(() => parseLivenessEndpoint("0.0.0.0:8080"), TypeError);
  assert.throws(() => parseLivenessEndpoint("not a url"), /must be a URL like/);
  assert.throws(() => parseLivenessEndpoint("http://h:1/p?q=1"), /host, a port and a path only/);
});

Deno.test("GET answers the probe results by id ({} without probes), cached for probingMaxAge", async () => {
  const empty = LivenessServer.start(local(), {
    registry: new Registry(),
    settings: new Settings(),
    memo: {},
    streams: new Map(),
  });
  try {
    assert.deepEqual(await get(empty.url), { status: 200, body: {} });
  } finally {
    await empty.close();
  }

  const registry = new Registry();
  let runs = 0;
  probe({ registry, id: "counter" }, ({ memo }) => ({ runs: ++runs, memo: memo.name }));
  probe({ registry }, function nothing() {});
  const settings = new Settings();
  settings.process.probingMaxAge = 0.5;
  const server = LivenessServer.start(local(), { registry, settings, memo: { name: "m" }, streams: new Map() });
  try {
    assert.match(server.url, /^http:\/\/127\.0\.0\.1:\d+\/healthz$/);
    const [a, b] = await Promise.all([get(server.url), get(server.url)]);
    assert.deepEqual(a, { status: 200, body: { counter: { runs: 1, memo: "m" } } });
    assert.deepEqual(b, a, "concurrent requests share one run");
    assert.deepEqual(await get(server.url), a, "cached");
    await new Promise((resolve) => setTimeout(resolve, 600));
    assert.deepEqual(await get(server.url), { status: 200, body: { counter: { runs: 2, memo: "m" } } });
    assert.equal((await get(server.url.replace("/healthz", "/other"))).status, 404);
    assert.equal((await get(server.url, { method: "POST" })).status, 405);
  } finally {
    await server.close();
  }
});

Deno.test("a probe failing for good answers 500 with the error; results are not cached then", async () => {
  const registry = new Registry();
  let fail = true;
  probe({ registry, id: "db" }, () => {
    if (fail) throw new PermanentError("the database is unreachable");
    return "ok";
  });
  await using server = LivenessServer.start(local(), {
    registry,
    settings: new Settings(),
    memo: {},
    streams: new Map(),
  });
  const failed = await get(server.url);
  assert.equal(failed.status, 500);
  assert.match((failed.body as { error: string }).error, /'db' failed: the database is unreachable/);
  fail = false;
  assert.deepEqual(await get(server.url), { status: 200, body: { db: "ok" } });
});

Deno.test("a watch stream failing for longer than its bound answers 500 naming it, why and since when", async () => {
  const healthy = new WatchHealth(60);
  const failing = new WatchHealth(0.1);
  const streams = new Map([["pods.v1 in a", healthy], ["kopfexamples.v1.kopf.dev in a", failing]]);
  await using server = LivenessServer.start(local(), {
    registry: new Registry(),
    settings: new Settings(),
    memo: {},
    streams,
  });
  const since = Date.now();
  for (let attempt = 0; attempt < 3; attempt++) failing.failed("connection refused", since);
  failing.connected(since); // answered, but the run of failures goes on until it proves itself
  assert.equal((await get(server.url)).status, 200, "not yet beyond the bound");
  await new Promise((resolve) => setTimeout(resolve, 150));
  failing.connected();
  const answer = await get(server.url);
  assert.equal(answer.status, 500);
  const body = answer.body as { error: string; streams: Record<string, Record<string, unknown>> };
  assert.deepEqual(Object.keys(body.streams), ["kopfexamples.v1.kopf.dev in a"]);
  const reported = body.streams["kopfexamples.v1.kopf.dev in a"];
  assert.equal(reported.reason, "failing");
  assert.equal(reported.failingSince, new Date(since).toISOString());
  assert.equal(reported.failures, 3);
  assert.equal(reported.lastError, "connection refused");
  assert.match(body.error, /kopfexamples\.v1\.kopf\.dev in a: failing for/);
  failing.alive();
  assert.equal((await get(server.url)).status, 200, "healthy again once the stream works");
});

Deno.test("a watch stream silent for longer than its bound answers 500 until something arrives", async () => {
  const quiet = new WatchHealth(0.1);
  await using server = LivenessServer.start(local(), {
    registry: new Registry(),
    settings: new Settings(),
    memo: {},
    streams: new Map([["pods.v1 in a", quiet]]),
  });
  assert.equal((await get(server.url)).status, 200, "a stream is alive when it starts");
  await new Promise((resolve) => setTimeout(resolve, 150));
  const answer = await get(server.url);
  assert.equal(answer.status, 500);
  const body = answer.body as { streams: Record<string, Record<string, unknown>> };
  assert.equal(body.streams["pods.v1 in a"].reason, "silent");
  quiet.alive(); // a bookmark
  assert.equal((await get(server.url)).status, 200);
});

Deno.test("a rejected server certificate answers 500 with the diagnosis at once", async () => {
  let connectionProblem: { message: string; since: number } | null = { message: "not signed by the CA", since: 0 };
  await using server = LivenessServer.start(local(), {
    registry: new Registry(),
    settings: new Settings(),
    memo: {},
    streams: new Map(),
    connection: {
      get connectionProblem() {
        return connectionProblem;
      },
    },
  });
  const answer = await get(server.url);
  assert.equal(answer.status, 500);
  assert.match((answer.body as { error: string }).error, /not signed by the CA/);
  connectionProblem = null;
  assert.equal((await get(server.url)).status, 200);
});

Deno.test("a taken port is a clear error", () => {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  try {
    assert.throws(
      () =>
        LivenessServer.start(parseLivenessEndpoint(`http://127.0.0.1:${listener.addr.port}/`), {
          registry: new Registry(),
          settings: new Settings(),
          memo: {},
          streams: new Map(),
        }),
      /The liveness endpoint cannot listen at 127\.0\.0\.1:\d+/,
    );
  } finally {
    listener.close();
  }
});
