/**
 * V8's full garbage collection as a function, obtained at run time: V8 returns the pages a burst
 * made it grow to only after a full collection, which an idle process may not run for hours.
 *
 * `gc` exists only with `--expose-gc`. When the user did not pass `--v8-flags=--expose-gc`, the
 * flag is set now and `gc` taken from a new context (contexts made after the flag get it); the main
 * context stays as it was. `node:v8` and `node:vm` load only here, on first use, so that an
 * operator that never collects does not carry them.
 *
 * @module
 */

/** Runs one full, synchronous garbage collection of the whole process. */
export type GarbageCollector = () => void;

let obtained: Promise<GarbageCollector> | undefined;

/**
 * V8's `gc()`: the global one when the process has it (`--v8-flags=--expose-gc`), otherwise one
 * made available at run time. The first call loads what it needs; later calls share its outcome.
 *
 * @example
 * ```ts
 * import { obtainGarbageCollector } from "./garbage_collector.ts";
 * const gc = await obtainGarbageCollector();
 * gc();
 * ```
 *
 * @returns The collector; rejects with the reason when this runtime offers none.
 */
export function obtainGarbageCollector(): Promise<GarbageCollector> {
  obtained ??= exposeGc();
  return obtained;
}

async function exposeGc(): Promise<GarbageCollector> {
  const own = (globalThis as { gc?: unknown }).gc;
  if (typeof own === "function") return own as GarbageCollector;
  const { default: v8 } = await import("node:v8");
  const { default: vm } = await import("node:vm");
  v8.setFlagsFromString("--expose-gc");
  const gc: unknown = vm.runInNewContext("typeof gc === 'function' ? gc : undefined");
  if (typeof gc !== "function") {
    throw new Error("V8 offers no gc() even with --expose-gc set at run time (node:v8 and node:vm are there)");
  }
  return gc as GarbageCollector;
}
