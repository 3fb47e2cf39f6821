/**
 * The watch layer against a real kube-apiserver: listing streamed through the watch request (and by
 * pages where the server refuses that), resumption across an API server restart, relisting after
 * 410 Gone, and stall detection behind a frozen TCP proxy.
 */

import assert from "node:assert/strict";
import { ApiClient } from "../src/api/client.ts";
import type { Credentials } from "../src/api/credentials.ts";
import { loadKubeconfig } from "../src/api/kubeconfig.ts";
import { Watcher, type WatchEvent, WatchState } from "../src/api/watching.ts";
import { NetworkingSettings } from "../src/settings/networking.ts";
import { WatchingSettings } from "../src/settings/watching.ts";
import { LocalCluster } from "../testing.ts";
import {
  connect,
  createExample,
  deleteExample,
  freshNamespace,
  KOPFEXAMPLES,
  patchExample,
  testCluster,
} from "./support/cluster.ts";
import { eventually } from "./support/eventually.ts";
import { captureLogs } from "./support/logs.ts";
import { TcpProxy } from "./support/tcp_proxy.ts";

/** Consumes a watcher in the background, keeping every event. */
function record(watcher: Watcher): { events: WatchEvent[]; done: Promise<void> } {
  const events: WatchEvent[] = [];
  const done = (async () => {
    for await (const event of watcher) events.push(event);
  })();
  return { events, done };
}

function named(events: WatchEvent[], type: WatchEvent["type"]): string[] {
  return events.flatMap((event) => event.type === type && event.type !== "LISTED" ? [event.object.metadata.name!] : []);
}

function watchSettings(overrides: Partial<WatchingSettings> = {}): WatchingSettings {
  return Object.assign(new WatchingSettings(), { reconnectBackoff: 0.1, reconnectBackoffMax: 1 }, overrides);
}

/** Makes etcd forget every revision before `revision` (a watch or continue token from before then gets 410). */
async function compact(cluster: LocalCluster, revision: string): Promise<void> {
  const response = await fetch(`${cluster.etcdUrl}/v3/kv/compaction`, {
    method: "POST",
    body: JSON.stringify({ revision, physical: true }),
  });
  assert.equal(response.status, 200, await response.text());
}

/** Starts a stream of the namespace's kopfexamples and waits for its listing; `stop()` ends it. */
async function listedStream(client: ApiClient, namespace: string) {
  const controller = new AbortController();
  const watcher = new Watcher(client, KOPFEXAMPLES, {
    namespace,
    settings: watchSettings(),
    signal: controller.signal,
  });
  const { events, done } = record(watcher);
  await eventually("the listing", () => events.some((event) => event.type === "LISTED") || undefined);
  const stop = async () => {
    controller.abort();
    await done;
  };
  return { watcher, events, stop };
}

Deno.test("a listing streams through the watch request, which then delivers the changes: no LIST", async () => {
  const { client } = await testCluster();
  const namespace = await freshNamespace(client, "streamed");
  for (const name of ["a", "b", "c"]) await createExample(client, namespace, name);
  using watching = new ApiClient(client.credentials);
  const { watcher, events, stop } = await listedStream(watching, namespace);
  await createExample(client, namespace, "d");
  await eventually("the object created after the listing", () => named(events, "ADDED").includes("d") || undefined);
  await stop();
  assert.deepEqual(named(events, null).sort(), ["a", "b", "c"]);
  assert.deepEqual(events.map((event) => event.type), [null, null, null, "LISTED", "ADDED"]);
  assert.equal(watching.counters.count({ verb: "list" }), 0);
  assert.equal(watching.counters.count({ verb: "watch" }), 1, "one request: the listing, then the changes");
  assert.equal(watcher.health.totalFailures, 0);
});

Deno.test("a server with streaming lists off (its WatchList gate) is listed by pages; its refusal is asked once", async () => {
  await using cluster = await LocalCluster.start({ featureGates: { WatchList: false } });
  const { client } = await connect(cluster.kubeconfig);
  const namespace = await freshNamespace(client, "paged");
  for (const name of ["a", "b"]) await createExample(client, namespace, name);
  using watching = new ApiClient(client.credentials);
  const lines = await captureLogs();
  for (const round of [1, 2]) {
    const { watcher, events, stop } = await listedStream(watching, namespace);
    await eventually("the watch after it", () => watcher.health.connectedSince !== null || undefined);
    await stop();
    assert.deepEqual(named(events, null).sort(), ["a", "b"]);
    assert.equal(watcher.health.totalFailures, 0, "a refusal is no failure");
    assert.equal(watching.counters.count({ verb: "list" }), round, "one LIST per listing");
    // The first stream asked to stream and was refused; the second did not ask.
    assert.equal(watching.counters.count({ verb: "watch" }), round + 1);
  }
  const told = lines.filter((line) => line.includes("does not stream lists of kopf.dev/v1"));
  assert.equal(told.length, 1, lines.join("\n"));
  assert.match(told[0], /WatchList feature gate/);
});

Deno.test("an API server restart loses no change, repeats none, and needs no relist unless told 410", async () => {
  await using cluster = await LocalCluster.start();
  const { client } = await connect(cluster.kubeconfig);
  const namespace = await freshNamespace(client, "restart");
  const objects = ["a", "b", "c"];
  for (const name of objects) await createExample(client, namespace, name, { counter: 0 });

  const controller = new AbortController();
  const credentials = await loadKubeconfig({ path: cluster.kubeconfig });
  using watching = new ApiClient(credentials);
  const watcher = new Watcher(watching, KOPFEXAMPLES, {
    namespace,
    settings: watchSettings(),
    signal: controller.signal,
  });
  const { events, done } = record(watcher);
  await eventually("the listing", () => events.some((event) => event.type === "LISTED") || undefined);

  // Change the objects before, during and after the outage; the writer retries while the server is down.
  const rounds = 12;
  const writer = (async () => {
    for (let counter = 1; counter <= rounds; counter++) {
      for (const name of objects) {
        await eventually(
          `the patch of ${name}`,
          async () => await patchExample(client, namespace, name, { spec: { counter } }),
          { seconds: 120 },
        );
      }
      if (counter === 4) {
        await cluster.stopApiserver();
        await cluster.startApiserver();
      }
    }
  })();
  await writer;
  await eventually("the last change of every object", () => {
    const last = new Map<string, unknown>();
    for (const event of events) {
      if (event.type === "MODIFIED") {
        last.set(event.object.metadata.name!, (event.object.spec as { counter: number }).counter);
      }
    }
    return objects.every((name) => last.get(name) === rounds) || undefined;
  }, { seconds: 120 });
  controller.abort();
  await done;

  // Every change arrives once and in order. The only gaps allowed are where a relisting after a
  // 410 (the restarted server's fresh watch cache does not reach back to our resourceVersion)
  // reports the current state instead of the changes made while the stream was down.
  for (const name of objects) {
    const seen = events.flatMap((event) =>
      (event.type === "MODIFIED" || event.type === "ADDED") && event.object.metadata.name === name
        ? [{ counter: (event.object.spec as { counter: number }).counter, relisted: event.relisted === true }]
        : []
    );
    for (const [index, { counter, relisted }] of seen.entries()) {
      const previous = index === 0 ? 0 : seen[index - 1].counter;
      if (relisted) assert.ok(counter > previous, `${name}: the relisting moves forward (${previous} → ${counter})`);
      else assert.equal(counter, previous + 1, `${name}: change ${previous + 1} delivered once, in order`);
    }
    assert.equal(seen.at(-1)?.counter, rounds);
  }
  const listings = events.filter((event) => event.type === "LISTED").length;
  assert.equal(listings, 1 + watcher.health.relists, "lists only for 410s");
});

Deno.test("a watch from a compacted resourceVersion gets 410, relists, and delivers the deletions made meanwhile", async () => {
  // Without the watch cache, watches are served by etcd, whose compaction makes old revisions gone.
  await using cluster = await LocalCluster.start({ apiserverArgs: ["--watch-cache=false"] });
  const { client } = await connect(cluster.kubeconfig);
  const namespace = await freshNamespace(client, "gone");
  for (const name of ["keep", "drop", "change"]) await createExample(client, namespace, name);

  const state = new WatchState();
  using watching = new ApiClient(client.credentials);
  const first = new AbortController();
  const listing = record(
    new Watcher(watching, KOPFEXAMPLES, { namespace, state, settings: watchSettings(), signal: first.signal }),
  );
  await eventually("the first listing", () => listing.events.some((event) => event.type === "LISTED") || undefined);
  first.abort();
  await listing.done;
  assert.deepEqual(named(listing.events, null).sort(), ["change", "drop", "keep"]);

  // While nobody watches: delete one, change one, add one, then compact etcd up to now.
  await deleteExample(client, namespace, "drop");
  await patchExample(client, namespace, "change", { spec: { changed: true } });
  const added = await createExample(client, namespace, "new");
  await compact(cluster, added.metadata.resourceVersion!);

  const second = new AbortController();
  const watcher = new Watcher(watching, KOPFEXAMPLES, {
    namespace,
    state,
    settings: watchSettings(),
    signal: second.signal,
  });
  const resumed = record(watcher);
  await eventually("the relisting", () => resumed.events.some((event) => event.type === "LISTED") || undefined);
  second.abort();
  await resumed.done;

  assert.equal(watcher.health.relists, 1);
  assert.deepEqual(named(resumed.events, "DELETED"), ["drop"]);
  assert.deepEqual(named(resumed.events, "MODIFIED"), ["change"]);
  assert.deepEqual(named(resumed.events, "ADDED"), ["new"]);
  assert.ok(
    resumed.events.every((event) => event.type === "LISTED" || ("relisted" in event && event.relisted)),
    "all found by relisting",
  );
});

Deno.test("a listing by pages held back past etcd's compaction needs no relisting: its watch opened from the first page", async () => {
  // Watched from etcd (no watch cache), whose compaction makes old revisions gone.
  await using cluster = await LocalCluster.start({ apiserverArgs: ["--watch-cache=false"] });
  const { client } = await connect(cluster.kubeconfig);
  const namespace = await freshNamespace(client, "held");
  for (const name of ["a", "b", "c", "d"]) await createExample(client, namespace, name);
  using watching = new ApiClient(client.credentials);
  const controller = new AbortController();
  const watcher = new Watcher(watching, KOPFEXAMPLES, {
    namespace,
    settings: watchSettings({ listPageSize: 2, streamingLists: false }),
    signal: controller.signal,
  });
  // The consumer takes the first object and holds the rest back, as a full backlog does.
  const events = watcher[Symbol.asyncIterator]();
  const seen: WatchEvent[] = [(await events.next()).value as WatchEvent];
  await eventually("both pages and the watch", () => {
    return watching.counters.count({ verb: "list" }) === 2 && watcher.health.connectedSince !== null || undefined;
  });
  // Meanwhile: d (on the second page, read already) changes, e is created, and etcd forgets all before.
  await patchExample(client, namespace, "d", { spec: { changed: true } });
  const created = await createExample(client, namespace, "e");
  await compact(cluster, created.metadata.resourceVersion!);
  await patchExample(client, namespace, "a", { spec: { changed: true } });
  // The listing's end and a's change (after the compaction), in whichever order they come.
  const changedA = (event: WatchEvent) => event.type === "MODIFIED" && event.object.metadata.name === "a";
  while (!seen.some(changedA) || !seen.some((event) => event.type === "LISTED")) {
    seen.push((await events.next()).value as WatchEvent);
  }
  controller.abort();
  await events.return(undefined);

  assert.equal(watcher.health.relists, 0, "no 410: the watch went on from the listing's first page");
  assert.equal(watching.counters.count({ verb: "list" }), 2, "the two pages, once");
  assert.equal(watching.counters.count({ verb: "watch" }), 1, "the watch opened amid the listing goes on after it");
  assert.deepEqual(named(seen, null).sort(), ["a", "b", "c", "d"]);
  // d as the watch brought it, or as listed and then changed (if the listing reached it first): never older after newer.
  const ofD = seen.flatMap((event) =>
    event.type !== "LISTED" && event.object.metadata.name === "d"
      ? [`${event.type} ${JSON.stringify(event.object.spec)}`]
      : []
  );
  const orders = [['null {"changed":true}'], ["null {}", 'MODIFIED {"changed":true}']];
  assert.ok(orders.some((order) => JSON.stringify(order) === JSON.stringify(ofD)), ofD.join(", "));
  assert.deepEqual(named(seen, "ADDED"), ["e"]);
  assert.equal(seen.filter((event) => event.type === "LISTED").length, 1);
});

Deno.test("a stream stalled behind a proxy that stops forwarding is detected and resumed", async () => {
  const { client } = await testCluster();
  const namespace = await freshNamespace(client, "stall");
  await using proxy = proxyFor(client);
  const proxied = await throughProxy(client, proxy);
  using watching = new ApiClient(proxied);
  const inactivityTimeout = 3;
  const controller = new AbortController();
  const watcher = new Watcher(watching, KOPFEXAMPLES, {
    namespace,
    settings: watchSettings({ inactivityTimeout }),
    signal: controller.signal,
  });
  const { events, done } = record(watcher);
  await eventually("the listing", () => events.some((event) => event.type === "LISTED") || undefined);
  await createExample(client, namespace, "before");
  await eventually(
    "the object created before the freeze",
    () => named(events, "ADDED").includes("before") || undefined,
  );

  proxy.freeze();
  const stallsBefore = watcher.health.stalls;
  await createExample(client, namespace, "after");
  // Without stall detection this never arrives: the frozen connection stays open and silent.
  await eventually(
    "the object created after the freeze",
    () => named(events, "ADDED").includes("after") || undefined,
    { seconds: inactivityTimeout + 20 },
  );
  // The requests of the client that shared the stream's connection get answers again too, over a
  // new connection: on the frozen one, nothing would come before the 30-s connect timeout.
  const answered = await watching.request<{ metadata: { name: string } }>({
    path: `/api/v1/namespaces/${namespace}`,
    verb: "get",
    resource: "namespaces",
    signal: AbortSignal.timeout(25_000),
  });
  controller.abort();
  await done;
  assert.ok(watcher.health.stalls > stallsBefore, "the stall was detected");
  assert.deepEqual(named(events, "ADDED"), ["before", "after"], "nothing lost, nothing twice");
  assert.equal(events.filter((event) => event.type === "LISTED").length, 1, "resumed, not relisted");
  assert.equal(answered.metadata.name, namespace, "a request after the stall");
});

Deno.test("a stream silent while its connection answers other requests is resumed over the same connection", async () => {
  const { connections, added, health } = await quietStream("quiet", true);
  assert.equal(connections, 1, "one connection for the stream, its resumptions and the requests");
  assert.deepEqual(added, ["after"]);
  // The first silence over a working connection is a late bookmark, not a failure of the stream.
  assert.ok(health.totalFailures < health.stalls, `${health.totalFailures} failures in ${health.stalls} stalls`);
});

Deno.test("a stream silent on a connection that nothing else uses is resumed over it once a probe answers", async () => {
  const { connections, added, health, probes } = await quietStream("probe", false);
  assert.equal(connections, 1, "one connection for the stream, its resumptions and the probes");
  assert.deepEqual(added, ["after"]);
  assert.ok(probes >= 1, "probed");
  assert.ok(health.totalFailures < health.stalls, `${health.totalFailures} failures in ${health.stalls} stalls`);
});

/**
 * A watch of kopfexamples in a new namespace where nothing happens, through a counting proxy: each
 * of its requests stays silent past the bound of 1 s (the server's bookmarks come about once a
 * minute, if at all), as a stream waiting for a late bookmark would. It runs until two silences
 * were resumed and an object created after them has come; with `asking`, the same client's
 * requests go over its connection every 0.1 s meanwhile.
 */
async function quietStream(prefix: string, asking: boolean) {
  const { client } = await testCluster();
  const namespace = await freshNamespace(client, prefix);
  await using proxy = proxyFor(client);
  using watching = new ApiClient(await throughProxy(client, proxy));
  const controller = new AbortController();
  const watcher = new Watcher(watching, KOPFEXAMPLES, {
    namespace,
    settings: watchSettings({ inactivityTimeout: 1 }),
    signal: controller.signal,
  });
  const { events, done } = record(watcher);
  await eventually("the listing", () => events.some((event) => event.type === "LISTED") || undefined);
  let stop = !asking;
  const requests = (async () => {
    while (!stop) {
      await watching.request({ path: `/api/v1/namespaces/${namespace}`, verb: "get", resource: "namespaces" });
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  })();
  try {
    await eventually("two silent requests resumed", () => watcher.health.stalls >= 2 || undefined);
    await createExample(client, namespace, "after");
    await eventually("the object created after them", () => named(events, "ADDED").includes("after") || undefined);
  } finally {
    stop = true;
    await requests;
    controller.abort();
    await done;
  }
  return {
    connections: proxy.accepted,
    added: named(events, "ADDED"),
    health: watcher.health,
    probes: watching.counters.count({ verb: "get", resource: "version" }),
  };
}

Deno.test("more streams than one connection carries go over more; requests are still answered", async () => {
  const { client } = await testCluster();
  await using proxy = proxyFor(client);
  const proxied = await throughProxy(client, proxy);
  // kube-apiserver allows 100 streams at once per HTTP/2 connection; a request beyond them would
  // wait for one to end, and watches do not: without more connections, these time out.
  const networking = Object.assign(new NetworkingSettings(), { connectTimeout: 10, errorBackoffs: [] });
  using many = new ApiClient(proxied, { networking });
  const streams = new AbortController();
  try {
    const opened = await Promise.all(Array.from({ length: 110 }, (_, index) =>
      many.open({
        path: `/api/v1/namespaces/lanes-${index}/configmaps`,
        query: { watch: "true", timeoutSeconds: 300 },
        verb: "watch",
        resource: "configmaps",
        signal: streams.signal,
      })));
    assert.ok(opened.every((response) => response.ok), "every stream answered");
    const answered = await many.request<{ metadata: { name: string } }>({
      path: "/api/v1/namespaces/default",
      verb: "get",
      resource: "namespaces",
    });
    assert.equal(answered.metadata.name, "default", "a request beside them");
    assert.ok(proxy.accepted >= 2, `${proxy.accepted} connections`);
  } finally {
    streams.abort();
  }
});

/** A counting TCP proxy in front of the shared cluster's API server. */
function proxyFor(client: ApiClient): TcpProxy {
  return new TcpProxy(Number(new URL(client.credentials.server).port));
}

/** The shared cluster's credentials, with its API server reached through the proxy. */
async function throughProxy(client: ApiClient, proxy: TcpProxy): Promise<Credentials> {
  return await loadKubeconfig({ path: await writeProxyKubeconfig(client.credentials.server, proxy.port) });
}

/** Writes a kubeconfig like the shared one but pointing at the proxy. */
async function writeProxyKubeconfig(server: string, port: number): Promise<string> {
  const source = Deno.env.get("KOPF_TEST_KUBECONFIG")!;
  const text = await Deno.readTextFile(source);
  const path = await Deno.makeTempFile({ suffix: ".kubeconfig" });
  await Deno.writeTextFile(path, text.replaceAll(server, `https://127.0.0.1:${port}`));
  return path;
}
