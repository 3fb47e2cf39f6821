import assert from "node:assert/strict";
import { ObjectQueues } from "./queueing.ts";

/** A processor whose calls wait until released, recording what runs at once. */
function gated() {
  const releases: (() => void)[] = [];
  const log: string[] = [];
  let running = 0;
  let peak = 0;
  const process = async (key: string, item: string) => {
    running++;
    peak = Math.max(peak, running);
    log.push(`${key}:${item}`);
    await new Promise<void>((resolve) => releases.push(resolve));
    running--;
  };
  /** Releases every waiting call, turn after turn, until `until` settles. */
  const releaseUntil = async <R>(until: Promise<R>): Promise<R> => {
    let settled = false;
    const result = until.finally(() => settled = true);
    while (!settled) {
      releases.splice(0).forEach((release) => release());
      await new Promise((resolve) => setTimeout(resolve, 0));
    }
    return await result;
  };
  return { process, log, releases, releaseUntil, peak: () => peak };
}

Deno.test("without a limit, every key is processed at once; one key's items in order", async () => {
  const gate = gated();
  const queues = new ObjectQueues<string>(gate.process, () => {});
  for (const key of ["a", "b", "c"]) queues.push(key, "1");
  queues.push("a", "2");
  await new Promise((resolve) => setTimeout(resolve, 0));
  assert.equal(gate.releases.length, 3);
  assert.deepEqual(await gate.releaseUntil(queues.drain()), new Map());
  assert.equal(gate.peak(), 3);
  assert.deepEqual(gate.log.filter((entry) => entry.startsWith("a:")), ["a:1", "a:2"]);
});

Deno.test("with a limit, at most that many keys are processed at once, the others in arrival order", async () => {
  const gate = gated();
  const queues = new ObjectQueues<string>(gate.process, () => {}, { limit: 1 });
  for (const key of ["a", "b", "c"]) queues.push(key, "1");
  queues.push("a", "2");
  assert.deepEqual(await gate.releaseUntil(queues.drain()), new Map());
  assert.equal(gate.peak(), 1);
  assert.deepEqual(gate.log, ["a:1", "a:2", "b:1", "c:1"]);
});

Deno.test("drain gives back what was not processed when its signal aborts", async () => {
  const gate = gated();
  const queues = new ObjectQueues<string>(gate.process, () => {}, { limit: 1 });
  queues.push("a", "1");
  queues.push("a", "2");
  queues.push("b", "1");
  const left = await queues.drain(AbortSignal.timeout(10));
  assert.deepEqual(left, new Map([["a", ["1", "2"]], ["b", ["1"]]]));
  assert.deepEqual(await gate.releaseUntil(queues.drain()), new Map());
  assert.deepEqual(gate.log, ["a:1", "a:2", "b:1"]);
});

Deno.test("a limit must be a whole number of at least 1", () => {
  for (const limit of [0, -1, 1.5, Number.NaN]) {
    assert.throws(() => new ObjectQueues<string>(async () => {}, () => {}, { limit }), RangeError);
    assert.throws(() => new ObjectQueues<string>(async () => {}, () => {}, { backlog: limit }), /backlogLimit/);
  }
});

Deno.test("room: nothing while fewer keys than the backlog limit have work, however many items; at it, a promise that resolves once a key's work is done or discarded", async () => {
  const gate = gated();
  const queues = new ObjectQueues<string>(gate.process, () => {}, { limit: 1, backlog: 2 });
  for (const item of ["1", "2", "3", "4"]) queues.push("a", item);
  assert.equal(queues.room(), undefined, "one busy key's items do not hold the producer back");
  queues.push("b", "1");
  assert.equal(queues.depth, 5);
  let roomy = false;
  const room = queues.room()?.then(() => roomy = true);
  assert.ok(room, "a promise at the limit");
  await new Promise((resolve) => setTimeout(resolve, 0));
  assert.equal(roomy, false);
  // b waits for the worker slot: discarding it makes room at once.
  assert.equal(await queues.discard("b"), true);
  await room;
  assert.equal(queues.depth, 4);
  queues.push("c", "1");
  const next = queues.room();
  assert.ok(next);
  await gate.releaseUntil(next);
  assert.deepEqual(gate.log.slice(0, 4), ["a:1", "a:2", "a:3", "a:4"], "room came when a's items were all done");
  assert.equal(queues.depth, 1);
  await gate.releaseUntil(queues.drain());
  assert.equal(queues.depth, 0);
  assert.equal(new ObjectQueues<string>(gate.process, () => {}).room(), undefined);
});

Deno.test("squash merges a new item into the last one waiting, never into the one in progress", async () => {
  const gate = gated();
  const squash = (waiting: string, next: string) => next.startsWith("+") ? `${waiting}${next}` : undefined;
  const queues = new ObjectQueues<string>(gate.process, () => {}, { squash });
  queues.push("a", "1");
  queues.push("a", "+2");
  queues.push("a", "3");
  queues.push("a", "+4");
  queues.push("a", "+5");
  assert.equal(queues.depth, 3, "1 in progress, 3 and 3+4+5 waiting: +2 had only the one in progress ahead");
  await gate.releaseUntil(queues.drain());
  assert.deepEqual(gate.log, ["a:1", "a:+2", "a:3+4+5"]);
  assert.equal(queues.depth, 0);
});

Deno.test("squash: a key waiting for a worker slot keeps its first item and merges the later ones", async () => {
  const gate = gated();
  const squash = (waiting: string, next: string) => `${waiting}${next}`;
  const queues = new ObjectQueues<string>(gate.process, () => {}, { limit: 1, squash });
  queues.push("a", "1");
  for (const item of ["1", "+2", "+3"]) queues.push("b", item);
  assert.equal(queues.depth, 3);
  await gate.releaseUntil(queues.drain());
  assert.deepEqual(gate.log, ["a:1", "b:1", "b:+2+3"]);
});

Deno.test("CPU-bound items of many keys let timers run between them", async () => {
  const order: string[] = [];
  const queues = new ObjectQueues<string>((key) => {
    const until = performance.now() + 15;
    while (performance.now() < until) { /* a synchronous handler's work */ }
    order.push(key);
    return Promise.resolve();
  }, () => {});
  setTimeout(() => order.push("timer"), 0);
  for (const key of ["a", "b", "c", "d", "e"]) queues.push(key, "1");
  await queues.drain();
  const timer = order.indexOf("timer");
  assert.ok(timer >= 0 && timer < order.length - 1, `a timer ran before the last item: ${order.join(", ")}`);
});

Deno.test("discard drops a key's items not started, waits for the one in progress, and leaves other keys alone", async () => {
  const gate = gated();
  const queues = new ObjectQueues<string>(gate.process, () => {}, { limit: 2 });
  for (const item of ["1", "2", "3"]) queues.push("a", item);
  queues.push("b", "1");
  queues.push("c", "1");
  await new Promise((resolve) => setTimeout(resolve, 0));
  assert.deepEqual(gate.log, ["a:1", "b:1"]);
  // c waits for a slot: dropped at once, never processed.
  assert.equal(await queues.discard("c"), true);
  const discarding = queues.discard("a");
  assert.equal(await gate.releaseUntil(discarding), true);
  assert.deepEqual([...queues.keys()], []);
  await gate.releaseUntil(queues.drain());
  assert.deepEqual(gate.log, ["a:1", "b:1"]);
  assert.equal(await queues.discard("unknown"), true);
});

Deno.test("discard gives up waiting when its signal aborts", async () => {
  const gate = gated();
  const queues = new ObjectQueues<string>(gate.process, () => {});
  queues.push("a", "1");
  await new Promise((resolve) => setTimeout(resolve, 0));
  assert.equal(await queues.discard("a", AbortSignal.timeout(10)), false);
  assert.deepEqual([...queues.keys()], ["a"]);
  await gate.releaseUntil(queues.drain());
});

Deno.test("a key pushed again by whoever waited for room keeps its new worker known: discard waits for it", async () => {
  const gate = gated();
  const queues = new ObjectQueues<string>(gate.process, () => {}, { backlog: 1 });
  queues.push("a", "1");
  const again = queues.room()!.then(() => queues.push("a", "2"));
  await new Promise((resolve) => setTimeout(resolve, 0));
  gate.releases.splice(0).forEach((release) => release());
  await again;
  await new Promise((resolve) => setTimeout(resolve, 0));
  assert.deepEqual(gate.log, ["a:1", "a:2"]);
  // The first worker's end must not forget the second one, started meanwhile for the same key.
  assert.equal(await gate.releaseUntil(queues.discard("a")), true);
  assert.equal(queues.depth, 0);
  assert.deepEqual(await queues.drain(), new Map());
});
