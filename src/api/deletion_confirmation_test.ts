import assert from "node:assert/strict";
import type { ApiClient } from "./client.ts";
import { CHECKED_AT_ONCE, confirmDeletions, matchesSelector } from "./deletion_confirmation.ts";
import { ApiNotFoundError } from "./errors.ts";
import type { KubernetesObject } from "../model/body.ts";
import { CONFIGMAPS } from "../../tests/support/cluster.ts";
import type { WatchEvent } from "./watch_state.ts";

const object = (labels: Record<string, string>, uid = "u1"): KubernetesObject => ({
  apiVersion: "v1",
  kind: "ConfigMap",
  metadata: { namespace: "ns", name: "cm", uid, labels },
});

/** A client whose GET answers with `current` (or 404 when it is `null`). */
function clientWith(current: KubernetesObject | null): ApiClient {
  return {
    request: () => current ? Promise.resolve(current) : Promise.reject(new ApiNotFoundError("GET", 404, undefined)),
  } as unknown as ApiClient;
}

async function confirmed(deleted: KubernetesObject, current: KubernetesObject | null): Promise<WatchEvent[]> {
  async function* events(): AsyncGenerator<WatchEvent, void, undefined> {
    yield { type: "DELETED", object: deleted };
  }
  const out: WatchEvent[] = [];
  const signal = new AbortController().signal;
  for await (const event of confirmDeletions(events(), clientWith(current), CONFIGMAPS, "app=x", "cm", signal)) {
    out.push(event);
  }
  return out;
}

Deno.test("a deleted object that still exists unmatched has left the selection", async () => {
  const now = object({ app: "y" });
  assert.deepEqual(await confirmed(object({ app: "x" }), now), [{ type: "MODIFIED", object: now, left: true }]);
});

Deno.test("a deleted object that matches again by the time it is checked has not left: it stays known", async () => {
  const now = object({ app: "x" });
  assert.deepEqual(await confirmed(object({ app: "x" }), now), [{ type: "MODIFIED", object: now, left: false }]);
});

Deno.test("a deletion stays one when the object is gone or is another object of the same name", async () => {
  const deleted = object({ app: "x" });
  assert.deepEqual(await confirmed(deleted, null), [{ type: "DELETED", object: deleted }]);
  assert.deepEqual(await confirmed(deleted, object({ app: "x" }, "u2")), [{ type: "DELETED", object: deleted }]);
});

/** Objects named `cm-N` (uid `uN`); `gone` ones answer 404, the others exist unmatched; each GET waits for `release`. */
function slowClient(gone: (name: string) => boolean) {
  let inFlight = 0;
  let most = 0;
  const waiting: (() => void)[] = [];
  const client = {
    request: async ({ path }: { path: string }) => {
      const name = path.split("/").pop()!;
      inFlight++;
      most = Math.max(most, inFlight);
      await new Promise<void>((resolve) => waiting.push(resolve));
      inFlight--;
      if (gone(name)) throw new ApiNotFoundError("GET", 404, undefined);
      return { ...named(name), metadata: { ...named(name).metadata, labels: {} } };
    },
  } as unknown as ApiClient;
  return {
    client,
    most: () => most,
    /** Answers the GETs waiting now, oldest last: out of order. */
    release: () => waiting.splice(0).reverse().forEach((resolve) => resolve()),
  };
}

const named = (name: string): KubernetesObject => ({
  apiVersion: "v1",
  kind: "ConfigMap",
  metadata: { namespace: "ns", name, uid: `u${name.slice(3)}`, labels: { app: "x" } },
});

/** The names and types of the events, as they came out. */
const shown = (events: WatchEvent[]) =>
  events.map((event) => event.type === "LISTED" ? "LISTED" : `${event.type} ${event.object.metadata.name}`);

Deno.test("a burst of deletions is checked at once, and the events keep the stream's order", async () => {
  const { client, most, release } = slowClient((name) => Number(name.slice(3)) % 2 === 0);
  async function* events(): AsyncGenerator<WatchEvent, string, undefined> {
    for (let i = 0; i < 10; i++) {
      yield { type: "DELETED", object: named(`cm-${i}`) };
      if (i === 4) yield { type: "ADDED", object: named("cm-new") };
    }
    return "ended";
  }
  const timer = setInterval(release, 1);
  try {
    const out: WatchEvent[] = [];
    const signal = new AbortController().signal;
    const stream = confirmDeletions(events(), client, CONFIGMAPS, "app=x", "cm", signal);
    let next = await stream.next();
    for (; !next.done; next = await stream.next()) out.push(next.value);
    assert.equal(next.value, "ended");
    assert.deepEqual(shown(out), [
      "DELETED cm-0",
      "MODIFIED cm-1",
      "DELETED cm-2",
      "MODIFIED cm-3",
      "DELETED cm-4",
      "ADDED cm-new",
      "MODIFIED cm-5",
      "DELETED cm-6",
      "MODIFIED cm-7",
      "DELETED cm-8",
      "MODIFIED cm-9",
    ]);
    assert.ok(out.every((event) => event.type !== "MODIFIED" || event.left === true));
    assert.ok(most() > 1, `the GETs overlapped: at most ${most()} at once`);
  } finally {
    clearInterval(timer);
  }
});

Deno.test("the events read ahead while deletions are checked are bounded", async () => {
  const { client, most, release } = slowClient(() => true);
  let read = 0;
  async function* events(): AsyncGenerator<WatchEvent, void, undefined> {
    for (let i = 0; i < 100; i++) {
      read++;
      yield { type: "DELETED", object: named(`cm-${i}`) };
    }
  }
  const signal = new AbortController().signal;
  const stream = confirmDeletions(events(), client, CONFIGMAPS, "app=x", "cm", signal);
  const first = stream.next();
  // Nothing is answered yet: the stream reads on until that many wait. Reading on takes only microtasks, all run
  // before a timer's turn.
  await new Promise((resolve) => setTimeout(resolve, 0));
  assert.equal(most(), CHECKED_AT_ONCE);
  assert.equal(read, CHECKED_AT_ONCE);
  release();
  assert.deepEqual(shown([(await first).value as WatchEvent]), ["DELETED cm-0"]);
  const timer = setInterval(release, 1);
  try {
    let count = 1;
    while (!(await stream.next()).done) count++;
    assert.equal(count, 100);
  } finally {
    clearInterval(timer);
  }
});

Deno.test("a stream that fails behind deletions being checked passes them on first, then its error", async () => {
  const { client, release } = slowClient(() => false);
  async function* events(): AsyncGenerator<WatchEvent, void, undefined> {
    yield { type: "DELETED", object: named("cm-1") };
    yield { type: "MODIFIED", object: named("cm-2") };
    throw new Error("the connection broke");
  }
  const timer = setInterval(release, 1);
  try {
    const out: WatchEvent[] = [];
    const signal = new AbortController().signal;
    await assert.rejects(async () => {
      for await (const event of confirmDeletions(events(), client, CONFIGMAPS, "app=x", "cm", signal)) out.push(event);
    }, /the connection broke/);
    assert.deepEqual(shown(out), ["MODIFIED cm-1", "MODIFIED cm-2"]);
  } finally {
    clearInterval(timer);
  }
});

Deno.test("the selectors' equality requirements match as the server applies them", () => {
  const labels = { app: "x", tier: "web" };
  assert.ok(matchesSelector("app=x", labels));
  assert.ok(matchesSelector("app==x,tier", labels));
  assert.ok(matchesSelector("app!=y,!legacy", labels));
  assert.ok(matchesSelector("example.com/part-of", { "example.com/part-of": "" }));
  assert.ok(!matchesSelector("app=y", labels));
  assert.ok(!matchesSelector("app=x,!tier", labels));
  assert.ok(!matchesSelector("app!=x", labels));
  assert.ok(!matchesSelector("legacy", labels));
  assert.ok(!matchesSelector("app in (x,y)", labels), "a set-based requirement is not taken as matched");
});
