/**
 * What a benchmark reads about a process it started (Linux `/proc`): resident memory and CPU time;
 * and how it prints them.
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

/** The CPU time (user and system) a process has used so far, in seconds (100 ticks a second). */
export async function cpuSeconds(pid: number): Promise<number> {
  // The fields after the command name, which is in parentheses and may contain spaces.
  const fields = (await Deno.readTextFile(`/proc/${pid}/stat`)).split(") ")[1].split(" ");
  return (Number(fields[11]) + Number(fields[12])) / 100;
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
