import assert from "node:assert/strict";
import { Gate } from "./gate.ts";

Deno.test("a closed gate holds its waiters until it opens; an open one lets them pass at once", async () => {
  const gate = new Gate(false);
  const passed: string[] = [];
  const first = gate.whenOpen().then(() => passed.push("first"));
  await Promise.resolve();
  assert.equal(passed.length, 0);
  gate.set(true);
  await first;
  await gate.whenOpen().then(() => passed.push("second"));
  assert.deepEqual(passed, ["first", "second"]);
});

Deno.test("a waiter whose signal aborts is rejected with the reason and not released later", async () => {
  const gate = new Gate(false);
  const controller = new AbortController();
  const waiting = gate.whenOpen(controller.signal);
  controller.abort(new Error("stopping"));
  await assert.rejects(waiting, /stopping/);
  await assert.rejects(gate.whenOpen(controller.signal), /stopping/);
  gate.set(true);
});

Deno.test("listeners hear every change, not repeated states, until unsubscribed", () => {
  const gate = new Gate(true);
  const heard: boolean[] = [];
  const unsubscribe = gate.subscribe((open) => heard.push(open));
  gate.set(true);
  gate.set(false);
  gate.set(false);
  gate.set(true);
  unsubscribe();
  gate.set(false);
  assert.deepEqual(heard, [false, true]);
  assert.equal(gate.isOpen, false);
});
