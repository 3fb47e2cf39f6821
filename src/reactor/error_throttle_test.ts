import assert from "node:assert/strict";
import { configureLogging } from "../logging/configure.ts";
import type { KubernetesObject } from "../model/body.ts";
import { ErrorThrottle } from "./error_throttle.ts";
import { newMemory } from "./processing.ts";

const object: KubernetesObject = { apiVersion: "v1", kind: "ConfigMap", metadata: { namespace: "ns", name: "one" } };

/** A throttle with a clock the test moves, and the log lines it writes. */
async function throttled(
  delays: number[],
): Promise<{ throttle: ErrorThrottle; clock: { now: number }; lines: string[] }> {
  const lines: string[] = [];
  await configureLogging({ level: "debug", format: "plain", write: (line) => lines.push(line) });
  const clock = { now: 1_000_000 };
  return { throttle: new ErrorThrottle({ errorDelays: delays }, () => clock.now), clock, lines };
}

Deno.test("errors in a row rest for the next delay each, the last one repeating; the rest ends with the time", async () => {
  const { throttle, clock, lines } = await throttled([1, 2, 5]);
  const memory = newMemory({}, false);
  assert.equal(throttle.resting(memory), undefined);
  const delays = [1, 2, 3, 4].map(() => throttle.failed(memory, object, new Error("boom")));
  assert.deepEqual(delays, [1, 2, 5, 5]);
  assert.equal(throttle.resting(memory), 5);
  clock.now += 4_500;
  assert.equal(throttle.resting(memory), 0.5);
  clock.now += 500;
  assert.equal(throttle.resting(memory), undefined);
  assert.deepEqual(
    lines.filter((line) => line.includes("Throttling for")).map((line) => line.match(/for (\d+) s/)?.[1]),
    [
      "1",
      "2",
      "5",
      "5",
    ],
  );
  assert.ok(lines.some((line) => line.includes("boom")), "the error itself is in the log");
});

Deno.test("a success ends the errors in a row with one log line; the next error starts from the first delay", async () => {
  const { throttle, lines } = await throttled([1, 2, 5]);
  const memory = newMemory({}, false);
  throttle.succeeded(memory, object);
  assert.equal(lines.filter((line) => line.includes("Throttling is over")).length, 0, "no errors, no line");
  throttle.failed(memory, object, new Error("boom"));
  throttle.failed(memory, object, new Error("boom"));
  throttle.succeeded(memory, object);
  throttle.succeeded(memory, object);
  assert.equal(lines.filter((line) => line.includes("Throttling is over")).length, 1);
  assert.equal(throttle.resting(memory), undefined);
  assert.equal(throttle.failed(memory, object, new Error("boom")), 1);
});

Deno.test("without errorDelays an error is only logged; the delays are read at each error", async () => {
  const settings = { errorDelays: [] as number[] };
  const lines: string[] = [];
  await configureLogging({ level: "debug", format: "plain", write: (line) => lines.push(line) });
  const throttle = new ErrorThrottle(settings);
  const memory = newMemory({}, false);
  assert.equal(throttle.failed(memory, object, new Error("boom")), undefined);
  assert.equal(throttle.resting(memory), undefined);
  assert.ok(lines.some((line) => line.includes("An unexpected error while processing the object.")));
  settings.errorDelays = [7];
  assert.equal(throttle.failed(memory, object, new Error("boom")), 7);
  assert.ok(throttle.resting(memory)! > 0);
});

Deno.test("each memory rests on its own: an object forgotten and seen again starts afresh", async () => {
  const { throttle } = await throttled([1, 2]);
  const first = newMemory({}, false);
  const again = newMemory({}, false);
  throttle.failed(first, object, new Error("boom"));
  assert.equal(throttle.failed(first, object, new Error("boom")), 2);
  assert.equal(throttle.resting(again), undefined);
  assert.equal(throttle.failed(again, object, new Error("boom")), 1);
});
