/**
 * glibc's C library through Deno's FFI, where that needs nobody's consent: on Linux, with the FFI
 * permission already granted (`deno run -A`, or narrowed to the C library: `--allow-ffi=` one of
 * {@linkcode LIBC_PATHS}); never a permission prompt. What the operator asks of it: to give memory
 * back to the system (`malloc_trim.ts`, `executable_pages.ts`).
 *
 * @module
 */

/**
 * Where glibc's C library is on the usual distributions (Debian's and Ubuntu's layout, as in Deno's
 * images, for x86-64 and ARM64; then Fedora's), for an FFI permission narrowed to it. Deno compares
 * the paths as written: `/lib/...` does not stand for `/usr/lib/...`.
 */
export const LIBC_PATHS: readonly string[] = [
  "/usr/lib/x86_64-linux-gnu/libc.so.6",
  "/usr/lib/aarch64-linux-gnu/libc.so.6",
  "/lib/x86_64-linux-gnu/libc.so.6",
  "/lib/aarch64-linux-gnu/libc.so.6",
  "/usr/lib64/libc.so.6",
  "/lib64/libc.so.6",
];

/** The functions of the C library that the operator calls. */
const LIBC_SYMBOLS = {
  malloc_trim: { parameters: ["usize"], result: "i32" },
  madvise: { parameters: ["pointer", "usize", "i32"], result: "i32" },
} as const;

/** The C library, opened. */
export type Libc = Deno.DynamicLibrary<typeof LIBC_SYMBOLS>;

/**
 * The C library to open, where it can be: Linux, the FFI permission granted (by name with the
 * whole permission, else a path the permission names), and glibc's symbols there (musl and other C
 * libraries lack `malloc_trim`); `undefined` otherwise.
 *
 * @example
 * ```ts
 * import { grantedLibc, withLibc } from "./libc.ts";
 * const library = grantedLibc();
 * if (library) withLibc(library, (libc) => libc.symbols.malloc_trim(0n));
 * ```
 */
export function grantedLibc(): string | undefined {
  if (Deno.build.os !== "linux") return undefined;
  const library = Deno.permissions.querySync({ name: "ffi" }).state === "granted"
    ? "libc.so.6"
    : LIBC_PATHS.find((path) => Deno.permissions.querySync({ name: "ffi", path }).state === "granted");
  if (library === undefined) return undefined;
  try {
    Deno.dlopen(library, LIBC_SYMBOLS).close();
  } catch {
    return undefined;
  }
  return library;
}

/**
 * Runs `use` with the C library open. It is opened for the call only: an open one is a resource
 * that would outlive whoever asked (and the C library itself stays loaded anyway).
 */
export function withLibc<T>(library: string, use: (libc: Libc) => T): T {
  const libc = Deno.dlopen(library, LIBC_SYMBOLS);
  try {
    return use(libc);
  } finally {
    libc.close();
  }
}
