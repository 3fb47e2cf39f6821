import assert from "node:assert/strict";
import { IdleCollection, idleCollectionFor, type Schedule } from "./idle_collection.ts";
import { ProcessSettings } from "../settings/process.ts";
import { ObjectQueues } from "./queueing.ts";
import { kopfMetrics } from "../observability/metrics.ts";
import { obtainGarbageCollector } from "../utils/garbage_collector.ts";

/** A clock under the test's control: the quiet periods end when the test says so, never by time. */
function manualClock() {
  const pending = new Set<() => void>();
  const schedule: Schedule = (callback) => {
    pending.add(callback);
    return () => pending.delete(callback);
  };
  /** Ends every quiet period scheduled so far, and lets the collection load its collector. */
  const elapse = async () => {
    const due = [...pending];
    pending.clear();
    due.forEach((callback) => callback());
    await new Promise((resolve) => setTimeout(resolve, 0));
  };
  return { schedule, elapse, pending: () => pending.size };
}

const MIB = 1024 * 1024;

/**
 * A collection whose collector counts its calls, with a resident memory of the test's choosing (`memory.rss`, bytes),
 * which each collection brings down to `memory.floor`.
 */
function counted(options: { obtain?: () => Promise<() => void>; growth?: number; now?: () => number } = {}) {
  const clock = manualClock();
  let collections = 0;
  const memory = { rss: 100 * MIB, floor: 100 * MIB };
  const obtain = options.obtain ?? (() =>
    Promise.resolve(() => {
      collections++;
      memory.rss = memory.floor;
    }));
  const collection = new IdleCollection({
    delay: 5,
    growth: options.growth,
    resident: () => memory.rss,
    obtain,
    schedule: clock.schedule,
    now: options.now,
  });
  return { collection, clock, memory, collections: () => collections };
}

/** A collection on a manual clock with a time of the test's choosing, recording the delays it asks for. */
function timed() {
  const clock = manualClock();
  const requested: number[] = [];
  const time = { now: 0 };
  let collections = 0;
  const collection = new IdleCollection({
    delay: 5,
    obtain: () => Promise.resolve(() => void collections++),
    schedule: (callback, seconds) => {
      requested.push(seconds);
      return clock.schedule(callback, seconds);
    },
    now: () => time.now,
  });
  return { collection, clock, requested, time, collections: () => collections };
}

Deno.test("a burst is followed by one collection once quiet; staying idle adds none; new work adds one", async () => {
  const { collection, clock, memory, collections } = counted();
  await clock.elapse();
  assert.equal(collections(), 0, "no work yet: nothing to collect");
  collection.busy();
  collection.busy();
  collection.idle();
  assert.equal(clock.pending(), 0, "one queue still works: no quiet period yet");
  collection.idle();
  assert.equal(collections(), 0, "not before the quiet period ends");
  await clock.elapse();
  assert.equal(collections(), 1);
  for (let i = 0; i < 3; i++) await clock.elapse();
  assert.equal(collections(), 1, "idle: no further collection");
  assert.equal(clock.pending(), 0, "idle: nothing even scheduled");
  collection.busy();
  memory.rss += 4 * MIB;
  collection.idle();
  await clock.elapse();
  assert.equal(collections(), 2, "new work, one more");
});

Deno.test("only work that grew the resident memory by the growth since the last collection is followed by one", async () => {
  const { collection, clock, memory, collections } = counted();
  memory.rss = 130 * MIB;
  collection.busy();
  collection.idle();
  await clock.elapse();
  assert.equal(collections(), 1, "the first collection (the start's) does not wait for any growth");
  assert.equal(memory.rss, 100 * MIB);
  for (const grown of [1, 2, 3.9]) {
    collection.busy();
    memory.rss = 100 * MIB + grown * MIB;
    collection.idle();
    await clock.elapse();
    assert.equal(collections(), 1, `${grown} MiB more than after the last collection: too little to give back`);
    assert.equal(clock.pending(), 0, "and nothing scheduled while idle");
  }
  collection.busy();
  memory.rss = 104 * MIB;
  collection.idle();
  await clock.elapse();
  assert.equal(collections(), 2, "4 MiB more: one collection");
  memory.floor = 90 * MIB;
  memory.rss = 95 * MIB;
  collection.busy();
  collection.idle();
  await clock.elapse();
  assert.equal(collections(), 2, "growth counts from what the last collection left (100 MiB), not from its start");
  collection.busy();
  memory.rss = 110 * MIB;
  collection.idle();
  await clock.elapse();
  assert.equal(collections(), 3);
});

Deno.test("work that ends a quiet period or more after the last reading is weighed at once, without a timer", async () => {
  const time = { now: 0 };
  const { collection, clock, memory, collections } = counted({ now: () => time.now });
  collection.busy();
  collection.idle();
  await clock.elapse();
  assert.equal(collections(), 1, "the start's collection, which reads the memory it leaves");
  time.now += 6000;
  collection.busy();
  memory.rss += MIB;
  collection.idle();
  assert.equal(clock.pending(), 0, "an object alone that grew the memory too little: no quiet period is timed");
  time.now += 6000;
  collection.busy();
  memory.rss += 3 * MIB;
  collection.idle();
  assert.equal(clock.pending(), 1, "4 MiB above what the collection left: the quiet period begins");
  await clock.elapse();
  assert.equal(collections(), 2);
});

Deno.test("a burst's work is read at once for its first few starts, then timed and weighed at the period's end", async () => {
  const time = { now: 0 };
  const { collection, clock, memory, collections } = counted({ now: () => time.now });
  collection.busy();
  collection.idle();
  await clock.elapse();
  time.now += 6000;
  for (let start = 1; start <= 4; start++) {
    collection.busy();
    collection.idle();
    assert.equal(clock.pending(), 0, `start ${start} of work that came alone: weighed at once`);
    time.now += 10;
  }
  collection.busy();
  collection.idle();
  assert.equal(clock.pending(), 1, "a fifth start within a quiet period: a burst, timed (not read: nothing has grown)");
  collection.busy();
  collection.idle();
  assert.equal(clock.pending(), 1, "one timer for the burst");
  memory.rss += 4 * MIB;
  time.now += 5000;
  await clock.elapse();
  assert.equal(collections(), 2, "4 MiB since the collection, weighed at the period's end");
});

Deno.test("growth 0: every quiet period after work is followed by a collection", async () => {
  const { collection, clock, collections } = counted({ growth: 0 });
  for (let round = 1; round <= 3; round++) {
    collection.busy();
    collection.idle();
    await clock.elapse();
    assert.equal(collections(), round);
  }
});

Deno.test("events turned away: a quiet period with too little growth counts them afresh", async () => {
  const { collection, clock, memory, collections } = counted();
  for (let i = 0; i < 1000; i++) collection.passed();
  await clock.elapse();
  assert.equal(collections(), 1, "the first collection");
  for (let i = 0; i < 1000; i++) collection.passed();
  memory.rss += MIB;
  await clock.elapse();
  assert.equal(collections(), 1, "a MiB more: none");
  collection.passed();
  assert.equal(clock.pending(), 0, "the thousand are counted afresh: one more event begins no quiet period");
  for (let i = 0; i < 999; i++) collection.passed();
  memory.rss += 4 * MIB;
  await clock.elapse();
  assert.equal(collections(), 2);
});

Deno.test("events turned away: a collection once a thousand have passed and stopped; fewer add none", async () => {
  const { collection, clock, collections } = counted();
  for (let i = 0; i < 999; i++) collection.passed();
  assert.equal(clock.pending(), 0, "a few events of other members: nothing to collect");
  collection.passed();
  assert.equal(clock.pending(), 1, "a thousand: the quiet period begins");
  collection.passed();
  await clock.elapse();
  assert.equal(collections(), 0, "events still came during the quiet period: it begins again");
  assert.equal(clock.pending(), 1);
  await clock.elapse();
  assert.equal(collections(), 1, "quiet at last: one collection");
  for (let i = 0; i < 999; i++) collection.passed();
  await clock.elapse();
  assert.equal(collections(), 1, "counted afresh after the collection");
});

Deno.test("events turned away: the collection comes the full delay after the last of them, not a whole period later", async () => {
  const { collection, clock, requested, time, collections } = timed();
  for (let i = 0; i < 1000; i++) collection.passed();
  time.now = 3000;
  collection.passed();
  time.now = 5000;
  await clock.elapse();
  assert.equal(collections(), 0, "an event came 2 s ago: not yet");
  assert.deepEqual(requested, [5, 3], "the rest of the delay after that event, not 5 s more");
  time.now = 8000;
  await clock.elapse();
  assert.equal(collections(), 1, "5 s after the last event");
});

Deno.test("a collection after the queues' work does not wait for events turned away", async () => {
  const { collection, clock, collections } = counted();
  collection.busy();
  collection.idle();
  for (let i = 0; i < 2000; i++) collection.passed();
  assert.equal(clock.pending(), 1, "one quiet period, the queues'");
  await clock.elapse();
  assert.equal(collections(), 1, "the others' events may never stop in a busy group");
  assert.equal(clock.pending(), 0);
});

Deno.test("work that comes during the quiet period postpones the collection until after it", async () => {
  const { collection, clock, collections } = counted();
  collection.busy();
  collection.idle();
  collection.busy();
  await clock.elapse();
  assert.equal(collections(), 0, "never during work");
  assert.equal(clock.pending(), 0, "the period that ended during work begins no other");
  collection.idle();
  await clock.elapse();
  assert.equal(collections(), 1, "one collection for both bursts");
});

Deno.test("objects one at a time: one timer for the quiet period, which counts from the last work's end", async () => {
  const { collection, clock, requested, time, collections } = timed();
  for (let object = 1; object <= 100; object++) {
    time.now = object * 20;
    collection.busy();
    collection.idle();
  }
  assert.deepEqual(requested, [5], "not a timer per object");
  time.now = 5000;
  await clock.elapse();
  assert.equal(collections(), 0, "the last object was done 3 s ago");
  assert.deepEqual(requested, [5, 2], "the rest of the delay after it");
  time.now = 7000;
  await clock.elapse();
  assert.equal(collections(), 1);
});

Deno.test("work that comes and goes while the collector loads gets its own quiet period, not an early collection", async () => {
  const clock = manualClock();
  let collections = 0;
  const loading = Promise.withResolvers<() => void>();
  const collection = new IdleCollection({ delay: 5, obtain: () => loading.promise, schedule: clock.schedule });
  collection.busy();
  collection.idle();
  await clock.elapse();
  collection.busy();
  collection.idle();
  loading.resolve(() => void collections++);
  await new Promise((resolve) => setTimeout(resolve, 0));
  assert.equal(collections, 0, "the work just done is not yet followed by its quiet period");
  await clock.elapse();
  assert.equal(collections, 1);
});

Deno.test("a collector that cannot be obtained is asked for once, and the operator goes on", async () => {
  let asked = 0;
  const { collection, clock } = counted({
    obtain: () => {
      asked++;
      return Promise.reject(new Error("no gc here"));
    },
  });
  for (let i = 0; i < 3; i++) {
    collection.busy();
    collection.idle();
    await clock.elapse();
  }
  assert.equal(asked, 1);
});

Deno.test("after its disposal, nothing is collected, even with a quiet period under way", async () => {
  const { collection, clock, collections } = counted();
  collection.busy();
  collection.idle();
  collection[Symbol.dispose]();
  await clock.elapse();
  collection.busy();
  collection.idle();
  await clock.elapse();
  assert.equal(collections(), 0);
});

Deno.test("settings.process.idleCollection: null turns the collection off; a number of seconds is its delay", () => {
  const settings = new ProcessSettings();
  assert.equal(settings.idleCollection, 5);
  using collection = idleCollectionFor(settings);
  assert.ok(collection instanceof IdleCollection);
  settings.idleCollection = null;
  assert.equal(idleCollectionFor(settings), undefined);
  settings.idleCollection = -1;
  assert.throws(() => idleCollectionFor(settings), /settings\.process\.idleCollection must be/);
  settings.idleCollection = 5;
  assert.equal(settings.idleCollectionGrowth, 4);
  settings.idleCollectionGrowth = -1;
  assert.throws(() => idleCollectionFor(settings), /settings\.process\.idleCollectionGrowth must be/);
});

Deno.test("a growth that is no number of MiB is refused with a message naming the setting", () => {
  for (const growth of [-1, NaN, Infinity, "4" as unknown as number]) {
    assert.throws(
      () => new IdleCollection({ delay: 5, growth }),
      /settings\.process\.idleCollectionGrowth must be a number of MiB \(0 or more\); it is/,
    );
  }
});

Deno.test("a delay that is no number of seconds is refused with a message naming the setting", () => {
  for (const delay of [-1, NaN, Infinity, "5" as unknown as number]) {
    assert.throws(() => new IdleCollection({ delay }), /settings\.process\.idleCollection must be a number of seconds/);
  }
});

Deno.test("object queues report busy when the first key gets work and idle when the last key is done", async () => {
  const calls: string[] = [];
  const releases: (() => void)[] = [];
  const queues = new ObjectQueues<string>(
    () => new Promise<void>((resolve) => releases.push(resolve)),
    () => {},
    { activity: { busy: () => calls.push("busy"), idle: () => calls.push("idle") } },
  );
  queues.push("a", "1");
  queues.push("b", "1");
  queues.push("a", "2");
  assert.deepEqual(calls, ["busy"]);
  const drained = queues.drain();
  while (calls.length < 2) {
    releases.splice(0).forEach((release) => release());
    await new Promise((resolve) => setTimeout(resolve, 0));
  }
  await drained;
  assert.deepEqual(calls, ["busy", "idle"]);
  queues.push("c", "1");
  assert.deepEqual(calls, ["busy", "idle", "busy"]);
  releases.splice(0).forEach((release) => release());
  await queues.drain();
  assert.deepEqual(calls, ["busy", "idle", "busy", "idle"]);
});

Deno.test("V8's collector is obtained at run time without --expose-gc, and a collection counts in the metric", async () => {
  assert.equal(typeof (globalThis as { gc?: unknown }).gc, "undefined", "this test runs without --expose-gc");
  const gc = await obtainGarbageCollector();
  assert.equal(await obtainGarbageCollector(), gc, "obtained once");
  const clock = manualClock();
  const collection = new IdleCollection({ delay: 0, schedule: clock.schedule });
  const before = kopfMetrics.idleCollections.get([]);
  collection.busy();
  collection.idle();
  await clock.elapse();
  assert.equal(kopfMetrics.idleCollections.get([]), before + 1);
});
