/** bench/process_stats.ts's reading of a process's CPU time: its kernel part, and the threads' counts to the nanosecond. */

import assert from "node:assert/strict";
import { cpuBetween, cpuSeconds, readCpu, systemSeconds } from "../bench/process_stats.ts";

Deno.test("the kernel's part of a process's CPU time grows with its system calls and stays within the whole", async () => {
  const before = { cpu: await cpuSeconds(Deno.pid), system: await systemSeconds(Deno.pid) };
  const deadline = Date.now() + 20_000;
  // System calls until the kernel has spent 50 ms on them (the counts come in ticks of 10 ms).
  while (await systemSeconds(Deno.pid) - before.system < 0.05 && Date.now() < deadline) {
    for (let i = 0; i < 2000; i++) Deno.statSync("/");
  }
  const after = { cpu: await cpuSeconds(Deno.pid), system: await systemSeconds(Deno.pid) };
  assert.ok(after.system - before.system >= 0.05, `system time grew by ${after.system - before.system} s only`);
  assert.ok(after.system <= after.cpu, `system ${after.system} s above the whole ${after.cpu} s`);
  assert.ok(after.cpu - before.cpu >= after.system - before.system);
});

Deno.test("the threads' CPU between two readings is the scheduler's count, to well within a tick", async () => {
  const before = await readCpu(Deno.pid);
  // 50 ms of busy JavaScript: five ticks, read to the nanosecond (on the thread that runs the tests, not always the
  // process's main thread under `deno test`).
  const until = performance.now() + 50;
  while (performance.now() < until) Math.sqrt(Math.random());
  const spent = cpuBetween(before, await readCpu(Deno.pid));
  assert.ok(spent.precise, "no thread of the test's process ended, yet the ticks exceed the threads' sum");
  assert.ok(spent.seconds >= 0.045, `the threads spent ${spent.seconds} s`);
  assert.ok(Math.abs([...spent.byName.values()].reduce((sum, seconds) => sum + seconds, 0) - spent.seconds) < 1e-9);
  // Not a multiple of a tick, as `stat`'s counts are.
  assert.notEqual(Math.round(spent.seconds * 1e6) % 10_000, 0);
});

Deno.test("a thread that ended between two readings leaves the total to the ticks", () => {
  const thread = (name: string, seconds: number) => ({ name, seconds });
  const before = {
    threads: new Map([["1", thread("main", 1)], ["2", thread("V8 Worker", 0.5)]]),
    ticks: 1.5,
  };
  // The worker ended after 0.3 s more; the main thread used 0.1 s; a new thread 0.05 s.
  const after = { threads: new Map([["1", thread("main", 1.1)], ["3", thread("tokio-rt", 0.05)]]), ticks: 1.95 };
  const spent = cpuBetween(before, after);
  assert.equal(spent.precise, false);
  assert.ok(Math.abs(spent.seconds - 0.45) < 1e-9);
  assert.ok(Math.abs(spent.byName.get("main")! - 0.1) < 1e-9);
  assert.equal(spent.byName.get("tokio-rt"), 0.05);
  // Without the ended thread's share, the threads' sum stands.
  const whole = cpuBetween(before, { threads: after.threads, ticks: 1.66 });
  assert.equal(whole.precise, true);
  assert.ok(Math.abs(whole.seconds - 0.15) < 1e-9);
});
