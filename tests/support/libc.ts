/** Where this machine's glibc is, for tests that narrow the FFI permission to it. */

import { LIBC_PATHS } from "../../src/utils/libc.ts";

/** The first of the known places of glibc (`LIBC_PATHS`) that this machine has; `undefined` if none. */
export function installedLibc(): string | undefined {
  return LIBC_PATHS.find((path) => {
    try {
      return Deno.statSync(path).isFile;
    } catch {
      return false;
    }
  });
}
