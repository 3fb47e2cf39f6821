import assert from "node:assert/strict";
import type { KubernetesObject } from "../model/body.ts";
import type { Resource } from "../model/resource.ts";
import type { HandlerLogger } from "../logging/object_logger.ts";
import { currentObject } from "../handling/current_object.ts";
import { PermanentError, TemporaryError } from "../handling/errors.ts";
import { PRESENT } from "../handling/filters.ts";
import type { IndexFn } from "../handling/handlers.ts";
import { index, type IndexOptions } from "../handling/index_registration.ts";
import { Registry } from "../handling/registry.ts";
import { encodeIndexKey, type Index, MutableIndex } from "../model/index_store.ts";
import { OperatorIndexes } from "./indexing.ts";
import { indexEntries } from "../model/index_entries.ts";

function resourceOf(plural: string, kind: string): Resource {
  return {
    group: "",
    version: "v1",
    plural,
    kind,
    singular: kind.toLowerCase(),
    namespaced: true,
    preferred: true,
    shortcuts: [],
    categories: [],
    verbs: ["list", "watch"],
    subresources: [],
  };
}

const PODS = resourceOf("pods", "Pod");
const SERVICES = resourceOf("services", "Service");

function pod(name: string, namespace = "default", extra: Partial<KubernetesObject> = {}): KubernetesObject {
  const { metadata, ...rest } = extra;
  return {
    apiVersion: "v1",
    kind: "Pod",
    metadata: { name, namespace, uid: `uid-${namespace}-${name}`, ...metadata },
    ...rest,
  };
}

function recorder(): { lines: [string, string][]; logger: HandlerLogger } {
  const lines: [string, string][] = [];
  const log = (level: string) => (message: string) => void lines.push([level, message]);
  const logger: HandlerLogger = {
    debug: log("debug"),
    info: log("info"),
    warning: log("warning"),
    warn: log("warning"),
    error: log("error"),
    exception: log("exception"),
  };
  return { lines, logger };
}

/** An operator's indexes over one registered indexer (or several), with a fake clock and a log. */
function setup(register: (registry: Registry) => void) {
  const registry = new Registry();
  register(registry);
  const clock = { now: 1_000_000 };
  const indexes = new OperatorIndexes(registry.handlers, { now: () => clock.now });
  const { lines, logger } = recorder();
  const handlers = indexes.handlersFor(PODS);
  const memo = {};
  const feed = (type: string | null, body: KubernetesObject) =>
    indexes.indexObject(handlers, type, body, { memo, resource: PODS, logger });
  return { indexes, clock, lines, feed, handlers };
}

function on(fn: IndexFn, options: Omit<IndexOptions, "registry"> = {}) {
  return (registry: Registry) => index("pods", { ...options, registry }, fn);
}

/** The index as plain data, keys sorted by their encoding, values sorted: easy to compare. */
function dump(idx: Index | undefined): [unknown, unknown[]][] {
  assert.ok(idx);
  return [...idx]
    .map(([key, store]): [unknown, unknown[]] => [key, [...store].sort()])
    .sort(([a], [b]) => encodeIndexKey(a).localeCompare(encodeIndexKey(b)));
}

// --- keys and stores ---

Deno.test("keys: compared by value, tuples and objects included, types kept apart", () => {
  assert.equal(encodeIndexKey(["a", 1]), encodeIndexKey(["a", 1]));
  assert.equal(encodeIndexKey({ b: 1, a: [2] }), encodeIndexKey({ a: [2], b: 1 }));
  assert.equal(encodeIndexKey(undefined), encodeIndexKey(null));
  assert.equal(encodeIndexKey(-0), encodeIndexKey(0));
  assert.notEqual(encodeIndexKey(1), encodeIndexKey("1"));
  assert.notEqual(encodeIndexKey(["a,b"]), encodeIndexKey(["a", "b"]));
  assert.notEqual(encodeIndexKey(null), encodeIndexKey("null"));
  assert.notEqual(encodeIndexKey(NaN), encodeIndexKey(null));
  assert.notEqual(encodeIndexKey(1n), encodeIndexKey(1));
  assert.notEqual(encodeIndexKey([[1], 2]), encodeIndexKey([1, [2]]));
});

Deno.test("index: lookups by an equal tuple; keys given back as frozen copies", () => {
  const idx = new MutableIndex();
  const key = ["default", "web"];
  idx.replace("o1", indexEntries(new Map([[key, "v1"]]))!);
  idx.replace("o2", indexEntries(new Map([[["default", "web"], "v2"]]))!);
  assert.equal(idx.size, 1);
  assert.ok(idx.has(["default", "web"]));
  assert.deepEqual([...idx.get(["default", "web"])!].sort(), ["v1", "v2"]);
  key.push("mutated");
  const [stored] = idx.keys();
  assert.deepEqual(stored, ["default", "web"]);
  assert.ok(Object.isFrozen(stored));
  assert.equal(idx.get(["nope"]), undefined);
  assert.deepEqual(idx.get(["nope"], []), []);
  assert.equal(idx.has(Symbol("never")), false);
  assert.equal(idx.get(() => 1), undefined);
});

Deno.test("index: replacing and removing an owner's values drops empty stores and keys", () => {
  const idx = new MutableIndex();
  idx.replace("o1", indexEntries({ a: 1, b: 2 })!);
  idx.replace("o2", indexEntries({ b: 3 })!);
  assert.deepEqual([...idx.keys()], ["a", "b"]);
  const b = idx.get("b")!;
  assert.equal(b.size, 2);

  idx.replace("o1", indexEntries({ c: 4 })!);
  assert.deepEqual([...idx.keys()].sort(), ["b", "c"]);
  assert.deepEqual([...b], [3]); // a live view
  assert.equal(b.size, 1);

  idx.remove("o2");
  assert.deepEqual([...idx.keys()], ["c"]);
  assert.equal(idx.has("b"), false);
  idx.replace("o1", []);
  assert.equal(idx.size, 0);
  assert.equal(idx.owns("o1"), false);
  idx.remove("never-seen");
});

Deno.test("index: duplicates across objects are kept; equal keys in one result: the last wins", () => {
  const idx = new MutableIndex();
  idx.replace("o1", indexEntries({ k: "same" })!);
  idx.replace("o2", indexEntries({ k: "same" })!);
  assert.deepEqual([...idx.get("k")!], ["same", "same"]);
  idx.replace("o3", indexEntries(new Map([[["t"], 1], [["t"], 2]]))!);
  assert.deepEqual([...idx.get(["t"])!], [2]);
  assert.deepEqual(JSON.parse(JSON.stringify(idx)), [["k", ["same", "same"]], [["t"], [2]]]);
});

// --- the engine: declaration, content, removal ---

Deno.test("indices exist empty from the start, frozen, with no inherited names", () => {
  const { indexes } = setup((registry) => {
    index("pods", { registry }, function byNs() {});
    index("services", { registry }, function bySvc() {});
  });
  assert.deepEqual(Object.keys(indexes.indices).sort(), ["byNs", "bySvc"]);
  assert.equal(indexes.indices.byNs.size, 0);
  assert.ok(Object.isFrozen(indexes.indices));
  assert.equal(indexes.indices.toString, undefined);
  assert.equal(indexes.indices.constructor, undefined);
  assert.deepEqual(indexes.handlersFor(SERVICES).map((handler) => handler.id), ["bySvc"]);
  assert.deepEqual(indexes.handlersFor(PODS).map((handler) => handler.id), ["byNs"]);
});

Deno.test("one id registered twice is one index, and runs once per object", async () => {
  let calls = 0;
  function twice() {
    calls++;
    return "x";
  }
  const { indexes, feed } = setup((registry) => {
    index("pods", { registry }, twice);
    index("pods", { registry }, twice);
  });
  assert.equal(indexes.handlersFor(PODS).length, 1);
  await feed(null, pod("a"));
  assert.equal(calls, 1);
});

Deno.test("by namespace: values follow creation, moves and deletion; keys vanish", async () => {
  const { indexes, feed } = setup(on(function byNs({ namespace, name }) {
    return { [namespace!]: name };
  }));
  const idx = indexes.indices.byNs;
  await feed(null, pod("a"));
  await feed("ADDED", pod("b"));
  await feed("ADDED", pod("c", "kube-system"));
  assert.deepEqual(dump(idx), [["default", ["a", "b"]], ["kube-system", ["c"]]]);

  await feed("MODIFIED", pod("b"));
  assert.deepEqual(dump(idx), [["default", ["a", "b"]], ["kube-system", ["c"]]]);

  await feed("DELETED", pod("c", "kube-system"));
  assert.deepEqual([...idx.keys()], ["default"]);
  await feed("DELETED", pod("a"));
  await feed("DELETED", pod("b"));
  assert.equal(idx.size, 0);
});

Deno.test("values are recomputed on every event: a changed result replaces the object's values", async () => {
  const { indexes, feed } = setup(on(function byPhase({ status, name }) {
    return { [String(status.phase)]: name };
  }));
  await feed(null, pod("a", "default", { status: { phase: "Pending" } }));
  await feed("MODIFIED", pod("a", "default", { status: { phase: "Running" } }));
  assert.deepEqual(dump(indexes.indices.byPhase), [["Running", ["a"]]]);
});

Deno.test("null or undefined keep the object's values; an empty object removes them", async () => {
  let result: unknown = { k: "v" };
  const { indexes, feed } = setup(on(function keep() {
    return result;
  }));
  await feed(null, pod("a"));
  result = undefined;
  await feed("MODIFIED", pod("a"));
  result = null;
  await feed("MODIFIED", pod("a"));
  assert.deepEqual(dump(indexes.indices.keep), [["k", ["v"]]]);
  result = {};
  await feed("MODIFIED", pod("a"));
  assert.equal(indexes.indices.keep.size, 0);
});

Deno.test("an object that stops matching the filters loses its values; matching again restores them", async () => {
  const { indexes, feed } = setup(on(function labelled({ name }) {
    return { all: name };
  }, { labels: { app: PRESENT } }));
  const labelled = (labels?: Record<string, string>) => pod("a", "default", { metadata: { labels } });
  await feed(null, labelled({ app: "web" }));
  assert.deepEqual(dump(indexes.indices.labelled), [["all", ["a"]]]);
  await feed("MODIFIED", labelled());
  assert.equal(indexes.indices.labelled.size, 0);
  await feed("MODIFIED", labelled({ app: "web" }));
  assert.equal(indexes.indices.labelled.size, 1);
});

Deno.test("objects of several resources in one index do not clash by name", async () => {
  const registry = new Registry();
  index("pods", { registry }, function names({ body, name }) {
    return { [name!]: body.kind };
  });
  index("services", { registry }, function names({ body, name }) {
    return { [name!]: body.kind };
  });
  const indexes = new OperatorIndexes(registry.handlers);
  const parts = (resource: Resource) => ({ memo: {}, resource, logger: recorder().logger });
  const service = { apiVersion: "v1", kind: "Service", metadata: { name: "a", namespace: "default" } };
  const podBody = { apiVersion: "v1", kind: "Pod", metadata: { name: "a", namespace: "default" } };
  await indexes.indexObject(indexes.handlersFor(PODS), null, podBody, parts(PODS));
  await indexes.indexObject(indexes.handlersFor(SERVICES), null, service, parts(SERVICES));
  assert.deepEqual(dump(indexes.indices.names), [["a", ["Pod", "Service"]]]);
  await indexes.indexObject(indexes.handlersFor(SERVICES), "DELETED", service, parts(SERVICES));
  assert.deepEqual(dump(indexes.indices.names), [["a", ["Pod"]]]);
});

Deno.test("forget() removes an object's values from every index", async () => {
  const { indexes, feed } = setup((registry) => {
    index("pods", { registry }, function one({ name }) {
      return { [name!]: 1 };
    });
    index("pods", { registry }, function two({ name }) {
      return { [name!]: 2 };
    });
  });
  await feed(null, pod("a"));
  await feed(null, pod("b"));
  indexes.forget(pod("a"));
  assert.deepEqual([...indexes.indices.one.keys()], ["b"]);
  assert.deepEqual([...indexes.indices.two.keys()], ["b"]);
});

Deno.test("indexers get the context: body parts, param, memo, indices, a terse logger, the current object", async () => {
  const seen: Record<string, unknown> = {};
  const { indexes, feed, lines } = setup(on(function ctx(context) {
    const { name, namespace, param, memo, logger, patch } = context;
    Object.assign(seen, { name, namespace, param, memo, patch, current: currentObject()?.metadata.name });
    seen.indices = (context as unknown as { indices: unknown }).indices;
    logger.info("informational");
    logger.warning("careful");
    return null;
  }, { param: 42 }));
  await feed(null, pod("a"));
  assert.equal(seen.name, "a");
  assert.equal(seen.param, 42);
  assert.equal(seen.current, "a");
  assert.equal(seen.indices, indexes.indices);
  assert.ok(seen.patch);
  assert.deepEqual(lines, [
    ["debug", "informational"],
    ["warning", "careful"],
    ["debug", "Indexing handler 'ctx' succeeded."],
  ]);
});

Deno.test("filter callbacks see the context without param", async () => {
  let param: unknown = "unset";
  const { indexes, feed } = setup(on(function filtered() {
    return 1;
  }, {
    param: 7,
    when: (context) => {
      param = (context as { param?: unknown }).param;
      return true;
    },
  }));
  await feed(null, pod("a"));
  assert.equal(param, undefined);
  assert.equal(indexes.indices.filtered.size, 1);
});

Deno.test("a handler unknown to the indexes is a programming error", async () => {
  const other = new Registry();
  index("pods", { registry: other }, function stranger() {});
  const indexes = new OperatorIndexes([]);
  await assert.rejects(
    () => indexes.indexObject(other.handlers as never, null, pod("a"), { memo: {}, resource: PODS }),
    /unknown to the operator's indexes/,
  );
});

// --- errors ---

Deno.test("errors ignored (the default): stale values kept, the exception logged with its stack", async () => {
  let fail = false;
  const { indexes, feed, lines } = setup(on(function flaky({ name }) {
    if (fail) throw new Error("boom");
    return { [name!]: "old" };
  }));
  await feed(null, pod("a"));
  fail = true;
  await feed("MODIFIED", pod("a"));
  assert.deepEqual(dump(indexes.indices.flaky), [["a", ["old"]]]);
  assert.deepEqual(lines.at(-1), [
    "exception",
    "Indexing handler 'flaky' failed with an exception; its values are kept.",
  ]);
  fail = false;
  await feed("MODIFIED", pod("a"));
  assert.deepEqual(lines.at(-1), ["debug", "Indexing handler 'flaky' succeeded."]);
});

Deno.test("PermanentError: values removed, the object excluded for good (until deleted)", async () => {
  let calls = 0;
  let fail = true;
  const { indexes, feed, lines, clock } = setup(on(function strict({ name }) {
    calls++;
    if (fail) throw new PermanentError("no way");
    return { [name!]: 1 };
  }));
  fail = false;
  await feed(null, pod("a"));
  await feed(null, pod("b"));
  fail = true;
  await feed("MODIFIED", pod("a"));
  assert.deepEqual([...indexes.indices.strict.keys()], ["b"]);
  assert.deepEqual(lines.at(-1), ["error", "Indexing handler 'strict' failed permanently: no way; excluded for good."]);
  fail = false;
  clock.now += 1e9;
  await feed("MODIFIED", pod("a"));
  assert.equal(calls, 3);
  assert.deepEqual([...indexes.indices.strict.keys()], ["b"]);
  // A deleted and re-created object (same uid in this test) starts afresh.
  await feed("DELETED", pod("a"));
  await feed("ADDED", pod("a"));
  assert.equal(calls, 4);
  assert.deepEqual([...indexes.indices.strict.keys()].sort(), ["a", "b"]);
});

Deno.test("errors permanent: an arbitrary error excludes for good, logged with the stack", async () => {
  const { indexes, feed, lines } = setup(on(function strict() {
    throw new Error("bad");
  }, { errors: "permanent" }));
  await feed(null, pod("a"));
  assert.equal(indexes.indices.strict.size, 0);
  assert.deepEqual(lines.at(-1), [
    "exception",
    "Indexing handler 'strict' failed permanently: bad; excluded for good.",
  ]);
});

Deno.test("TemporaryError(delay): values removed; re-indexed at the first event after the delay", async () => {
  let calls = 0;
  let fail = false;
  const { indexes, feed, lines, clock } = setup(on(function shaky({ name }) {
    calls++;
    if (fail) throw new TemporaryError("later", { delay: 5 });
    return { [name!]: 1 };
  }));
  await feed(null, pod("p"));
  fail = true;
  await feed("MODIFIED", pod("p"));
  assert.equal(indexes.indices.shaky.size, 0);
  assert.match(lines.at(-1)![1], /failed temporarily: later; excluded for 5s/);
  assert.equal(lines.at(-1)![0], "warning");
  fail = false;
  clock.now += 4_999;
  await feed("MODIFIED", pod("p"));
  assert.equal(calls, 2);
  assert.equal(indexes.indices.shaky.size, 0);
  clock.now += 1;
  await feed("MODIFIED", pod("p"));
  assert.equal(calls, 3);
  assert.deepEqual([...indexes.indices.shaky.keys()], ["p"]);
});

Deno.test("errors temporary: excluded for backoff, else the settings' default backoff", async () => {
  const registry = new Registry();
  let calls = 0;
  index("pods", { registry, errors: "temporary" }, function usesDefault() {
    calls++;
    throw new Error("x");
  });
  const clock = { now: 0 };
  const settings = { execution: { defaultBackoff: 30 } };
  const indexes = new OperatorIndexes(registry.handlers, { now: () => clock.now, settings });
  const { logger, lines } = recorder();
  const feed = () =>
    indexes.indexObject(indexes.handlersFor(PODS), "MODIFIED", pod("a"), { memo: {}, resource: PODS, logger });
  await feed();
  assert.match(lines.at(-1)![1], /excluded for 30s/);
  assert.equal(lines.at(-1)![0], "exception");
  clock.now += 29_999;
  await feed();
  assert.equal(calls, 1);
  clock.now += 1;
  await feed();
  assert.equal(calls, 2);

  const { indexes: other, lines: otherLines, feed: otherFeed } = setup(on(function withBackoff() {
    throw new Error("y");
  }, { errors: "temporary", backoff: 2 }));
  await otherFeed(null, pod("a"));
  assert.match(otherLines.at(-1)![1], /excluded for 2s/);
  assert.equal(other.indices.withBackoff.size, 0);
});

Deno.test("retries: the exclusion becomes permanent after so many failures", async () => {
  let calls = 0;
  const { feed, lines, clock } = setup(on(function limited() {
    calls++;
    throw new TemporaryError("again", { delay: 1 });
  }, { retries: 2 }));
  await feed(null, pod("a"));
  clock.now += 1_000;
  await feed("MODIFIED", pod("a"));
  assert.match(lines.at(-1)![1], /used up its 2 retries; excluded for good/);
  clock.now += 1e9;
  await feed("MODIFIED", pod("a"));
  assert.equal(calls, 2);
});

Deno.test("timeout: the exclusion becomes permanent once the failing streak is older", async () => {
  let calls = 0;
  const { feed, lines, clock } = setup(on(function slow() {
    calls++;
    throw new TemporaryError("again", { delay: 10 });
  }, { timeout: 15 }));
  await feed(null, pod("a"));
  clock.now += 10_000;
  await feed("MODIFIED", pod("a")); // 10 s into the streak: still within the timeout
  assert.equal(calls, 2);
  clock.now += 10_000;
  await feed("MODIFIED", pod("a")); // 20 s: given up without calling
  assert.equal(calls, 2);
  assert.match(lines.at(-1)![1], /has timed out after 15s; excluded for good/);
});

Deno.test("a success resets the failure counters", async () => {
  let calls = 0;
  let fail = true;
  const { indexes, feed, clock } = setup(on(function resets({ name }) {
    calls++;
    if (fail) throw new TemporaryError("again", { delay: 1 });
    return { [name!]: 1 };
  }, { retries: 2 }));
  await feed(null, pod("a")); // failure 1
  clock.now += 1_000;
  fail = false;
  await feed("MODIFIED", pod("a")); // success: counters reset
  fail = true;
  await feed("MODIFIED", pod("a")); // failure 1 again, not 2
  clock.now += 1_000;
  fail = false;
  await feed("MODIFIED", pod("a"));
  assert.equal(calls, 4);
  assert.deepEqual([...indexes.indices.resets.keys()], ["a"]);
});

Deno.test("a failing filter callback counts as the indexer's error", async () => {
  const { indexes, feed, lines } = setup(on(function guarded() {
    return 1;
  }, {
    when: () => {
      throw new PermanentError("filter broke");
    },
  }));
  await feed(null, pod("a"));
  assert.equal(indexes.indices.guarded.size, 0);
  assert.match(lines.at(-1)![1], /filter broke/);
});

Deno.test("an invalid key in a Map result is the indexer's error: old values kept by default", async () => {
  let result: unknown = { ok: 1 };
  const { indexes, feed, lines } = setup(on(function keys() {
    return result;
  }));
  await feed(null, pod("a"));
  result = new Map([[Symbol("bad"), 1]]);
  await feed("MODIFIED", pod("a"));
  assert.deepEqual([...indexes.indices.keys.keys()], ["ok"]);
  assert.equal(lines.at(-1)![0], "exception");
});

Deno.test("async indexers are awaited", async () => {
  const { indexes, feed } = setup(on(async function later({ name }) {
    await new Promise((resolve) => setTimeout(resolve, 1));
    return { [name!]: true };
  }));
  await feed(null, pod("a"));
  assert.ok(indexes.indices.later.has("a"));
});

// --- readiness ---

Deno.test("readiness: ready once every expected stream is listed; re-listings do not count", async () => {
  const indexes = new OperatorIndexes([]);
  assert.ok(indexes.isReady);
  await indexes.whenReady();
  indexes.expect("pods", "services");
  assert.equal(indexes.isReady, false);
  let ready = false;
  const waiting = indexes.whenReady().then(() => ready = true);
  indexes.listed("pods");
  await Promise.resolve();
  assert.equal(ready, false);
  assert.deepEqual(indexes.pending, ["services"]);
  indexes.listed("services");
  await waiting;
  assert.ok(ready && indexes.isReady);
  indexes.expect("pods");
  assert.ok(indexes.isReady);
  indexes.listed("never-expected");
  assert.ok(indexes.isReady);
});

Deno.test("readiness: waiting is cancelled by a signal", async () => {
  const indexes = new OperatorIndexes([]);
  indexes.expect("pods");
  const controller = new AbortController();
  const waiting = indexes.whenReady(controller.signal);
  controller.abort(new Error("stopping"));
  await assert.rejects(waiting, /stopping/);
  await assert.rejects(indexes.whenReady(controller.signal), /stopping/);
  indexes.listed("pods");
  await indexes.whenReady(controller.signal);
});

// --- the documented recipes ---

Deno.test("recipe: an unindexed collection of (namespace, name) pairs under the key null", async () => {
  const { indexes, feed } = setup(on(function podsList({ namespace, name }) {
    return [namespace, name];
  }));
  await feed(null, pod("a"));
  await feed(null, pod("b", "other"));
  assert.deepEqual([...indexes.indices.podsList.get(null, [])].sort(), [["default", "a"], ["other", "b"]]);
  assert.deepEqual([...indexes.indices.podsList.keys()], [null]);
});

Deno.test("recipe: enumerating resources with tuple keys and null values", async () => {
  const { indexes, feed } = setup(on(function podsSet({ namespace, name }) {
    return new Map([[[namespace, name], null]]);
  }));
  await feed(null, pod("a"));
  await feed(null, pod("b"));
  assert.ok(indexes.indices.podsSet.has(["default", "a"]));
  assert.deepEqual([...indexes.indices.podsSet.get(["default", "b"])!], [null]);
  await feed("DELETED", pod("a"));
  assert.equal(indexes.indices.podsSet.has(["default", "a"]), false);
});

Deno.test("recipe: mirroring whole bodies by (namespace, name)", async () => {
  const { indexes, feed } = setup(on(function mirror({ body, namespace, name }) {
    return new Map([[[namespace, name], body]]);
  }));
  const body = pod("a", "default", { spec: { nodeName: "n1" } });
  await feed(null, body);
  const [mirrored] = indexes.indices.mirror.get(["default", "a"])!;
  assert.equal(mirrored, body);
});

Deno.test("recipe: an index of an index's keys, read from the indexer's indices", async () => {
  const { indexes, feed } = setup((registry) => {
    index("pods", { registry }, function byLabel({ labels, name }) {
      return Object.fromEntries(Object.entries(labels).map(([key, value]) => [`${key}=${value}`, name]));
    });
    index("pods", { registry }, function labelKeys(context) {
      const { indices } = context as unknown as { indices: Record<string, Index> };
      return { count: indices.byLabel.size };
    });
  });
  await feed(null, pod("a", "default", { metadata: { labels: { app: "web", tier: "front" } } }));
  assert.deepEqual(dump(indexes.indices.byLabel), [["app=web", ["a"]], ["tier=front", ["a"]]]);
  assert.deepEqual(dump(indexes.indices.labelKeys), [["count", [2]]]);
});

Deno.test("recipe: conditional indexing by filters (values removed) or by returning null (values kept)", async () => {
  const { indexes, feed } = setup((registry) => {
    index("pods", { registry, when: ({ status }) => status.phase === "Running" }, function running({ name }) {
      return { running: name };
    });
    index("pods", { registry }, function runningOnce({ status, name }) {
      return status.phase === "Running" ? { running: name } : null;
    });
  });
  await feed(null, pod("a", "default", { status: { phase: "Running" } }));
  await feed(null, pod("b", "default", { status: { phase: "Pending" } }));
  assert.deepEqual(dump(indexes.indices.running), [["running", ["a"]]]);
  assert.deepEqual(dump(indexes.indices.runningOnce), [["running", ["a"]]]);
  await feed("MODIFIED", pod("a", "default", { status: { phase: "Succeeded" } }));
  assert.equal(indexes.indices.running.size, 0);
  assert.deepEqual(dump(indexes.indices.runningOnce), [["running", ["a"]]]);
});
