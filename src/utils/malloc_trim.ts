/**
 * Giving the C heap's free memory back to the system: glibc keeps what the runtime's own allocations
 * (TLS and HTTP buffers, response bodies) freed in its arenas, and returns it only when asked
 * (`malloc_trim`). Measured after a burst of 1,280 fetches of 200 KB bodies and a full collection:
 * 163 MiB resident, 80 MiB after the trim (10 ms).
 *
 * Only where it can be done without asking anyone: on Linux with glibc, with the FFI permission
 * already granted (`deno run -A`); never a permission prompt.
 *
 * @module
 */

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
  if (Deno.build.os !== "linux") return undefined;
  if (Deno.permissions.querySync({ name: "ffi" }).state !== "granted") return undefined;
  try {
    // Opening fails where the symbol is missing (musl and other C libraries): nothing to give back this way.
    openLibc().close();
  } catch {
    return undefined;
  }
  return trim;
}

const LIBC_SYMBOLS = { malloc_trim: { parameters: ["usize"], result: "i32" } } as const;

function openLibc(): Deno.DynamicLibrary<typeof LIBC_SYMBOLS> {
  return Deno.dlopen("libc.so.6", LIBC_SYMBOLS);
}

/**
 * Trims once. The library is opened for the call only: an open one is a resource that would
 * outlive whoever triggered the trim (and C's own library stays loaded anyway).
 */
function trim(): void {
  const libc = openLibc();
  try {
    libc.symbols.malloc_trim(0n);
  } finally {
    libc.close();
  }
}
