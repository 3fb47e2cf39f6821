import assert from "node:assert/strict";
import { Arrival, Doorbell } from "./arrivals.ts";

Deno.test("an arrival holds its promise's value until taken, and rings when it settles", async () => {
  const doorbell = new Doorbell();
  const { promise, resolve } = Promise.withResolvers<number>();
  const arrival = new Arrival(promise, doorbell);
  assert.equal(arrival.arrived, false);
  assert.throws(() => arrival.take(), /before its promise settled/);
  const rung = doorbell.wait();
  resolve(7);
  await rung;
  assert.equal(arrival.arrived, true);
  assert.equal(arrival.take(), 7);
});

Deno.test("an arrival rethrows its promise's rejection when taken, never as an unhandled one", async () => {
  const doorbell = new Doorbell();
  const arrival = new Arrival(Promise.reject(new Error("the listing failed")), doorbell);
  await doorbell.wait();
  assert.throws(() => arrival.take(), /the listing failed/);
});

Deno.test("a loop waits for whichever arrives first, however long the other stays pending", async () => {
  const doorbell = new Doorbell();
  const quiet = Promise.withResolvers<string>();
  const slow = new Arrival(quiet.promise, doorbell);
  const taken: number[] = [];
  for (let index = 0; index < 1000; index++) {
    const step = new Arrival(Promise.resolve(index), doorbell);
    while (!slow.arrived && !step.arrived) await doorbell.wait();
    taken.push(step.take());
  }
  assert.deepEqual(taken, Array.from({ length: 1000 }, (_, index) => index));
  assert.equal(slow.arrived, false);
  quiet.resolve("late");
  await doorbell.wait();
  assert.equal(slow.take(), "late");
});

Deno.test("a ring with nobody waiting is not kept: the next wait waits for the next ring", async () => {
  const doorbell = new Doorbell();
  doorbell.ring();
  let woken = false;
  const waited = doorbell.wait().then(() => woken = true);
  await Promise.resolve();
  assert.equal(woken, false);
  doorbell.ring();
  await waited;
  assert.equal(woken, true);
});
