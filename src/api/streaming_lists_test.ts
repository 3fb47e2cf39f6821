import assert from "node:assert/strict";
import { FakeApi, json, stream } from "../../tests/support/fake_api.ts";
import { KOPFEXAMPLES as RESOURCE } from "../../tests/support/cluster.ts";
import { eventually } from "../../tests/support/eventually.ts";
import { WatchingSettings } from "../settings/watching.ts";
import { Watcher, type WatchEvent } from "./watching.ts";

function obj(name: string, rv: string) {
  return {
    kind: "KopfExample",
    apiVersion: "kopf.dev/v1",
    metadata: { name, uid: `uid-${name}`, resourceVersion: rv },
  };
}

/** The bookmark that ends the initial events at `rv`. */
function end(rv: string) {
  return {
    type: "BOOKMARK",
    object: { metadata: { resourceVersion: rv, annotations: { "k8s.io/initial-events-end": "true" } } },
  };
}

function settings(overrides: Partial<WatchingSettings> = {}): WatchingSettings {
  return Object.assign(new WatchingSettings(), { reconnectBackoff: 0.01, reconnectBackoffMax: 0.05 }, overrides);
}

function describe(event: WatchEvent): string {
  if (event.type === "LISTED") return `LISTED ${event.resourceVersion}${event.relisted ? " relisted" : ""}`;
  const relisted = "relisted" in event && event.relisted ? " relisted" : "";
  return `${event.type} ${event.object.metadata.name} ${event.object.metadata.resourceVersion}${relisted}`;
}

/**
 * Runs a stream until `count` events have arrived and, with `api`, it has made `requests` requests
 * (or 10 s have passed); then stops it.
 */
async function collect(
  watcher: Watcher,
  controller: AbortController,
  count: number,
  until?: { api: FakeApi; requests: number },
): Promise<string[]> {
  const seen: string[] = [];
  const done = (async () => {
    for await (const event of watcher) seen.push(describe(event));
  })();
  try {
    await eventually(`${count} events`, () => seen.length >= count || undefined, { seconds: 10, interval: 0.01 });
    if (until) {
      const { api, requests } = until;
      await eventually(`${requests} requests`, () => api.requests.length >= requests || undefined, { seconds: 10 });
    }
  } finally {
    controller.abort();
    await done;
  }
  return seen;
}

/** A request as `list`, `stream` (a watch asking for initial events) or `watch RV`. */
function kindOf(url: URL): string {
  const query = url.searchParams;
  if (!query.get("watch")) return "list";
  if (query.get("sendInitialEvents") === "true") {
    assert.equal(query.get("resourceVersionMatch"), "NotOlderThan");
    assert.equal(query.get("resourceVersion"), null, "a streamed listing is a consistent read");
    assert.equal(query.get("allowWatchBookmarks"), "true", "the end of the initial events is a bookmark");
    return "stream";
  }
  return `watch ${query.get("resourceVersion")}`;
}

Deno.test("a listing streams as the watch's first events, and the same request watches on", async () => {
  const controller = new AbortController();
  await using api = new FakeApi((_request, url) => {
    assert.equal(kindOf(url), "stream");
    return stream(
      [
        { type: "ADDED", object: obj("a", "1") },
        { type: "ADDED", object: obj("b", "3") },
        end("10"),
        { type: "ADDED", object: obj("c", "11") },
      ],
      new Promise(() => {}),
      controller.signal,
    );
  });
  const watcher = new Watcher(api.client, RESOURCE, { settings: settings(), signal: controller.signal });
  const seen = await collect(watcher, controller, 4);
  assert.deepEqual(seen, ["null a 1", "null b 3", "LISTED 10", "ADDED c 11"]);
  assert.deepEqual(api.requests.map(kindOf), ["stream"]);
  assert.equal(api.client.counters.count({ verb: "list" }), 0);
  assert.equal(watcher.state.resourceVersion, "11");
  assert.deepEqual([...watcher.state.known.keys()].sort(), ["uid-a", "uid-b", "uid-c"]);
});

Deno.test("the objects' own resourceVersions amid a streamed listing are no resume point", async () => {
  // Cut after the first object: the next request lists again (by pages), never resumes from "7".
  const controller = new AbortController();
  await using api = new FakeApi((_request, url) => {
    if (kindOf(url) === "stream") return stream([{ type: "ADDED", object: obj("a", "7") }]);
    if (kindOf(url) === "list") {
      return json({ metadata: { resourceVersion: "10" }, items: [obj("a", "7"), obj("b", "8")] });
    }
    return stream([], new Promise(() => {}), controller.signal);
  });
  const watcher = new Watcher(api.client, RESOURCE, { settings: settings(), signal: controller.signal });
  const seen = await collect(watcher, controller, 3, { api, requests: 3 });
  // a was delivered once: the listing by pages found it unchanged.
  assert.deepEqual(seen, ["null a 7", "null b 8", "LISTED 10"]);
  assert.deepEqual(api.requests.slice(0, 3).map(kindOf), ["stream", "list", "watch 10"]);
});

Deno.test("a relisting after 410 streams too, and reports what changed meanwhile, deletions included", async () => {
  const controller = new AbortController();
  let streams = 0;
  await using api = new FakeApi((_request, url) => {
    assert.equal(kindOf(url), "stream");
    if (++streams === 1) {
      return stream([
        { type: "ADDED", object: obj("a", "1") },
        { type: "ADDED", object: obj("b", "2") },
        end("10"),
        { type: "ERROR", object: { kind: "Status", code: 410, reason: "Expired", message: "too old" } },
      ]);
    }
    return stream(
      [
        { type: "ADDED", object: obj("a", "12") },
        { type: "ADDED", object: obj("c", "13") },
        end("14"),
      ],
      new Promise(() => {}),
      controller.signal,
    );
  });
  const watcher = new Watcher(api.client, RESOURCE, { settings: settings(), signal: controller.signal });
  const seen = await collect(watcher, controller, 7);
  assert.deepEqual(seen, [
    "null a 1",
    "null b 2",
    "LISTED 10",
    "MODIFIED a 12 relisted",
    "ADDED c 13 relisted",
    "DELETED b 2 relisted",
    "LISTED 14 relisted",
  ]);
  assert.equal(watcher.health.relists, 1);
  assert.equal(api.client.counters.count({ verb: "list" }), 0);
});

/** A server that refuses streaming (its WatchList gate off), as kube-apiserver words it. */
function refusing(controller: AbortController): FakeApi {
  return new FakeApi((_request, url) => {
    const kind = kindOf(url);
    if (kind === "stream") {
      const message = 'ListOptions.meta.k8s.io "" is invalid: sendInitialEvents: Forbidden: sendInitialEvents is ' +
        "forbidden for watch unless the WatchList feature gate is enabled";
      return json({ kind: "Status", status: "Failure", reason: "Invalid", code: 422, message }, 422);
    }
    if (kind === "list") return json({ metadata: { resourceVersion: "10" }, items: [obj("a", "1")] });
    return stream([], new Promise(() => {}), controller.signal);
  });
}

Deno.test("a server that refuses streaming is listed by pages, and no other stream of the client asks it again", async () => {
  const controller = new AbortController();
  await using api = refusing(controller);
  const first = new Watcher(api.client, RESOURCE, { settings: settings(), signal: controller.signal });
  assert.deepEqual(await collect(first, controller, 2), ["null a 1", "LISTED 10"]);
  assert.equal(first.health.totalFailures, 0, "a refusal is no failure of the stream");
  const again = new AbortController();
  const second = new Watcher(api.client, RESOURCE, { settings: settings(), signal: again.signal });
  assert.deepEqual(await collect(second, again, 2), ["null a 1", "LISTED 10"]);
  assert.deepEqual(api.requests.map(kindOf).filter((kind) => kind !== "watch 10"), ["stream", "list", "list"]);
});

Deno.test("an invalid streaming request for another reason lists by pages, where the error shows as it did", async () => {
  const controller = new AbortController();
  await using api = new FakeApi(() => {
    const message = 'unable to parse requirement: found "!", expected: identifier';
    return json({ kind: "Status", status: "Failure", reason: "BadRequest", code: 400, message }, 400);
  });
  const watcher = new Watcher(api.client, RESOURCE, {
    labelSelector: "!!",
    settings: settings({ failureBackoff: 20, reconnectBackoffMax: 20 }),
    signal: controller.signal,
  });
  const seen: string[] = [];
  const done = (async () => {
    for await (const event of watcher) seen.push(describe(event));
  })();
  await eventually("the LIST's failure", () => watcher.health.totalFailures > 0 || undefined, { seconds: 10 });
  controller.abort();
  await done;
  assert.deepEqual(seen, []);
  assert.equal(watcher.health.totalFailures, 1, "the LIST's failure");
  assert.match(watcher.health.lastError ?? "", /unable to parse requirement/);
  assert.deepEqual(api.requests.map(kindOf), ["stream", "list"]);
});

Deno.test("a server that ignores the request to stream (a plain watch) is detected at its first bookmark", async () => {
  const controller = new AbortController();
  await using api = new FakeApi((_request, url) => {
    const kind = kindOf(url);
    if (kind === "stream") {
      // What an old server sends for a watch without a resourceVersion: every object, then its own bookmarks.
      return stream(
        [
          { type: "ADDED", object: obj("a", "1") },
          { type: "BOOKMARK", object: { metadata: { resourceVersion: "10" } } },
        ],
        new Promise(() => {}),
        controller.signal,
      );
    }
    if (kind === "list") return json({ metadata: { resourceVersion: "11" }, items: [obj("a", "1"), obj("b", "11")] });
    return stream([], new Promise(() => {}), controller.signal);
  });
  const watcher = new Watcher(api.client, RESOURCE, { settings: settings(), signal: controller.signal });
  const seen = await collect(watcher, controller, 3, { api, requests: 3 });
  assert.deepEqual(seen, ["null a 1", "null b 11", "LISTED 11"]);
  assert.deepEqual(api.requests.slice(0, 3).map(kindOf), ["stream", "list", "watch 11"]);
  assert.equal(watcher.health.totalFailures, 0);
});

Deno.test("with streaming lists off, a stream lists by pages", async () => {
  const controller = new AbortController();
  await using api = refusing(controller);
  const watcher = new Watcher(api.client, RESOURCE, {
    settings: settings({ streamingLists: false }),
    signal: controller.signal,
  });
  assert.deepEqual(await collect(watcher, controller, 2, { api, requests: 2 }), ["null a 1", "LISTED 10"]);
  assert.deepEqual(api.requests.slice(0, 2).map(kindOf), ["list", "watch 10"]);
});

Deno.test("a change of scope with a listing streams it with the new selector", async () => {
  const controller = new AbortController();
  await using api = new FakeApi((_request, url) => {
    assert.equal(kindOf(url), "stream");
    const items = url.searchParams.get("shardSelector") === "s1" ? [obj("a", "1")] : [obj("a", "1"), obj("b", "2")];
    return stream(
      [...items.map((object) => ({ type: "ADDED", object })), end("10")],
      new Promise(() => {}),
      controller.signal,
    );
  });
  const watcher = new Watcher(api.client, RESOURCE, {
    shardSelector: "s1",
    settings: settings(),
    signal: controller.signal,
  });
  const seen: string[] = [];
  for await (const event of watcher) {
    seen.push(describe(event));
    if (seen.length === 2) watcher.rescope({ shardSelector: "s2", relist: true });
    if (seen.length === 4) controller.abort();
  }
  assert.deepEqual(seen, ["null a 1", "LISTED 10", "null b 2", "LISTED 10 relisted"]);
  assert.deepEqual(api.requests.map((url) => url.searchParams.get("shardSelector")), ["s1", "s2"]);
});
