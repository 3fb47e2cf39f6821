import assert from "node:assert/strict";
import { Slots } from "./slots.ts";

/** Lets the callbacks of settled promises run: a turn of the event loop, no stretch of time. */
const nextTurn = () => new Promise((resolve) => setTimeout(resolve, 0));

Deno.test("at most the limit of holders at once; the others get slots in the order they came", async () => {
  const slots = new Slots(2);
  const order: number[] = [];
  const releases = await Promise.all([slots.take(), slots.take()]);
  const waiting = [3, 4, 5].map((n) => slots.take().then((release) => (order.push(n), release)));
  await nextTurn();
  assert.equal(slots.taken, 2);
  assert.equal(slots.waiting, 3);
  assert.deepEqual(order, []);
  releases[0]();
  releases[0](); // a second call gives nothing back again
  await nextTurn();
  assert.deepEqual(order, [3]);
  assert.equal(slots.taken, 2);
  releases[1]();
  await nextTurn();
  assert.deepEqual(order, [3, 4]);
  for (const release of await Promise.all(waiting.slice(0, 2))) release();
  await nextTurn();
  assert.deepEqual(order, [3, 4, 5]);
  (await waiting[2])();
  assert.equal(slots.taken, 0);
  assert.equal(slots.waiting, 0);
});

Deno.test("a waiter whose signal aborts is rejected with the reason, holds nothing, and is skipped", async () => {
  const slots = new Slots(1);
  const held = await slots.take();
  const controller = new AbortController();
  const cancelled = slots.take(controller.signal);
  const next = slots.take();
  controller.abort(new Error("stopping"));
  await assert.rejects(cancelled, /stopping/);
  await assert.rejects(slots.take(controller.signal), /stopping/);
  assert.equal(slots.waiting, 1);
  held();
  (await next)();
  assert.equal(slots.taken, 0);
});

Deno.test("no limit lets everyone in; raising the limit lets waiters in at once", async () => {
  const unlimited = new Slots(null);
  const all = await Promise.all(Array.from({ length: 100 }, () => unlimited.take()));
  assert.equal(unlimited.taken, 100);
  for (const release of all) release();

  const slots = new Slots(1);
  const first = await slots.take();
  const second = slots.take();
  await nextTurn();
  assert.equal(slots.waiting, 1);
  slots.limit = 2;
  (await second)();
  first();
  assert.equal(slots.taken, 0);
});

Deno.test("a wrong limit is refused with the name of where it came from", () => {
  assert.throws(
    () => new Slots(0, "settings.networking.concurrentRequests"),
    /settings\.networking\.concurrentRequests.*0/,
  );
  const slots = new Slots(1, "settings.networking.concurrentRequests");
  assert.throws(() => (slots.limit = 1.5), /whole number of at least 1, or null/);
});

Deno.test("whenWaitingAtMost resolves once the queue of waiters is short enough", async () => {
  const slots = new Slots(1);
  const first = await slots.take();
  const queued = [slots.take(), slots.take(), slots.take()];
  assert.equal(slots.whenWaitingAtMost(3), undefined);
  const shorter = slots.whenWaitingAtMost(1);
  assert.ok(shorter);
  let resolved = false;
  void shorter.then(() => resolved = true);
  first();
  await Promise.resolve();
  assert.equal(resolved, false, "two still wait");
  (await queued[0])();
  await shorter;
  assert.equal(slots.waiting, 1);
  (await queued[1])();
  (await queued[2])();
});

Deno.test("tryTake takes a free slot at once and gives none while all are taken", async () => {
  const slots = new Slots(1);
  const release = slots.tryTake();
  assert.ok(release);
  assert.equal(slots.tryTake(), undefined);
  const waiter = slots.take();
  release();
  assert.equal(slots.tryTake(), undefined, "the waiter got the slot given back, not a late tryTake");
  (await waiter)();
  assert.equal(slots.taken, 0);
});

Deno.test("those who ask to go ahead get slots before the others, in the order they came; a cancelled one is skipped", async () => {
  const slots = new Slots(1);
  const order: string[] = [];
  const held = await slots.take();
  const controller = new AbortController();
  const taking = (name: string, ahead: boolean, signal?: AbortSignal) =>
    slots.take(signal, ahead).then((release) => {
      order.push(name);
      release();
    });
  const waiting = [
    taking("behind-1", false),
    taking("ahead-1", true),
    taking("behind-2", false),
    taking("ahead-2", true),
  ];
  const cancelled = taking("ahead-cancelled", true, controller.signal);
  waiting.push(taking("ahead-3", true));
  assert.equal(slots.waiting, 6);
  controller.abort(new Error("stopping"));
  await assert.rejects(cancelled, /stopping/);
  assert.equal(slots.waiting, 5);
  held();
  await Promise.all(waiting);
  await nextTurn();
  assert.deepEqual(order, ["ahead-1", "ahead-2", "ahead-3", "behind-1", "behind-2"]);
  assert.equal(slots.taken, 0);
  assert.equal(slots.waiting, 0);
  // Drained, each line starts afresh: a new waiter is admitted as before.
  const again = await slots.take(undefined, true);
  assert.equal(slots.taken, 1);
  again();
});

Deno.test("after the last waiter cancels, the next ones still get slots in the order they came", async () => {
  const slots = new Slots(1);
  const held = await slots.take();
  const controller = new AbortController();
  const cancelled = slots.take(controller.signal);
  controller.abort(new Error("stopping"));
  await assert.rejects(cancelled, /stopping/);
  assert.equal(slots.waiting, 0);
  const order: string[] = [];
  const first = slots.take().then((release) => (order.push("first"), release));
  const second = slots.take().then((release) => (order.push("second"), release));
  assert.equal(slots.waiting, 2);
  held();
  (await first)();
  (await second)();
  assert.deepEqual(order, ["first", "second"]);
  assert.equal(slots.taken, 0);
});
