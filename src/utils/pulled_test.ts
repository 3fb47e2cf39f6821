import assert from "node:assert/strict";
import { pulled, type Sink } from "./pulled.ts";

Deno.test("the items come in order, one at a time: the producer waits at its sink until the next is asked for", async () => {
  const log: string[] = [];
  const produce = async (sink: Sink<number>) => {
    for (const n of [1, 2, 3]) {
      log.push(`offer ${n}`);
      await sink(n);
    }
    log.push("done");
  };
  for await (const n of pulled(produce)) {
    log.push(`take ${n}`);
    await Promise.resolve();
  }
  assert.deepEqual(log, ["offer 1", "take 1", "offer 2", "take 2", "offer 3", "take 3", "done"]);
});

Deno.test("a sink that returns nothing is no promise to wait for, and items pass all the same", async () => {
  const produce = async (sink: Sink<string>) => {
    const taken = sink("a");
    if (taken) await taken;
    await sink("b");
  };
  const items: string[] = [];
  for await (const item of pulled(produce)) items.push(item);
  assert.deepEqual(items, ["a", "b"]);
});

Deno.test("the producer's failure is thrown to the reader after the items before it", async () => {
  const items: number[] = [];
  const produce = async (sink: Sink<number>) => {
    await sink(1);
    throw new Error("the producer broke");
  };
  await assert.rejects(async () => {
    for await (const n of pulled(produce)) items.push(n);
  }, /the producer broke/);
  assert.deepEqual(items, [1]);
});

Deno.test("leaving the loop aborts the producer's signal, releases its sink, and waits for its end", async () => {
  let ended = false;
  let aborted = false;
  const produce = async (sink: Sink<number>, signal: AbortSignal) => {
    try {
      for (let n = 0; !signal.aborted; n++) await sink(n);
      aborted = signal.aborted;
    } finally {
      ended = true;
    }
  };
  const items: number[] = [];
  for await (const n of pulled(produce)) {
    items.push(n);
    if (n === 2) break;
  }
  assert.deepEqual(items, [0, 1, 2]);
  assert.deepEqual([aborted, ended], [true, true]);
});

Deno.test("the caller's signal reaches the producer, and the iteration ends with it", async () => {
  const controller = new AbortController();
  let sawAbort = false;
  const produce = async (sink: Sink<number>, signal: AbortSignal) => {
    await sink(1);
    if (!signal.aborted) {
      await new Promise<void>((resolve) => signal.addEventListener("abort", () => resolve(), { once: true }));
    }
    sawAbort = signal.aborted;
  };
  const items: number[] = [];
  for await (const n of pulled(produce, controller.signal)) {
    items.push(n);
    controller.abort();
  }
  assert.deepEqual([items, sawAbort], [[1], true]);
});
