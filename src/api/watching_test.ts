import assert from "node:assert/strict";
import { FakeApi, json, stream } from "../../tests/support/fake_api.ts";
import { KOPFEXAMPLES as RESOURCE } from "../../tests/support/cluster.ts";
import { eventually } from "../../tests/support/eventually.ts";
import { captureLogs } from "../../tests/support/logs.ts";
import { kopfMetrics } from "../observability/metrics.ts";
import { WatchingSettings } from "../settings/watching.ts";
import { Watcher, type WatchEvent, type WatchOptions } from "./watching.ts";

function obj(name: string, rv: string) {
  return { metadata: { name, namespace: "ns", uid: `uid-${name}`, resourceVersion: rv } };
}

/** Quick settings; listings by pages (streaming_lists_test.ts covers listings streamed through the watch). */
function settings(overrides: Partial<WatchingSettings> = {}): WatchingSettings {
  return Object.assign(
    new WatchingSettings(),
    { reconnectBackoff: 0.01, reconnectBackoffMax: 0.05, streamingLists: false },
    overrides,
  );
}

function describe(event: WatchEvent): string {
  if (event.type === "LISTED") return `LISTED ${event.resourceVersion}${event.relisted ? " relisted" : ""}`;
  const relisted = "relisted" in event && event.relisted ? " relisted" : "";
  return `${event.type} ${event.object.metadata.name} ${event.object.metadata.resourceVersion}${relisted}`;
}

/** Collects events until `count` have arrived, then stops the stream. */
async function collect(watcher: Watcher, controller: AbortController, count: number): Promise<string[]> {
  const seen: string[] = [];
  for await (const event of watcher) {
    seen.push(describe(event));
    if (seen.length >= count) controller.abort();
  }
  return seen;
}

Deno.test("lists page by page, watching from the list's resourceVersion", async () => {
  const controller = new AbortController();
  await using api = new FakeApi((_request, url) => {
    if (url.searchParams.get("watch")) return stream([{ type: "ADDED", object: obj("d", "11") }], undefined);
    const pages: Record<string, unknown> = {
      "": {
        kind: "KopfExampleList",
        apiVersion: "kopf.dev/v1",
        metadata: { resourceVersion: "10", continue: "p2" },
        items: [obj("a", "1"), obj("b", "2")],
      },
      "p2": {
        kind: "KopfExampleList",
        apiVersion: "kopf.dev/v1",
        metadata: { resourceVersion: "10" },
        items: [obj("c", "3")],
      },
    };
    return json(pages[url.searchParams.get("continue") ?? ""]);
  });
  const watcher = new Watcher(api.client, RESOURCE, {
    namespace: "ns",
    settings: settings({ listPageSize: 2 }),
    signal: controller.signal,
  });
  const seen = await collect(watcher, controller, 5);
  // The watch opens after the first page: its event may come before the second page's objects.
  assert.deepEqual(seen.filter((line) => line !== "ADDED d 11"), ["null a 1", "null b 2", "null c 3", "LISTED 10"]);
  assert.ok(seen.includes("ADDED d 11"));
  const lists = api.requests.filter((url) => !url.searchParams.get("watch"));
  assert.deepEqual(lists.map((url) => url.searchParams.get("limit")), ["2", "2"]);
  assert.equal(lists[0].pathname, "/apis/kopf.dev/v1/namespaces/ns/kopfexamples");
  const watch = api.watches[0];
  assert.equal(watch.searchParams.get("resourceVersion"), "10");
  assert.equal(watch.searchParams.get("allowWatchBookmarks"), "true");
  assert.equal(api.client.counters.count({ verb: "list" }), 2);
});

/** A watch response whose lines the test sends when it wants, until `end()`. */
function liveStream(): { response: Response; send: (...lines: unknown[]) => void; end: () => void } {
  let channel!: ReadableStreamDefaultController<Uint8Array>;
  const response = new Response(new ReadableStream<Uint8Array>({ start: (controller) => void (channel = controller) }));
  const encoder = new TextEncoder();
  return {
    response,
    send: (...lines) => lines.forEach((line) => channel.enqueue(encoder.encode(JSON.stringify(line) + "\n"))),
    end: () => channel.close(),
  };
}

/**
 * A stream of a server of two pages (a, b at 10; c, d), whose second page comes on `release()`;
 * `watch` answers the watch requests. What the stream delivers is in `seen`; `stop()` ends it.
 */
function twoPagesStream(watch: (url: URL, end: AbortSignal) => Response) {
  const controller = new AbortController();
  const secondPage = Promise.withResolvers<void>();
  const api = new FakeApi(async (_request, url) => {
    if (url.searchParams.get("watch")) return watch(url, controller.signal);
    if (!url.searchParams.get("continue")) {
      return json({ metadata: { resourceVersion: "10", continue: "p2" }, items: [obj("a", "1"), obj("b", "2")] });
    }
    await secondPage.promise;
    return json({ metadata: { resourceVersion: "10" }, items: [obj("c", "3"), obj("d", "4")] });
  });
  const watcher = new Watcher(api.client, RESOURCE, {
    settings: settings({ listPageSize: 2 }),
    signal: controller.signal,
  });
  const seen: string[] = [];
  const done = (async () => {
    for await (const event of watcher) seen.push(describe(event));
  })();
  const stop = async () => {
    controller.abort();
    await done;
  };
  const rvs = () => api.watches.map((url) => url.searchParams.get("resourceVersion"));
  return {
    api,
    watcher,
    seen,
    rvs,
    release: () => secondPage.resolve(),
    stop,
    [Symbol.asyncDispose]: async () => {
      await stop();
      await api[Symbol.asyncDispose]();
    },
  };
}

Deno.test("a listing by pages has its watch open from the first page: what it brings first replaces the listed state", async () => {
  const live = liveStream();
  await using paged = twoPagesStream(() => live.response);
  const { api, watcher, seen } = paged;
  await eventually("the watch amid the listing", () => api.watches.length === 1 || undefined);
  // Changes since the listing's moment, while its second page is still to come: c changed, e created, d deleted.
  live.send(
    { type: "MODIFIED", object: obj("c", "12") },
    { type: "ADDED", object: obj("e", "13") },
    { type: "DELETED", object: obj("d", "14") },
    { type: "BOOKMARK", object: { metadata: { resourceVersion: "15" } } },
  );
  await eventually("the watch's events", () => seen.includes("DELETED d 14") || undefined);
  paged.release();
  await eventually("the listing's end", () => seen.some((line) => line.startsWith("LISTED")) || undefined);
  live.send({ type: "MODIFIED", object: obj("a", "16") });
  await eventually("a change after the listing", () => seen.includes("MODIFIED a 16") || undefined);
  await paged.stop();
  // c comes as first seen with the watch's state (its listed one, older, never); d's deletion is not repeated.
  assert.deepEqual(seen.slice(0, 5).sort(), ["ADDED e 13", "DELETED d 14", "null a 1", "null b 2", "null c 12"]);
  assert.deepEqual(seen.slice(5), ["LISTED 15", "MODIFIED a 16"]);
  assert.deepEqual(paged.rvs(), ["10"], "one watch request");
  assert.equal(api.client.counters.count({ verb: "list" }), 2);
  assert.deepEqual([...watcher.state.known.keys()].sort(), ["uid-a", "uid-b", "uid-c", "uid-e"]);
  assert.equal(watcher.state.resourceVersion, "16");
});

Deno.test("a watch opened amid a listing that ends after events resumes at once from where it got", async () => {
  const first = liveStream();
  await using paged = twoPagesStream((url, end) => {
    if (url.searchParams.get("resourceVersion") === "10") return first.response;
    return stream([{ type: "ADDED", object: obj("f", "20") }], new Promise(() => {}), end);
  });
  const { api, watcher, seen } = paged;
  await eventually("the watch amid the listing", () => api.watches.length === 1 || undefined);
  first.send({ type: "MODIFIED", object: obj("a", "12") });
  first.end();
  await eventually("the next watch's event", () => seen.includes("ADDED f 20") || undefined);
  paged.release();
  await eventually("the listing's end", () => seen.some((line) => line.startsWith("LISTED")) || undefined);
  await paged.stop();
  assert.deepEqual(seen, ["null a 1", "null b 2", "MODIFIED a 12", "ADDED f 20", "null c 3", "null d 4", "LISTED 20"]);
  assert.deepEqual(paged.rvs(), ["10", "12"]);
  assert.equal(watcher.health.relists, 0);
});

Deno.test("a watch opened amid a listing that ends with nothing leaves the listing alone; a watch follows it", async () => {
  const lines = await captureLogs();
  let watches = 0;
  await using paged = twoPagesStream((_url, end) => {
    if (++watches === 1) return stream([]);
    return stream([{ type: "ADDED", object: obj("f", "20") }], new Promise(() => {}), end);
  });
  const { api, seen } = paged;
  await eventually("its end", () => lines.some((line) => line.includes("opened amid its listing ended")) || undefined);
  assert.equal(api.watches.length, 1, "no other watch request until the listing is done");
  paged.release();
  await eventually("the watch after the listing", () => seen.includes("ADDED f 20") || undefined);
  await paged.stop();
  assert.deepEqual(seen, ["null a 1", "null b 2", "null c 3", "null d 4", "LISTED 10", "ADDED f 20"]);
  assert.deepEqual(paged.rvs(), ["10", "10"]);
});

Deno.test("a continue token expired between pages lists again, delivering the objects listed already only if changed", async () => {
  const controller = new AbortController();
  let lists = 0;
  await using api = new FakeApi((_request, url) => {
    if (url.searchParams.get("watch")) return stream([], new Promise(() => {}), controller.signal);
    lists++;
    if (lists === 1) {
      return json({ metadata: { resourceVersion: "10", continue: "p2" }, items: [obj("a", "1"), obj("b", "2")] });
    }
    if (lists === 2) return json({ kind: "Status", code: 410, reason: "Expired", message: "too old" }, 410);
    return json({ metadata: { resourceVersion: "20" }, items: [obj("a", "1"), obj("b", "18"), obj("c", "3")] });
  });
  const watcher = new Watcher(api.client, RESOURCE, { settings: settings(), signal: controller.signal });
  const seen = await collect(watcher, controller, 5);
  assert.deepEqual(seen, ["null a 1", "null b 2", "MODIFIED b 18 relisted", "null c 3", "LISTED 20"]);
  assert.equal(watcher.health.relists, 1);
  assert.deepEqual(api.requests.map((url) => url.searchParams.get("continue")).filter(Boolean), ["p2"]);
});

Deno.test("listed objects get kind and apiVersion from the list", async () => {
  const controller = new AbortController();
  await using api = new FakeApi((_request, url) => {
    if (url.searchParams.get("watch")) return stream([], new Promise(() => {}), controller.signal);
    return json({
      kind: "KopfExampleList",
      apiVersion: "kopf.dev/v1",
      metadata: { resourceVersion: "5" },
      items: [obj("a", "1")],
    });
  });
  for await (const event of new Watcher(api.client, RESOURCE, { settings: settings(), signal: controller.signal })) {
    assert.equal(event.type, null);
    if (event.type === null) {
      assert.equal(event.object.kind, "KopfExample");
      assert.equal(event.object.apiVersion, "kopf.dev/v1");
    }
    break;
  }
  controller.abort();
});

/** As {@linkcode collect}, but fails if they have not all arrived within `ms`. */
async function collectWithin(watcher: Watcher, controller: AbortController, count: number, ms: number) {
  const timer = setTimeout(() => controller.abort(), ms);
  try {
    const seen = await collect(watcher, controller, count);
    assert.equal(seen.length, count, `only ${seen.join(", ")} within ${ms} ms`);
    return seen;
  } finally {
    clearTimeout(timer);
  }
}

Deno.test("resumes from the last event or bookmark when a stream ends, without relisting", async () => {
  const controller = new AbortController();
  let watches = 0;
  await using api = new FakeApi((_request, url) => {
    if (!url.searchParams.get("watch")) return json({ metadata: { resourceVersion: "10" }, items: [] });
    watches++;
    if (watches === 1) {
      return stream([
        { type: "ADDED", object: obj("a", "11") },
        { type: "BOOKMARK", object: { metadata: { resourceVersion: "15" } } },
      ]);
    }
    return stream([{ type: "MODIFIED", object: obj("a", "16") }]);
  });
  const watcher = new Watcher(api.client, RESOURCE, { settings: settings(), signal: controller.signal });
  const seen = await collect(watcher, controller, 3);
  assert.deepEqual(seen, ["LISTED 10", "ADDED a 11", "MODIFIED a 16"]);
  assert.deepEqual(api.watches.slice(0, 2).map((url) => url.searchParams.get("resourceVersion")), ["10", "15"]);
  assert.equal(api.client.counters.count({ verb: "list" }), 1);
});

Deno.test("each event and bookmark is counted by its type and stamps the stream's last event", async () => {
  const controller = new AbortController();
  const count = (type: string) => kopfMetrics.watchEvents.get([RESOURCE.plural, type]);
  const [added, bookmarks] = [count("ADDED"), count("BOOKMARK")];
  await using api = new FakeApi((_request, url) => {
    if (!url.searchParams.get("watch")) return json({ metadata: { resourceVersion: "10" }, items: [] });
    return stream([
      { type: "ADDED", object: obj("a", "11") },
      { type: "BOOKMARK", object: { metadata: { resourceVersion: "12" } } },
      { type: "ADDED", object: obj("b", "13") },
    ]);
  });
  const watcher = new Watcher(api.client, RESOURCE, { settings: settings(), signal: controller.signal });
  const started = watcher.health.lastEvent;
  assert.deepEqual(await collect(watcher, controller, 3), ["LISTED 10", "ADDED a 11", "ADDED b 13"]);
  assert.equal(count("ADDED") - added, 2);
  assert.equal(count("BOOKMARK") - bookmarks, 1);
  assert.ok(watcher.health.lastEvent > started, "the last event's time is stamped on the stream's health");
});

Deno.test("an event type that names a property of plain objects is counted as any other, and reaches no prototype", async () => {
  const controller = new AbortController();
  await using api = new FakeApi((_request, url) => {
    if (!url.searchParams.get("watch")) return json({ metadata: { resourceVersion: "10" }, items: [] });
    return stream([
      { type: "__proto__", object: obj("a", "11") },
      { type: "constructor", object: obj("a", "12") },
      { type: "ADDED", object: obj("b", "13") },
    ]);
  });
  const watcher = new Watcher(api.client, RESOURCE, { settings: settings(), signal: controller.signal });
  assert.deepEqual(await collect(watcher, controller, 2), ["LISTED 10", "ADDED b 13"]);
  assert.equal(kopfMetrics.watchEvents.get([RESOURCE.plural, "__proto__"]), 1);
  assert.equal(kopfMetrics.watchEvents.get([RESOURCE.plural, "constructor"]), 1);
  assert.equal(Object.hasOwn(Object.prototype, "value"), false);
});

/**
 * An API server with nothing to list (resourceVersion 10) whose n-th watch request sends the n-th
 * lines and ends at once; the requests after those stay open until `controller` aborts.
 */
function endingWatches(controller: AbortController, answers: unknown[][]): FakeApi {
  let watches = 0;
  return new FakeApi((_request, url) => {
    if (!url.searchParams.get("watch")) return json({ metadata: { resourceVersion: "10" }, items: [] });
    const lines = answers[watches++];
    return lines ? stream(lines) : stream([], new Promise(() => {}), controller.signal);
  });
}

const added = (n: number) => [{ type: "ADDED", object: obj(`o${n}`, String(10 + n)) }];

Deno.test("a watch request that the server ends at once after events is resumed as one ended on schedule", async () => {
  // As kube-apiserver ends the watch of a reader that fell behind in a burst, and then its resumption.
  const controller = new AbortController();
  await using api = endingWatches(controller, [added(1), added(2), added(3)]);
  // A failure would pause the stream for 10-20 s, beyond the test's patience.
  const watcher = new Watcher(api.client, RESOURCE, {
    settings: settings({ failureBackoff: 20, reconnectBackoffMax: 20 }),
    signal: controller.signal,
  });
  const seen = await collectWithin(watcher, controller, 4, 5000);
  assert.deepEqual(seen, ["LISTED 10", "ADDED o1 11", "ADDED o2 12", "ADDED o3 13"]);
  assert.equal(watcher.health.totalFailures, 0);
  assert.deepEqual(api.watches.slice(0, 3).map((url) => url.searchParams.get("resourceVersion")), ["10", "11", "12"]);
});

Deno.test("a watch request ended amid events is resumed at once; one ended with only bookmarks after reconnectBackoff", async () => {
  const controller = new AbortController();
  const bookmark = [{ type: "BOOKMARK", object: { metadata: { resourceVersion: "20" } } }];
  await using api = endingWatches(controller, [added(1), added(2), bookmark]);
  // reconnectBackoff beyond the test's patience: only the end amid events may go on without it.
  const watcher = new Watcher(api.client, RESOURCE, {
    settings: settings({ reconnectBackoff: 20 }),
    signal: controller.signal,
  });
  const seen: string[] = [];
  const consumed = (async () => {
    for await (const event of watcher) seen.push(describe(event));
  })();
  await eventually("the third watch request", () => api.watches.length === 3, { interval: 0.02, seconds: 5 });
  // The third ended with a bookmark alone: the stream pauses for reconnectBackoff before a fourth.
  await new Promise((resolve) => setTimeout(resolve, 300));
  assert.equal(api.watches.length, 3);
  controller.abort();
  await consumed;
  assert.deepEqual(seen, ["LISTED 10", "ADDED o1 11", "ADDED o2 12"]);
  assert.deepEqual(api.watches.map((url) => url.searchParams.get("resourceVersion")), ["10", "11", "12"]);
  assert.equal(watcher.health.totalFailures, 0);
});

for (
  const [what, lines] of [
    ["nothing", []],
    ["only what the stream had seen", [{ type: "MODIFIED", object: obj("a", "10") }]],
  ] as const
) {
  Deno.test(`a watch request that the server ends at once with ${what} is a failure, and the stream pauses`, async () => {
    const controller = new AbortController();
    await using api = new FakeApi((_request, url) => {
      if (!url.searchParams.get("watch")) return json({ metadata: { resourceVersion: "10" }, items: [] });
      return stream([...lines]);
    });
    const watcher = new Watcher(api.client, RESOURCE, {
      settings: settings({ failureBackoff: 20, reconnectBackoffMax: 20 }),
      signal: controller.signal,
    });
    const seen: string[] = [];
    const consumed = (async () => {
      for await (const event of watcher) seen.push(describe(event));
    })();
    await eventually("the watch request counted as a failure", () => watcher.health.totalFailures === 1, {
      interval: 0.02,
    });
    assert.match(watcher.health.lastError ?? "", /ended the watch request at once/);
    // Paused: no second watch request follows at the pace of `reconnectBackoff` (0.01 s here).
    await new Promise((resolve) => setTimeout(resolve, 300));
    assert.equal(api.watches.length, 1);
    controller.abort();
    await consumed;
    assert.deepEqual(seen, ["LISTED 10", ...lines.map((line) => describe(line))]);
  });
}

Deno.test("on 410 Gone relists and delivers what changed meanwhile, deletions included", async () => {
  const controller = new AbortController();
  let lists = 0;
  await using api = new FakeApi((_request, url) => {
    if (!url.searchParams.get("watch")) {
      lists++;
      return lists === 1
        ? json({ metadata: { resourceVersion: "10" }, items: [obj("a", "1"), obj("b", "2"), obj("c", "3")] })
        : json({ metadata: { resourceVersion: "50" }, items: [obj("a", "1"), obj("c", "40"), obj("d", "45")] });
    }
    if (url.searchParams.get("resourceVersion") === "10") {
      return stream([{ type: "ERROR", object: { kind: "Status", code: 410, reason: "Expired", message: "too old" } }]);
    }
    return stream([], new Promise(() => {}), controller.signal);
  });
  const watcher = new Watcher(api.client, RESOURCE, { settings: settings(), signal: controller.signal });
  const seen = await collect(watcher, controller, 8);
  assert.deepEqual(seen, [
    "null a 1",
    "null b 2",
    "null c 3",
    "LISTED 10",
    "MODIFIED c 40 relisted",
    "ADDED d 45 relisted",
    "DELETED b 2 relisted",
    "LISTED 50 relisted",
  ]);
  assert.equal(watcher.health.relists, 1);
  assert.deepEqual([...watcher.state.known.keys()].sort(), ["uid-a", "uid-c", "uid-d"]);
  // The watch opened amid the first listing got the 410: none asked again from there after it.
  const fromTen = api.watches.filter((url) => url.searchParams.get("resourceVersion") === "10");
  assert.equal(fromTen.length, 1);
});

Deno.test("an HTTP 410 on the watch request also relists", async () => {
  const controller = new AbortController();
  let lists = 0;
  await using api = new FakeApi((_request, url) => {
    if (!url.searchParams.get("watch")) {
      lists++;
      return json({ metadata: { resourceVersion: String(lists * 10) }, items: [] });
    }
    if (url.searchParams.get("resourceVersion") === "10") return json({ kind: "Status", code: 410 }, 410);
    return stream([], new Promise(() => {}), controller.signal);
  });
  const watcher = new Watcher(api.client, RESOURCE, { settings: settings(), signal: controller.signal });
  assert.deepEqual(await collect(watcher, controller, 2), ["LISTED 10", "LISTED 20 relisted"]);
});

Deno.test("a silent stream is detected as stalled and resumed from the same resourceVersion", async () => {
  const controller = new AbortController();
  let watches = 0;
  await using api = new FakeApi((_request, url) => {
    if (!url.searchParams.get("watch")) return json({ metadata: { resourceVersion: "10" }, items: [] });
    watches++;
    if (watches === 1) return stream([], new Promise(() => {}), controller.signal);
    return stream([{ type: "ADDED", object: obj("a", "11") }], new Promise(() => {}), controller.signal);
  });
  const watcher = new Watcher(api.client, RESOURCE, {
    settings: settings({ inactivityTimeout: 0.3 }),
    signal: controller.signal,
  });
  assert.deepEqual(await collect(watcher, controller, 2), ["LISTED 10", "ADDED a 11"]);
  assert.equal(watcher.health.stalls, 1);
  assert.deepEqual(api.watches.map((url) => url.searchParams.get("resourceVersion")), ["10", "10"]);
});

Deno.test("keeps retrying a failing server, reports itself unhealthy, and recovers", async () => {
  const controller = new AbortController();
  let failing = true;
  let attempts = 0;
  await using api = new FakeApi((_request, url) => {
    if (failing) {
      attempts++;
      return json({ kind: "Status", code: 503, message: "down" }, 503);
    }
    if (!url.searchParams.get("watch")) return json({ metadata: { resourceVersion: "10" }, items: [] });
    return stream([], new Promise(() => {}), controller.signal);
  }, { errorBackoffs: [] });
  const watcher = new Watcher(api.client, RESOURCE, {
    settings: settings({ unhealthyAfter: 0.2 }),
    signal: controller.signal,
  });
  const events = watcher[Symbol.asyncIterator]();
  const first = events.next();
  await eventually("three failed attempts and an unhealthy watch", () => !watcher.health.healthy && attempts >= 3, {
    interval: 0.02,
  });
  assert.match(watcher.health.lastError ?? "", /503/);
  failing = false;
  const result = await first;
  assert.equal(result.done, false);
  assert.equal(describe(result.value as WatchEvent), "LISTED 10");
  assert.equal(watcher.health.healthy, true);
  controller.abort();
  await events.return(undefined);
});

Deno.test("the stream ends only when the signal aborts", async () => {
  const controller = new AbortController();
  await using api = new FakeApi((_request, url) => {
    if (!url.searchParams.get("watch")) return json({ metadata: { resourceVersion: "10" }, items: [] });
    return stream([], new Promise(() => {}), controller.signal);
  });
  const watcher = new Watcher(api.client, RESOURCE, { settings: settings(), signal: controller.signal });
  setTimeout(() => controller.abort(), 100);
  const seen: string[] = [];
  for await (const event of watcher) seen.push(describe(event));
  assert.deepEqual(seen, ["LISTED 10"]);
});

Deno.test("objects the stream does not accept are neither delivered nor remembered", async () => {
  const controller = new AbortController();
  await using api = new FakeApi((_request, url) => {
    if (url.searchParams.get("watch")) {
      return stream([
        { type: "MODIFIED", object: obj("b", "11") },
        { type: "DELETED", object: obj("b", "12") },
        { type: "MODIFIED", object: obj("a", "13") },
      ], undefined);
    }
    return json({ metadata: { resourceVersion: "10" }, items: [obj("a", "1"), obj("b", "2"), obj("c", "3")] });
  });
  const watcher = new Watcher(api.client, RESOURCE, {
    namespace: "ns",
    settings: settings(),
    signal: controller.signal,
    accepts: (uid) => uid !== "uid-b",
  });
  const seen = await collect(watcher, controller, 4);
  assert.deepEqual(seen, ["null a 1", "null c 3", "LISTED 10", "MODIFIED a 13"]);
  assert.deepEqual([...watcher.state.known.keys()].sort(), ["uid-a", "uid-c"]);
  assert.equal(watcher.state.resourceVersion, "13");
});

/** A server whose list has a, b, c and whose watches stay open until the test ends. */
function scopedServer(end: AbortSignal): FakeApi {
  return new FakeApi((_request, url) => {
    if (url.searchParams.get("watch")) return stream([], new Promise(() => {}), end);
    return json({ metadata: { resourceVersion: "10" }, items: [obj("a", "1"), obj("b", "2"), obj("c", "3")] });
  });
}

/** A request as `list|watch shardSelector resourceVersion`. */
function scopeOf(url: URL): string {
  const query = url.searchParams;
  return `${query.get("watch") ? "watch" : "list"} ${query.get("shardSelector")} ${query.get("resourceVersion")}`;
}

/**
 * Runs a stream of the scoped server until its first watch request, changes its scope with
 * `change`, and stops it once the next watch request is made; returns what it delivered.
 */
async function rescoped<T>(
  options: Pick<WatchOptions, "shardSelector" | "accepts">,
  change: (watcher: Watcher) => T,
): Promise<{ seen: string[]; changed: T; requests: string[]; known: string[] }> {
  const controller = new AbortController();
  await using api = scopedServer(controller.signal);
  const watcher = new Watcher(api.client, RESOURCE, {
    ...options,
    namespace: "ns",
    settings: settings(),
    signal: controller.signal,
  });
  const seen: string[] = [];
  const done = (async () => {
    for await (const event of watcher) seen.push(describe(event));
  })();
  // The watch opens amid the listing (after its first page): the change comes once the listing is done.
  await eventually(
    "the listing and its watch",
    () => api.watches.length === 1 && seen.includes("LISTED 10") || undefined,
  );
  const changed = change(watcher);
  await eventually("the watch request after the change", () => api.watches.length === 2 || undefined);
  controller.abort();
  await done;
  return { seen, changed, requests: api.requests.map(scopeOf), known: [...watcher.state.known.keys()].sort() };
}

Deno.test("a change of scope with a listing: objects lost are dropped, objects gained come as first seen", async () => {
  const { seen, changed, requests, known } = await rescoped(
    { shardSelector: "s1", accepts: (uid) => uid !== "uid-c" },
    (watcher) => watcher.rescope({ shardSelector: "s2", accepts: (uid) => uid !== "uid-a", relist: true }),
  );
  assert.deepEqual(changed.map((identity) => identity.metadata.name), ["a"]);
  // b is kept and unchanged: not delivered again; the listing is a relisting (the stream had listed before).
  assert.deepEqual(seen, ["null a 1", "null b 2", "LISTED 10", "null c 3", "LISTED 10 relisted"]);
  assert.deepEqual(known, ["uid-b", "uid-c"]);
  assert.deepEqual(requests, ["list s1 null", "watch s1 10", "list s2 null", "watch s2 10"]);
});

Deno.test("a change of scope without a listing watches on from where the stream was, with the new selector", async () => {
  const { seen, changed, requests, known } = await rescoped(
    { shardSelector: "s1" },
    (watcher) => watcher.rescope({ shardSelector: "s2", accepts: (uid) => uid === "uid-b" }),
  );
  assert.deepEqual(changed.map((identity) => identity.metadata.name).sort(), ["a", "c"]);
  assert.deepEqual(seen, ["null a 1", "null b 2", "null c 3", "LISTED 10"]);
  assert.deepEqual(requests, ["list s1 null", "watch s1 10", "watch s2 10"]);
  assert.deepEqual(known, ["uid-b"]);
});

Deno.test("a change of scope may name known objects that its listing delivers again as first seen", async () => {
  const { seen, changed } = await rescoped(
    {},
    (watcher) => watcher.rescope({ relist: true, revisit: (uid) => uid === "uid-b" }),
  );
  assert.deepEqual(changed, []);
  assert.deepEqual(seen, ["null a 1", "null b 2", "null c 3", "LISTED 10", "null b 2", "LISTED 10 relisted"]);
});

Deno.test("objects to revisit add up over changes of scope until a listing completes", async () => {
  // Two changes before the listing of the first one could run: both objects come again.
  const { seen } = await rescoped({}, (watcher) => {
    watcher.rescope({ relist: true, revisit: (uid) => uid === "uid-a" });
    watcher.rescope({ relist: true, revisit: (uid) => uid === "uid-c" });
  });
  assert.deepEqual(seen, [
    "null a 1",
    "null b 2",
    "null c 3",
    "LISTED 10",
    "null a 1",
    "null c 3",
    "LISTED 10 relisted",
  ]);
});
