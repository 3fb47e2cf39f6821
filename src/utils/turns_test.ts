import assert from "node:assert/strict";
import { Turns } from "./turns.ts";

/** Burns the CPU for some milliseconds without yielding, as a synchronous handler does. */
function burn(ms: number): void {
  const until = performance.now() + ms;
  while (performance.now() < until) { /* busy */ }
}

Deno.test("Turns lets a timer run between pieces of CPU-bound work", async () => {
  const turns = new Turns(5);
  const order: string[] = [];
  // As the object queues take turns: the work goes on at once, in the same task, when it may.
  const piece = async (name: string) => {
    const turn = turns.take();
    if (turn) await turn;
    burn(8);
    order.push(name);
  };
  setTimeout(() => order.push("timer"), 0);
  await Promise.all(["a", "b", "c", "d"].map(piece));
  const timer = order.indexOf("timer");
  assert.ok(timer > 0 && timer < order.length - 1, `the timer ran between the pieces: ${order.join(", ")}`);
  assert.deepEqual(order.filter((name) => name !== "timer"), ["a", "b", "c", "d"]);
});

Deno.test("Turns lets light work go on at once within the budget", async () => {
  const turns = new Turns(1000);
  await turns.take();
  assert.equal(turns.take(), undefined);
  assert.equal(turns.take(), undefined);
});

Deno.test("Turns keeps the order once work waits, even for work that asks within the budget", async () => {
  const turns = new Turns(5);
  await turns.take();
  burn(6);
  const order: number[] = [];
  const first = turns.take();
  assert.ok(first, "past the budget, work waits for a pass of the loop");
  const second = turns.take();
  assert.ok(second, "while work waits, newer work queues behind it");
  await Promise.all([first.then(() => order.push(1)), second.then(() => order.push(2))]);
  assert.deepEqual(order, [1, 2]);
});

Deno.test("Turns holds work back while its congestion lasts, then lets it in one piece per pass", async () => {
  const turns = new Turns(1000);
  let congested = Promise.withResolvers<void>();
  let easedYet = false;
  const congestion = { eased: () => easedYet ? undefined : congested.promise };
  const started: number[] = [];
  const pieces = [1, 2, 3].map(async (n) => {
    await turns.take(congestion);
    started.push(n);
  });
  await new Promise((resolve) => setTimeout(resolve, 20));
  assert.deepEqual(started, [], "nothing starts while congested");
  easedYet = true;
  congested.resolve();
  congested = Promise.withResolvers<void>();
  await Promise.all(pieces);
  assert.deepEqual(started, [1, 2, 3]);
});

Deno.test("Turns begins a new stretch after the loop has had a pass: work after idling goes on at once", async () => {
  const turns = new Turns(5);
  assert.equal(turns.take(), undefined, "the first work ever goes on at once");
  burn(6);
  const late = turns.take();
  assert.ok(late, "past the budget in the same stretch, work waits");
  await late;
  // Idle for longer than the budget: the loop has had its passes, nothing was busy meanwhile.
  await new Promise((resolve) => setTimeout(resolve, 20));
  assert.equal(turns.take(), undefined);
  assert.equal(turns.take(), undefined, "and so does more work within the budget of the new stretch");
});
