/**
 * What bench/operator_path.ts reads of a Deno contestant besides its CPU, when asked for: `perf` samples of its
 * threads (`--perf`), V8's optimising compilations that its log traces (`--compilations`), and the promises it
 * has made (`--promises`). Callgrind's counts (`--instructions`) are bench/callgrind_counts.ts's.
 *
 * @module
 */

import { join } from "node:path";

/** `perf record` of a process's threads with their call stacks, until stopped (it writes its file then). */
export function samplePerf(pid: number, file: string): { stop(): Promise<void> } {
  const child = new Deno.Command("perf", {
    args: ["record", "-F", "2000", "-g", "-p", String(pid), "-o", file],
    stdout: "null",
    stderr: "piped",
  }).spawn();
  const messages = new Response(child.stderr).text();
  return {
    async stop() {
      child.kill("SIGINT");
      await child.status;
      // perf exits with a failing status when interrupted, even after writing its file:
      // its summary says whether it did.
      const summary = (await messages).trim();
      if (!summary.includes("Captured and wrote")) throw new Error(`perf record -p ${pid} failed: ${summary}`);
    },
  };
}

/**
 * The optimising compilations that V8's `--trace-opt` reported in a log: how many, and the milliseconds they took
 * (the three phases it reports: preparing, compiling and finishing).
 */
export function compilationsIn(text: string): { count: number; milliseconds: number } {
  let count = 0;
  let milliseconds = 0;
  for (const match of text.matchAll(/\[completed compiling [^\]\n]*? - took ([\d.]+), ([\d.]+), ([\d.]+) ms\]/g)) {
    count++;
    milliseconds += Number(match[1]) + Number(match[2]) + Number(match[3]);
  }
  return { count, milliseconds };
}

/** The promises a probed contestant has made so far: it writes the count into `folder` on SIGUSR2. */
export async function promisesOf(pid: number, folder: string): Promise<number> {
  const file = join(folder, String(pid));
  await Deno.remove(file).catch(() => {});
  Deno.kill(pid, "SIGUSR2");
  for (let waited = 0; waited < 5000; waited += 20) {
    const text = await Deno.readTextFile(file).catch(() => "");
    if (text) return Number(text);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  throw new Error(`Process ${pid} wrote no count of its promises within 5 s of SIGUSR2 (is the probe preloaded?).`);
}
