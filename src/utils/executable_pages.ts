/**
 * Giving back the resident pages of the process's own executable that an idle process does not
 * use: the runtime's machine code and read-only data (V8's start-up snapshot, ICU's tables). Deno's
 * binary is large, and an operator run from source touches much of it on its way up (the TypeScript
 * transpiler, the module graph, npm's resolution) and little of it afterwards: idle on a
 * LocalCluster, `kopf run` held 26 MiB of the binary's code and 13 MiB of its read-only data, a script
 * that only waits 11 and 12. They are clean pages of a file: asked to (`madvise`'s `MADV_PAGEOUT`,
 * Linux 5.4 and later), the kernel drops them, and reads back any that run again, as it would under
 * memory pressure. Pages that another process maps too (another process of the same binary) stay.
 *
 * Only where it can be done without asking anyone: the C library callable (`libc.ts`) and
 * `/proc/self/maps` readable, which Deno allows with all permissions only (`deno run -A`); never a
 * permission prompt.
 *
 * @module
 */

import { grantedLibc, withLibc } from "./libc.ts";

/** Where the process's mappings are listed. */
const MAPS = "/proc/self/maps";

/** `madvise`'s advice to reclaim the pages now (Linux's `MADV_PAGEOUT`). */
const MADV_PAGEOUT = 21;

/**
 * A function that gives back the executable's resident pages, or `undefined` where that is not
 * possible here (another OS, no glibc, not all permissions).
 *
 * @example
 * ```ts
 * import { executablePager } from "./executable_pages.ts";
 * executablePager()?.();
 * ```
 */
export function executablePager(): (() => void) | undefined {
  if (Deno.permissions.querySync({ name: "read", path: MAPS }).state !== "granted") return undefined;
  const library = grantedLibc();
  if (library === undefined) return undefined;
  try {
    // Deno reads /proc/self/maps only with all permissions (`-A`), whatever the query above says of reading.
    Deno.readTextFileSync(MAPS);
  } catch {
    return undefined;
  }
  const executable = Deno.execPath();
  return () => {
    const ranges = executableRanges(Deno.readTextFileSync(MAPS), executable);
    withLibc(library, (libc) => {
      // A kernel without the advice refuses it (EINVAL): the pages stay, nothing else changes.
      for (const [start, end] of ranges) {
        libc.symbols.madvise(Deno.UnsafePointer.create(start), end - start, MADV_PAGEOUT);
      }
    });
  };
}

/**
 * The address ranges (start, end) of an executable's read-only mappings -- its code and its
 * read-only data, not its writable data -- in the text of `/proc/PID/maps`.
 *
 * @example
 * ```ts
 * import { executableRanges } from "./executable_pages.ts";
 * const maps = "55d0c0000000-55d0c2000000 r-xp 00400000 08:01 42 /usr/bin/deno\n";
 * console.assert(executableRanges(maps, "/usr/bin/deno")[0][1] === 0x55d0c2000000n);
 * ```
 */
export function executableRanges(maps: string, executable: string): [bigint, bigint][] {
  const ranges: [bigint, bigint][] = [];
  for (const line of maps.split("\n")) {
    // Address range, permissions, offset, device, inode, then the path (which may hold spaces).
    const fields = line.trim().split(/\s+/);
    if (fields.length < 6 || fields.slice(5).join(" ") !== executable) continue;
    if (fields[1] !== "r-xp" && fields[1] !== "r--p") continue;
    const [start, end] = fields[0].split("-").map((hex) => BigInt(`0x${hex}`));
    ranges.push([start, end]);
  }
  return ranges;
}
