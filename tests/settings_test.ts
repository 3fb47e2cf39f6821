/**
 * Operator settings against a real API server: the ones not covered by
 * the tests of their own areas — how many objects are processed at once, how long stopping
 * waits for them, the watch requests' timeouts and reconnection pauses, the regular requests'
 * timeout, and a startup handler configuring several groups at once.
 */

import assert from "node:assert/strict";
import * as kopf from "@kopf/kopf";
import { ApiClient } from "../src/api/client.ts";
import { ApiConnectionError } from "../src/api/errors.ts";
import { Watcher } from "../src/api/watching.ts";
import { WatchingSettings } from "../src/settings/watching.ts";
import { NetworkingSettings } from "../src/settings/networking.ts";
import {
  createExample,
  deleteExample,
  exampleGone,
  freshNamespace,
  getExample,
  KOPFEXAMPLES,
  patchExample,
  settle,
  testCluster,
  waitForStatus,
} from "./support/cluster.ts";
import { eventually } from "./support/eventually.ts";
import { captureLogs, listingsOf } from "./support/logs.ts";
import { runOperator } from "./support/operator.ts";
import { TcpProxy } from "./support/tcp_proxy.ts";

/** A create handler that takes `seconds`, and the most of its calls that ran at once. */
function slowCreations(registry: kopf.Registry, seconds: number): () => number {
  let running = 0;
  let peak = 0;
  kopf.on.create("kopfexamples", { registry }, async function slow() {
    running++;
    peak = Math.max(peak, running);
    await kopf.sleep(seconds);
    running--;
    return "done";
  });
  return () => peak;
}

Deno.test("batching.workerLimit 1: objects are handled one at a time; without it, at once", async () => {
  const { client } = await testCluster();
  for (const workerLimit of [1, null]) {
    const namespace = await freshNamespace(client, "limit");
    const registry = new kopf.Registry();
    const peak = slowCreations(registry, 1);
    const settings = new kopf.Settings();
    settings.batching.workerLimit = workerLimit;
    const operator = await runOperator(registry, namespace, { settings });
    try {
      await Promise.all(["a", "b", "c"].map((name) => createExample(client, namespace, name)));
      for (const name of ["a", "b", "c"]) await waitForStatus(namespace, name, "slow");
      assert.equal(peak(), workerLimit === 1 ? 1 : 3, `peak concurrency with workerLimit ${workerLimit}`);
    } finally {
      await operator.stop();
    }
  }
});

Deno.test("batching.backlogLimit 2: a listing is read as objects are handled, also when the resource is indexed", async () => {
  const { client } = await testCluster();
  for (const [backlogLimit, indexed] of [[2, false], [2, true], [null, false]] as const) {
    const namespace = await freshNamespace(client, "backlog");
    await Promise.all(["a", "b", "c", "d", "e", "f"].map((name) => createExample(client, namespace, name)));
    const registry = new kopf.Registry();
    const peak = slowCreations(registry, 0.5);
    // The handlers wait for the indexes, which wait for this very listing: it must not wait for room.
    if (indexed) kopf.index("kopfexamples", { registry, id: "names" }, ({ name }) => name);
    const settings = new kopf.Settings();
    settings.batching.backlogLimit = backlogLimit;
    const operator = await runOperator(registry, namespace, { settings });
    try {
      for (const name of ["a", "b", "c", "d", "e", "f"]) await waitForStatus(namespace, name, "slow");
      const expected = backlogLimit === null || indexed ? 6 : 2;
      assert.equal(peak(), expected, `peak concurrency with backlogLimit ${backlogLimit}, indexed: ${indexed}`);
    } finally {
      await operator.stop();
    }
  }
});

Deno.test("batching.backlogLimit 2 counts objects, not events: a slow object's queued changes do not hold the others back", async () => {
  const { client } = await testCluster();
  const namespace = await freshNamespace(client, "backlog-keys");
  const registry = new kopf.Registry();
  const { promise: released, resolve: release } = Promise.withResolvers<void>();
  const { promise: started, resolve: start } = Promise.withResolvers<void>();
  kopf.on.create("kopfexamples", { registry }, async function held({ name }) {
    if (name !== "a") return "done";
    start();
    await released;
    return "done";
  });
  const settings = new kopf.Settings();
  settings.batching.backlogLimit = 2;
  const operator = await runOperator(registry, namespace, { settings });
  try {
    await createExample(client, namespace, "a");
    await started;
    // Three more events of a wait behind its handler: four in all, twice the limit, for one object.
    for (const field of ["1", "2", "3"]) await patchExample(client, namespace, "a", { spec: { field } });
    await Promise.all(["b", "c", "d"].map((name) => createExample(client, namespace, name)));
    for (const name of ["b", "c", "d"]) await waitForStatus(namespace, name, "held", undefined, 20);
    const a = await getExample(client, namespace, "a");
    assert.equal((a.status as Record<string, unknown> | undefined)?.held, undefined, "a's handler still runs");
    release();
    await waitForStatus(namespace, "a", "held");
  } finally {
    release();
    await operator.stop();
  }
});

Deno.test("batching.workerLimit 0 and backlogLimit 0 are refused with a message naming the setting", async () => {
  const { client } = await testCluster();
  for (const field of ["workerLimit", "backlogLimit"] as const) {
    const namespace = await freshNamespace(client, "limit0");
    const registry = new kopf.Registry();
    kopf.on.event("kopfexamples", { registry }, function seen() {});
    const settings = new kopf.Settings();
    settings.batching[field] = 0;
    await assert.rejects(
      runOperator(registry, namespace, { settings }),
      new RegExp(`settings\\.batching\\.${field} must be`),
    );
  }
});

Deno.test("batching.exitTimeout: a stop does not wait longer for a hanging handler; it names the object", async () => {
  const { client } = await testCluster();
  const namespace = await freshNamespace(client, "exit");
  const registry = new kopf.Registry();
  let entered = false;
  let release: () => void = () => {};
  const hanging = new Promise<void>((resolve) => release = resolve);
  kopf.on.create("kopfexamples", { registry }, async function hangs() {
    entered = true;
    await hanging;
  });
  const settings = new kopf.Settings();
  settings.batching.exitTimeout = 0.5;
  const lines = await captureLogs();
  const operator = await runOperator(registry, namespace, { settings });
  try {
    await createExample(client, namespace, "stuck");
    await eventually("the handler to start", () => entered || undefined);
    await operator.stop();
    assert.ok(
      lines.some((line) =>
        line.includes("Unprocessed objects left after 0.5 s (settings.batching.exitTimeout)") &&
        line.includes(`${namespace}/stuck`)
      ),
      lines.join("\n"),
    );
  } finally {
    release();
  }
});

Deno.test("batching.batchWindow has no effect and says so; settings.queueing is settings.batching", async () => {
  const lines = await captureLogs();
  const settings = new kopf.Settings();
  settings.batching.batchWindow = 2;
  assert.equal(settings.batching.batchWindow, 0);
  assert.ok(lines.some((line) => /batchWindow = 2 has no effect/.test(line)), lines.join("\n"));
  assert.equal(settings.queueing, settings.batching);
  settings.queueing.workerLimit = 3;
  assert.equal(settings.batching.workerLimit, 3);
});

Deno.test("watching.clientTimeout and serverTimeout: watch requests are re-issued, every change is handled, no relist", async () => {
  const { client } = await testCluster();
  for (const timeout of ["clientTimeout", "serverTimeout"] as const) {
    const namespace = await freshNamespace(client, "wtimeout");
    const registry = new kopf.Registry();
    kopf.on.update("kopfexamples", { registry, field: "spec.count" }, function counted({ new: now }) {
      return now;
    });
    const settings = new kopf.Settings();
    settings.watching[timeout] = 1;
    const lines = await captureLogs();
    const operator = await runOperator(registry, namespace, { settings });
    try {
      const counters = operator.running.client.counters;
      await createExample(client, namespace, "w", { count: 0 });
      for (let count = 1; count <= 3; count++) {
        const watch = { verb: "watch", resource: "kopfexamples" } as const;
        const issued = counters.count(watch);
        await eventually("the watch request to end and be sent again", () => counters.count(watch) > issued);
        await patchExample(client, namespace, "w", { spec: { count } });
        await waitForStatus(namespace, "w", "counted/spec.count", (value) => value === count);
      }
      const watches = counters.count({ verb: "watch" });
      assert.ok(watches >= 4, `watch requests with ${timeout} 1: ${watches}`);
      const listings = listingsOf(lines, `/apis/kopf.dev/v1/namespaces/${namespace}/kopfexamples`);
      assert.equal(listings.length, 1, `re-issued watches resume; they never relist: ${listings.join("\n")}`);
    } finally {
      await operator.stop();
    }
  }
});

Deno.test("watching.reconnectBackoff: a pause between watch requests that the server ends", async () => {
  const { credentials } = await testCluster();
  const namespace = await freshNamespace((await testCluster()).client, "backoff");
  for (const reconnectBackoff of [3, 0.1]) {
    const settings = new WatchingSettings();
    settings.serverTimeout = 1;
    settings.reconnectBackoff = reconnectBackoff;
    using client = new ApiClient(credentials);
    const controller = new AbortController();
    const watcher = new Watcher(client, KOPFEXAMPLES, { namespace, settings, signal: controller.signal });
    const consuming = (async () => {
      for await (const _ of watcher) { /* only the requests matter */ }
    })();
    // An observation window: the claim is how many requests fit into it.
    await settle(6);
    controller.abort();
    await consuming;
    const watches = client.counters.count({ verb: "watch" });
    // Each server-ended request lasts 1 s: with 3 s pauses at most 2 fit in 6 s, without them 4 or more.
    if (reconnectBackoff === 3) assert.ok(watches <= 2, `watches with a 3 s pause: ${watches}`);
    else assert.ok(watches >= 4, `watches with a 0.1 s pause: ${watches}`);
  }
});

Deno.test("watching.connectTimeout bounds watch requests to a server that stops answering; regular requests keep theirs", async () => {
  const { credentials } = await testCluster();
  const port = Number(new URL(credentials.server).port);
  await using proxy = new TcpProxy(port);
  const networking = new NetworkingSettings();
  networking.errorBackoffs = [];
  using client = new ApiClient({ ...credentials, server: `https://127.0.0.1:${proxy.port}` }, { networking });
  const settings = new WatchingSettings();
  settings.clientTimeout = 1; // ends the watch that is open when the proxy falls silent
  settings.connectTimeout = 0.5;
  settings.reconnectBackoff = 0.1;
  settings.reconnectBackoffMax = 0.1;
  const controller = new AbortController();
  const watcher = new Watcher(client, KOPFEXAMPLES, { namespace: "default", settings, signal: controller.signal });
  let listed: () => void = () => {};
  const listing = new Promise<void>((resolve) => listed = resolve);
  const consuming = (async () => {
    for await (const event of watcher) if (event.type === "LISTED") listed();
  })();
  try {
    await listing;
    proxy.silence();
    await eventually("three failed watch requests", () => watcher.health.failures >= 3 || undefined);
    assert.match(String(watcher.health.lastError), /no response within 0\.5 s \(settings\.watching\.connectTimeout\)/);
  } finally {
    controller.abort();
    await consuming;
  }
  networking.connectTimeout = 0.5;
  await assert.rejects(
    client.request({ path: "/api/v1/namespaces" }),
    (error: Error) =>
      error instanceof ApiConnectionError &&
      /no response within 0\.5 s \(settings\.networking\.connectTimeout\)/.test(error.message),
  );
});

Deno.test("networking.connectTimeout on a connection that stopped answering: the retry goes over a new connection", async () => {
  const { credentials } = await testCluster();
  await using proxy = new TcpProxy(Number(new URL(credentials.server).port));
  const networking = new NetworkingSettings();
  networking.connectTimeout = 2; // far above a loopback answer, even on a busy machine
  networking.errorBackoffs = [0.1];
  using client = new ApiClient({ ...credentials, server: `https://127.0.0.1:${proxy.port}` }, { networking });
  await client.request({ path: "/api/v1/namespaces/default" });
  assert.equal(proxy.accepted, 1, "one connection for the first request");
  // The open connection forwards nothing from now on; new ones work.
  proxy.freeze();
  const answer = await client.request<{ metadata: { name: string } }>({ path: "/api/v1/namespaces/default" });
  assert.equal(answer.metadata.name, "default");
  assert.equal(client.counters.count({ verb: "get" }), 3, "the first request, the attempt that timed out, its retry");
  assert.equal(proxy.accepted, 2, "the retry opened a new connection");
});

Deno.test("networking.requestTimeout: requests that take longer fail after their retries; errorBackoffs [] means none", async () => {
  const { credentials } = await testCluster();
  for (const [errorBackoffs, attempts] of [[[0.01, 0.01], 3], [[], 1]] as const) {
    const networking = new NetworkingSettings();
    networking.requestTimeout = 0.001;
    networking.errorBackoffs = [...errorBackoffs];
    using client = new ApiClient(credentials, { networking });
    await assert.rejects(
      client.request({ path: "/api/v1/namespaces" }),
      (error: Error) => error instanceof ApiConnectionError && /requestTimeout/.test(error.message),
    );
    assert.equal(client.counters.count({ verb: "get" }), attempts, `attempts with errorBackoffs ${errorBackoffs}`);
  }
});

Deno.test("networking.concurrentRequests 1: many requests at once are all answered; failed and timed-out ones give their slot back", async () => {
  const { credentials } = await testCluster();
  const networking = new NetworkingSettings();
  networking.concurrentRequests = 1;
  networking.errorBackoffs = [];
  using client = new ApiClient(credentials, { networking });
  const answers = await Promise.all(
    Array.from({ length: 20 }, () => client.request<{ kind: string }>({ path: "/api/v1/namespaces/default" })),
  );
  assert.deepEqual(new Set(answers.map((answer) => answer.kind)), new Set(["Namespace"]));
  await assert.rejects(client.request({ path: "/api/v1/namespaces/no-such-namespace-here" }), /404|not found/i);
  networking.requestTimeout = 0.001;
  // Megabytes to read: a small answer can come within the millisecond on a cluster with few namespaces.
  await assert.rejects(client.request({ path: "/openapi/v2" }), /requestTimeout/);
  networking.requestTimeout = 30;
  assert.equal((await client.request<{ kind: string }>({ path: "/api/v1/namespaces/default" })).kind, "Namespace");
  assert.equal(client.counters.count({ verb: "get" }), 23);
});

Deno.test("a startup handler sets the finalizer, turns posting off and shortens the request timeout: all apply", async () => {
  const { client } = await testCluster();
  const namespace = await freshNamespace(client, "configured");
  const registry = new kopf.Registry();
  kopf.on.startup({ registry }, function configure({ settings }) {
    settings.persistence.finalizer = "example.com/configured";
    settings.posting.enabled = false;
    settings.networking.requestTimeout = 5;
  });
  kopf.on.create("kopfexamples", { registry }, function created({ name, body }) {
    kopf.info(body, { reason: "Hello", message: `hello ${name}` });
    return "done";
  });
  kopf.on.delete("kopfexamples", { registry }, function deleted() {});
  const operator = await runOperator(registry, namespace);
  try {
    await createExample(client, namespace, "c");
    await waitForStatus(namespace, "c", "created");
    const body = await getExample(client, namespace, "c");
    assert.deepEqual(body.metadata.finalizers, ["example.com/configured"]);
    await deleteExample(client, namespace, "c");
    await exampleGone(client, namespace, "c");
    await operator.stop(); // the operator sends what its poster holds before it stops
    const events = await client.request<{ items: unknown[] }>({ path: `/api/v1/namespaces/${namespace}/events` });
    assert.equal(events.items.length, 0, "posting is off: no Events");
    assert.equal(operator.running.client.counters.count({ verb: "create", resource: "events" }), 0);
  } finally {
    await operator.stop();
  }
});

Deno.test("background.instantExitTimeout: a daemon exiting 0.1 s after its stop is waited for; one patch releases the object", async () => {
  const { client } = await testCluster();
  for (const instantExitTimeout of [0.5, null]) {
    const namespace = await freshNamespace(client, "instant");
    const registry = new kopf.Registry();
    let running = false;
    kopf.daemon("kopfexamples", { registry }, async function lingering({ stopped }) {
      running = true;
      while (!stopped.aborted) await kopf.sleep(30, stopped);
      await kopf.sleep(0.1); // Some tidying up after the stop.
    });
    const settings = new kopf.Settings();
    settings.background.instantExitTimeout = instantExitTimeout;
    const lines = await captureLogs();
    const operator = await runOperator(registry, namespace, { settings });
    try {
      await createExample(client, namespace, "i");
      await eventually("the daemon", () => running || undefined);
      const counters = operator.running.client.counters;
      await eventually("the finalizer's patch", () => counters.count({ verb: "patch" }) === 1 || undefined);
      await eventually("the finalizer", async () => (await getExample(client, namespace, "i")).metadata.finalizers);
      await deleteExample(client, namespace, "i");
      await exampleGone(client, namespace, "i");
      // The finalizer added, then removed — nothing else (no touch-dummy). A removal that loses a race
      // with the API server's own update of the deleted object is sent once more on the fresh object.
      const patches = counters.count({ verb: "patch" });
      const sent = lines.filter((line) => line.includes("Sending PATCH")).join("\n");
      assert.ok(patches === 2 || patches === 3, `patches: ${patches}\n${sent}`);
      const waited = lines.some((line) => line.includes("is still exiting"));
      // Without the timeout, 10 turns of the event loop are too few for it: the deletion says it waits.
      assert.equal(waited, instantExitTimeout === null, lines.filter((line) => line.includes("exiting")).join("\n"));
    } finally {
      await operator.stop();
    }
  }
});

Deno.test("batching.errorDelays [5]: an object failing in the framework rests 5 s each time", async () => {
  const { client } = await testCluster();
  const namespace = await freshNamespace(client, "delays");
  const registry = new kopf.Registry();
  kopf.on.create("kopfexamples", { registry }, function createFn() {
    return { handled: true };
  });
  const settings = new kopf.Settings();
  settings.batching.errorDelays = [5];
  const lines = await captureLogs();
  const operator = await runOperator(registry, namespace, { settings });
  try {
    await client.request({
      method: "POST",
      path: `/apis/kopf.dev/v1/namespaces/${namespace}/kopfexamples`,
      body: {
        apiVersion: "kopf.dev/v1",
        kind: "KopfExample",
        // A progress record that is not JSON: reading it fails in the framework, before any handler.
        metadata: { name: "broken", annotations: { "kopf.zalando.org/createFn": "{not json" } },
        spec: {},
      },
    });
    const throttled = () => lines.filter((line) => line.includes(`[${namespace}/broken] Throttling for`));
    await eventually("two throttlings", () => throttled().length >= 2 || undefined);
    for (const line of throttled()) assert.match(line, /Throttling for 5 seconds due to an unexpected error/);
  } finally {
    await operator.stop();
  }
});
