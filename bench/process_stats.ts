/**
 * Measures of a running process for the benchmarks (Linux `/proc`).
 *
 * @module
 */

/** The resident memory of a process, in bytes. */
export async function rss(pid: number): Promise<number> {
  const status = await Deno.readTextFile(`/proc/${pid}/status`);
  const match = status.match(/^VmRSS:\s+(\d+) kB$/m);
  if (!match) throw new Error(`No VmRSS in /proc/${pid}/status.`);
  return Number(match[1]) * 1024;
}

/** Bytes as MiB with one decimal. */
export function mib(bytes: number): string {
  return (bytes / 1024 / 1024).toFixed(1);
}

/** The median of some numbers. */
export function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
}
