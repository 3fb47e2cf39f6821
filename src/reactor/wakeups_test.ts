import assert from "node:assert/strict";
import { Wakeups } from "./wakeups.ts";

/** Resolves after every timer already due (those of 0 seconds set before it fire first, in order). */
function afterDueTimers(): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, 0));
}

Deno.test("a wake-up is due once, with its item; a new one for the same key replaces the pending one", async () => {
  const woken: string[] = [];
  const wakeups = new Wakeups<string>((key, item) => woken.push(`${key}:${item}`));
  wakeups.schedule("a", "old", 0);
  wakeups.schedule("a", "new", 0);
  wakeups.schedule("b", "only", 0);
  assert.equal(wakeups.size, 2);
  await afterDueTimers();
  assert.deepEqual(woken, ["a:new", "b:only"]);
  assert.equal(wakeups.size, 0, "a wake-up that is due is no longer pending");
});

Deno.test("cancelled and cleared wake-ups never come", async () => {
  const woken: string[] = [];
  const wakeups = new Wakeups<string>((key) => woken.push(key));
  wakeups.schedule("a", "x", 0);
  wakeups.schedule("b", "x", 0);
  wakeups.schedule("c", "x", 0);
  wakeups.cancel("a");
  wakeups.cancel("unknown");
  assert.equal(wakeups.size, 2);
  await afterDueTimers();
  assert.deepEqual(woken, ["b", "c"]);
  wakeups.schedule("d", "x", 0);
  wakeups.schedule("e", "x", 60);
  wakeups.clear();
  assert.equal(wakeups.size, 0);
  await afterDueTimers();
  assert.deepEqual(woken, ["b", "c"]);
});
