/**
 * Giving the C heap's free memory back to the system: glibc keeps what the runtime's own allocations
 * (TLS and HTTP buffers, response bodies) freed in its arenas, and returns it only when asked
 * (`malloc_trim`). Measured after a burst of 1,280 fetches of 200 KB bodies and a full collection:
 * 163 MiB resident, 80 MiB after the trim (10 ms). Only where the C library can be called without
 * asking anyone (`libc.ts`).
 *
 * @module
 */

import { grantedLibc, withLibc } from "./libc.ts";

/**
 * A function that trims the C heap, or `undefined` where that is not possible here (another OS, no
 * glibc, no FFI permission).
 *
 * @example
 * ```ts
 * import { mallocTrimmer } from "./malloc_trim.ts";
 * mallocTrimmer()?.();
 * ```
 */
export function mallocTrimmer(): (() => void) | undefined {
  const library = grantedLibc();
  if (library === undefined) return undefined;
  return () => withLibc(library, (libc) => libc.symbols.malloc_trim(0n));
}
