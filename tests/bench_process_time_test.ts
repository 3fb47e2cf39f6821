/** bench/process_stats.ts's split of a process's CPU time (bench/operator_path.ts's "in the kernel" row). */

import assert from "node:assert/strict";
import { cpuSeconds, systemSeconds } from "../bench/process_stats.ts";

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
