/**
 * CPU-bound work of a known duration for the handlers of bench/sharding.ts: a hashing loop (FNV-1a
 * over a counter) that nothing can skip, and its calibration to a number of milliseconds on this
 * machine — done once by the bench, so that every replica does the same work per object.
 *
 * @module
 */

/** Runs `iterations` rounds of the loop; returns the hash so that the work cannot be optimised away. */
export function busyWork(iterations: number): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < iterations; i++) {
    hash = Math.imul(hash ^ (i & 0xff), 0x01000193);
    hash = Math.imul(hash ^ (i >>> 8), 0x01000193);
  }
  return hash >>> 0;
}

/**
 * The iterations of {@linkcode busyWork} that take `milliseconds` here and now (the fastest of a
 * few timed runs of about 200 ms each, after a warm-up: the other processes on the machine only
 * ever make a run slower).
 */
export function calibrate(milliseconds: number): number {
  busyWork(1_000_000);
  let iterations = 100_000;
  let elapsed = 0;
  while (elapsed < 200) {
    iterations *= 2;
    const started = performance.now();
    busyWork(iterations);
    elapsed = performance.now() - started;
  }
  let fastest = elapsed;
  for (let run = 0; run < 4; run++) {
    const started = performance.now();
    busyWork(iterations);
    fastest = Math.min(fastest, performance.now() - started);
  }
  return Math.round(iterations / fastest * milliseconds);
}
