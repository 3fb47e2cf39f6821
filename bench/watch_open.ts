/**
 * When a benchmark's operator has listed its objects: the API server's gauge of open watches of
 * kopfexamples grows by one (the operators list first, then watch from the list's version).
 *
 * @module
 */

import type { ApiClient } from "../src/api/client.ts";
import { apiserverMetrics } from "./apiserver_metrics.ts";
import type { Started } from "./compare_contestants.ts";

/** The watches of kopfexamples open now. */
export async function openWatches(client: ApiClient): Promise<number> {
  return (await apiserverMetrics(client)).watches.get("kopfexamples") ?? 0;
}

/**
 * Waits until more watches of kopfexamples are open than `before` (counted before the spawn);
 * returns when (`performance.now()`, to 50 ms in the first 5 s after the spawn, to 500 ms later).
 * Fails at once if the process exits, or after `seconds`.
 */
export async function untilWatching(
  client: ApiClient,
  before: number,
  process: Started,
  seconds = 120,
): Promise<number> {
  const deadline = performance.now() + seconds * 1000;
  for (;;) {
    if (await process.guard(openWatches(client), "its watch of kopfexamples") > before) return performance.now();
    if (performance.now() > deadline) {
      throw new Error(`No watch of kopfexamples after ${seconds} s; see ${process.log}.`);
    }
    // Every 50 ms at first; then every 500 ms, since each look makes the API server render its metrics.
    const pause = performance.now() - process.started < 5000 ? 50 : 500;
    await process.guard(new Promise((resolve) => setTimeout(resolve, pause)), "its watch of kopfexamples");
  }
}
