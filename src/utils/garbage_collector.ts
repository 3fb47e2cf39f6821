/**
 * V8's full garbage collection as a function, obtained at run time: V8 returns the pages a burst
 * made it grow to only after a full collection, which an idle process may not run for hours. Where
 * it can, the collection also trims the C heap (`malloc_trim.ts`): the runtime's own buffers freed
 * with their JavaScript owners stay in glibc's arenas otherwise; and gives back the pages of the
 * runtime's executable that the start touched and an idle process does not run (`executable_pages.ts`).
 *
 * `gc` exists only with `--expose-gc`. When the user did not pass `--v8-flags=--expose-gc`, the
 * flag is set now and `gc` taken from a new context (contexts made after the flag get it); the main
 * context stays as it was. `node:v8` and `node:vm` load only here, on first use, so that an
 * operator that never collects does not carry them.
 *
 * @module
 */

import { executablePager } from "./executable_pages.ts";
import { mallocTrimmer } from "./malloc_trim.ts";

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

/** V8's `gc()` with the options its extension takes. */
type V8Gc = (
  options?: { type?: "major" | "minor"; execution?: "sync" | "async"; flavor?: "regular" | "last-resort" },
) => void;

async function exposeGc(): Promise<GarbageCollector> {
  let gc: unknown = (globalThis as { gc?: unknown }).gc;
  if (typeof gc !== "function") {
    const { default: v8 } = await import("node:v8");
    const { default: vm } = await import("node:vm");
    v8.setFlagsFromString("--expose-gc");
    gc = vm.runInNewContext("typeof gc === 'function' ? gc : undefined");
  }
  if (typeof gc !== "function") {
    throw new Error("V8 offers no gc() even with --expose-gc set at run time (node:v8 and node:vm are there)");
  }
  const trim = mallocTrimmer();
  const pageOut = executablePager();
  // A regular full collection frees the garbage but keeps the pages (measured: 266 MiB resident before and
  // after); the last-resort flavour (V8's reaction to a low-memory notification) also gives them back (46 MiB).
  return () => {
    (gc as V8Gc)({ type: "major", execution: "sync", flavor: "last-resort" });
    trim?.();
    pageOut?.();
  };
}
