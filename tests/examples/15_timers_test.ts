/**
 * examples/15-timers: the plain timer ticks from the start; the idle timer only once the object
 * has been left alone, so its first tick comes after some of the plain one's; both keep ticking.
 */

import assert from "node:assert/strict";
import { freshNamespace, testCluster } from "../support/cluster.ts";
import { eventually } from "../support/eventually.ts";
import { applyObjYaml, linesWith, runExample } from "../support/examples.ts";

Deno.test("examples/15-timers: the timer ticks repeatedly; the idle timer starts only after the object rests", async () => {
  const { client } = await testCluster();
  const namespace = await freshNamespace(client, "ex15");
  await using operator = await runExample("15-timers", namespace);
  await applyObjYaml(namespace);
  await eventually(
    "two ticks of the idle timer",
    () => linesWith(operator, "Ping from an idle timer").length >= 2 || undefined,
  );

  const plain = operator.lines.findIndex((line) => line.includes('Ping from a timer: field="value"'));
  const idle = operator.lines.findIndex((line) => line.includes('Ping from an idle timer: field="value"'));
  assert.ok(plain >= 0 && idle > plain, operator.output);
  // Idle for 5 s at 2 s intervals: the plain timer has ticked more than once before the idle one starts.
  const before = operator.lines.slice(0, idle).filter((line) => line.includes("Ping from a timer")).length;
  assert.ok(before >= 2, operator.output);
  assert.equal((await operator.stop()).code, 0, operator.output);
});
