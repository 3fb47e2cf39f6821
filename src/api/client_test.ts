import assert from "node:assert/strict";
import { FakeApi, fakeCredentials, json, stream } from "../../tests/support/fake_api.ts";
import { ApiClient } from "./client.ts";
import {
  ApiConflictError,
  ApiConnectionError,
  ApiForbiddenError,
  ApiNotFoundError,
  ApiServerError,
  ApiUnauthorizedError,
} from "./errors.ts";
import { NetworkingSettings } from "../settings/networking.ts";
import { configureLogging } from "../logging/configure.ts";

Deno.test("5xx answers are retried with the backoffs, then succeed", async () => {
  let calls = 0;
  await using api = new FakeApi(() => ++calls < 3 ? json({ code: 503 }, 503) : json({ ok: true }));
  assert.deepEqual(await api.client.request({ path: "/api/v1/namespaces" }), { ok: true });
  assert.equal(calls, 3);
  assert.equal(api.client.counters.count({ verb: "get", resource: "namespaces" }), 3, "every attempt counts");
});

Deno.test("5xx answers that persist become an ApiServerError after the last backoff", async () => {
  await using api = new FakeApi(() => json({ kind: "Status", code: 500, message: "etcd is down" }, 500));
  await assert.rejects(() => api.client.request({ path: "/api/v1/pods" }), (error: Error) => {
    assert.ok(error instanceof ApiServerError);
    assert.match(error.message, /GET \/api\/v1\/pods failed with HTTP 500: etcd is down/);
    return true;
  });
  assert.equal(api.requests.length, 3, "one attempt and two retries");
});

Deno.test("other 4xx answers are raised at once as typed errors", async () => {
  const statuses: Record<string, number> = { "/a": 404, "/b": 409, "/c": 403 };
  await using api = new FakeApi((_request, url) =>
    json({ kind: "Status", code: statuses[url.pathname], reason: "Whatever" }, statuses[url.pathname])
  );
  await assert.rejects(() => api.client.request({ path: "/a" }), ApiNotFoundError);
  await assert.rejects(() => api.client.request({ path: "/b" }), ApiConflictError);
  await assert.rejects(() => api.client.request({ path: "/c" }), ApiForbiddenError);
  assert.equal(api.requests.length, 3, "no retries");
});

Deno.test("429 waits as long as Retry-After asks when that is longer than the backoff", async () => {
  let calls = 0;
  await using api = new FakeApi(() => {
    if (++calls === 1) return new Response("{}", { status: 429, headers: { "Retry-After": "1" } });
    return json({ ok: true });
  });
  const started = Date.now();
  assert.deepEqual(await api.client.request({ path: "/x" }), { ok: true });
  assert.ok(Date.now() - started >= 900, "waited for Retry-After, not the 10 ms backoff");
});

Deno.test("a first wait that the server asks for is told at info level, a second one as a warning", async () => {
  const lines: string[] = [];
  await configureLogging({ level: "debug", format: "full", write: (line) => lines.push(line) });
  let calls = 0;
  await using api = new FakeApi(() => {
    if (++calls <= 2) return new Response("{}", { status: 429, headers: { "Retry-After": "0" } });
    return json({ ok: true });
  });
  assert.deepEqual(await api.client.request({ path: "/x" }), { ok: true });
  const told = lines.filter((line) => line.includes("failed with HTTP 429"));
  assert.equal(told.length, 2, lines.join("\n"));
  assert.match(told[0], /\[INFO +\]/);
  assert.match(told[1], /\[WARNING +\]/);
});

Deno.test("401 invalidates the credentials and retries once with fresh ones", async () => {
  let invalidated = 0;
  let token = "old";
  const seen: (string | null)[] = [];
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, (request) => {
    seen.push(request.headers.get("Authorization"));
    return request.headers.get("Authorization") === "Bearer new" ? json({ ok: true }) : json({ code: 401 }, 401);
  });
  const credentials = {
    ...fakeCredentials(`http://127.0.0.1:${server.addr.port}`),
    authorization: () => Promise.resolve(`Bearer ${token}`),
    invalidate: () => {
      invalidated++;
      token = "new";
    },
  };
  using client = new ApiClient(credentials);
  try {
    assert.deepEqual(await client.request({ path: "/x" }), { ok: true });
    assert.deepEqual(seen, ["Bearer old", "Bearer new"]);
    assert.equal(invalidated, 1);
    token = "revoked";
    seen.length = 0;
    credentials.invalidate = () => invalidated++;
    await assert.rejects(() => client.request({ path: "/x" }), ApiUnauthorizedError);
    assert.equal(seen.length, 2, "one retry, then the error");
  } finally {
    await server.shutdown();
  }
});

Deno.test("an unreachable server is retried, then raised as an ApiConnectionError naming the request", async () => {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = listener.addr.port;
  listener.close();
  const networking = Object.assign(new NetworkingSettings(), { errorBackoffs: [0.01, 0.01] });
  using client = new ApiClient(fakeCredentials(`http://127.0.0.1:${port}`), { networking });
  await assert.rejects(() => client.request({ path: "/api" }), (error: Error) => {
    assert.ok(error instanceof ApiConnectionError);
    assert.match(error.message, /^GET \/api could not reach the API server/);
    return true;
  });
  assert.equal(client.counters.count(), 3);
});

Deno.test("a request that takes longer than the request timeout fails as a connection error", async () => {
  await using api = new FakeApi(async () => {
    await new Promise((resolve) => setTimeout(resolve, 500));
    return json({});
  }, { requestTimeout: 0.1, connectTimeout: null, errorBackoffs: [] });
  await assert.rejects(() => api.client.request({ path: "/slow" }), /requestTimeout/);
});

Deno.test("a server that sends no headers within the connect timeout fails with the connect timeout's message", async () => {
  await using api = new FakeApi(async () => {
    await new Promise((resolve) => setTimeout(resolve, 500));
    return json({});
  }, { requestTimeout: 5, connectTimeout: 0.1, errorBackoffs: [] });
  await assert.rejects(
    () => api.client.request({ path: "/slow" }),
    /no response within 0.1 s \(settings.networking.connectTimeout\)/,
  );
});

Deno.test("headers in time but a body slower than the request timeout fail with the request timeout", async () => {
  // The connect timeout passes with the headers; the total one still limits reading the body.
  await using api = new FakeApi(() => {
    const body = new ReadableStream<Uint8Array>({
      async start(controller) {
        await new Promise((resolve) => setTimeout(resolve, 600));
        controller.enqueue(new TextEncoder().encode("{}"));
        controller.close();
      },
    });
    return new Response(body, { headers: { "Content-Type": "application/json" } });
  }, { requestTimeout: 0.3, connectTimeout: 0.1, errorBackoffs: [] });
  await assert.rejects(() => api.client.request({ path: "/slow-body" }), /took longer than 0.3 s/);
});

Deno.test("a request answered in time is not aborted later by its timeouts", async () => {
  await using api = new FakeApi(() => json({ ok: true }), { requestTimeout: 0.2, connectTimeout: 0.1 });
  assert.deepEqual(await api.client.request({ path: "/fast" }), { ok: true });
  await new Promise((resolve) => setTimeout(resolve, 300));
  assert.equal(api.requests.length, 1);
});

Deno.test("requests under way at once each end at their own timeout, whatever the others do", async () => {
  // The timeouts share one timer: a long one armed first must not delay a shorter one added later,
  // and a request that ends must not take the others' timeouts with it.
  await using api = new FakeApi(async (request) => {
    const delay = Number(new URL(request.url).searchParams.get("delay"));
    await new Promise((resolve) => setTimeout(resolve, delay));
    return json({ ok: true });
  }, { requestTimeout: 5, connectTimeout: 5, errorBackoffs: [] });
  const started = performance.now();
  const patient = api.client.request({ path: "/patient", query: { delay: 800 } });
  const fast = api.client.request({ path: "/fast", query: { delay: 0 } });
  const impatient = api.client.request({ path: "/impatient", query: { delay: 3000 }, connectTimeout: 0.2 });
  assert.deepEqual(await fast, { ok: true });
  await assert.rejects(() => impatient, /no response within 0.2 s \(settings.watching.connectTimeout\)/);
  assert.ok(performance.now() - started < 2500, "the short timeout waited for the longer ones");
  assert.deepEqual(await patient, { ok: true });
});

Deno.test("timeouts longer than a timer can hold do not abort a request at once", async () => {
  await using api = new FakeApi(async () => {
    await new Promise((resolve) => setTimeout(resolve, 100));
    return json({ ok: true });
  }, { requestTimeout: 1e8, connectTimeout: 1e7 });
  assert.deepEqual(await api.client.request({ path: "/patient" }), { ok: true });
});

Deno.test("JSON bodies, content types and query parameters are sent as given", async () => {
  let received: { type: string | null; body: string; query: string } | undefined;
  await using api = new FakeApi(async (request, url) => {
    received = { type: request.headers.get("Content-Type"), body: await request.text(), query: url.search };
    return json({});
  });
  await api.client.request({
    method: "PATCH",
    path: "/apis/kopf.dev/v1/namespaces/ns/kopfexamples/x/status",
    query: { fieldManager: "kopf", dryRun: undefined },
    body: { status: { a: 1 } },
    contentType: "application/merge-patch+json",
  });
  assert.deepEqual(received, {
    type: "application/merge-patch+json",
    body: '{"status":{"a":1}}',
    query: "?fieldManager=kopf",
  });
  assert.deepEqual(api.client.counters.snapshot(), { "patch kopfexamples/status": 1 });
});

Deno.test("at most settings.networking.concurrentRequests requests are under way at once; streams take no slot", async () => {
  let inFlight = 0;
  let peak = 0;
  const opened: Promise<void>[] = [];
  await using api = new FakeApi(async (_request, url) => {
    if (url.searchParams.has("watch")) return json({});
    inFlight++;
    peak = Math.max(peak, inFlight);
    await new Promise((resolve) => setTimeout(resolve, 20));
    inFlight--;
    return json({ path: url.pathname });
  }, { concurrentRequests: 3 });
  // A stream held open while the requests run must not take one of the three slots.
  const streaming = new AbortController();
  const stream = await api.client.open({ path: "/stream", query: { watch: true }, signal: streaming.signal });
  opened.push(stream.body!.cancel());
  const answers = await Promise.all(
    Array.from({ length: 12 }, (_, index) => api.client.request<{ path: string }>({ path: `/x${index}` })),
  );
  await Promise.all(opened);
  streaming.abort();
  assert.deepEqual(answers.map((answer) => answer.path), Array.from({ length: 12 }, (_, index) => `/x${index}`));
  assert.equal(peak, 3);
});

Deno.test("a request waiting for a slot is cancelled by its signal without being sent", async () => {
  let sent = 0;
  let release!: () => void;
  const held = new Promise<void>((resolve) => release = resolve);
  await using api = new FakeApi(async () => {
    sent++;
    await held;
    return json({});
  }, { concurrentRequests: 1 });
  const first = api.client.request({ path: "/first" });
  const controller = new AbortController();
  const second = api.client.request({ path: "/second", signal: controller.signal });
  await new Promise((resolve) => setTimeout(resolve, 50));
  controller.abort(new Error("stopping"));
  await assert.rejects(second, /stopping/);
  release();
  await first;
  assert.equal(sent, 1);
});

Deno.test("an urgent request is sent at once while every slot is taken", async () => {
  let release!: () => void;
  const held = new Promise<void>((resolve) => release = resolve);
  await using api = new FakeApi(async (_request, url) => {
    if (url.pathname === "/held") await held;
    return json({ path: url.pathname });
  }, { concurrentRequests: 1 });
  const first = api.client.request({ path: "/held" });
  await new Promise((resolve) => setTimeout(resolve, 20));
  assert.deepEqual(await api.client.request({ path: "/lease", urgent: true }), { path: "/lease" });
  release();
  await first;
});

Deno.test("a request that goes ahead gets the next free slot before those that waited longer", async () => {
  let release!: () => void;
  const held = new Promise<void>((resolve) => release = resolve);
  const order: string[] = [];
  await using api = new FakeApi(async (_request, url) => {
    if (url.pathname === "/held") await held;
    else order.push(url.pathname);
    return json({ path: url.pathname });
  }, { concurrentRequests: 1 });
  const first = api.client.request({ path: "/held" });
  await new Promise((resolve) => setTimeout(resolve, 20));
  const waiting = [
    api.client.request({ path: "/new-1" }),
    api.client.request({ path: "/new-2" }),
    api.client.request({ path: "/rest", ahead: true }),
  ];
  await new Promise((resolve) => setTimeout(resolve, 20));
  assert.deepEqual(order, []);
  release();
  await Promise.all([first, ...waiting]);
  assert.deepEqual(order, ["/rest", "/new-1", "/new-2"]);
});

Deno.test("streams that stall together probe their connection once, and keep it when the probe is answered", async () => {
  const streams = new AbortController();
  await using api = new FakeApi((_request, url) => {
    if (url.pathname === "/version") return json({ major: "1" });
    return stream([], new Promise(() => {}), streams.signal);
  });
  try {
    const opened = await Promise.all(
      ["a", "b", "c"].map((name) => api.client.open({ path: `/${name}`, signal: streams.signal })),
    );
    // Silent since after their opening: nothing was answered over their connection within that time.
    await new Promise((resolve) => setTimeout(resolve, 50));
    const kept = await Promise.all(opened.map((response) => api.client.stalled(response, "a test's silence", 0.02)));
    assert.deepEqual(kept, [true, true, true]);
    assert.equal(api.requests.filter((url) => url.pathname === "/version").length, 1, "one probe");
  } finally {
    streams.abort();
  }
});
