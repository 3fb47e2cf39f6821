/**
 * What a benchmark reads about a process it started (Linux `/proc`): resident memory and CPU time,
 * its connections to a port, the process of a command line, the machine's CPU time, the V8 heap
 * through a preloaded probe; and how it prints them.
 *
 * @module
 */

/** What the probe reports: `Deno.memoryUsage()`, and the bytes used per V8 heap space when asked for. */
export interface ProbedMemory extends Deno.MemoryUsage {
  /** By space name (`code_space`, `old_space`, …); empty unless `KOPF_BENCH_SPACES=1`. */
  readonly spaces: Record<string, number>;
}

/**
 * A process's memory as its preloaded probe (bench/fixtures/memory_probe.ts) reports it, asked for
 * with SIGUSR2 and read from the probe's file once written; fails after `seconds`.
 */
export async function probeMemory(pid: number, file: string, seconds = 120): Promise<ProbedMemory> {
  await Deno.remove(file).catch(() => {});
  Deno.kill(pid, "SIGUSR2");
  const deadline = performance.now() + seconds * 1000;
  for (;;) {
    try {
      return JSON.parse(await Deno.readTextFile(file)) as ProbedMemory;
    } catch (error) {
      if (performance.now() > deadline) {
        throw new Error(`The memory probe of process ${pid} wrote nothing to ${file} within ${seconds} s.`, {
          cause: error,
        });
      }
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
}

/** The resident memory of a process, in bytes. */
export function rss(pid: number): Promise<number> {
  return statusBytes(pid, "VmRSS");
}

/** The resident memory of a process that no file backs (its heaps, stacks and buffers), in bytes. */
export function anonymousRss(pid: number): Promise<number> {
  return statusBytes(pid, "RssAnon");
}

/** The most resident memory a process has had since it started (its high-water mark), in bytes. */
export function peakRss(pid: number): Promise<number> {
  return statusBytes(pid, "VmHWM");
}

async function statusBytes(pid: number, field: string): Promise<number> {
  const status = await Deno.readTextFile(`/proc/${pid}/status`);
  const match = status.match(new RegExp(`^${field}:\\s+(\\d+) kB$`, "m"));
  if (!match) throw new Error(`No ${field} in /proc/${pid}/status.`);
  return Number(match[1]) * 1024;
}

/**
 * The TCP connections a process has open to a port (its established sockets whose remote end is
 * that port, from `/proc/PID/fd` and `/proc/PID/net/tcp{,6}`): an HTTP/2 client's count is its
 * connections, an HTTP/1.1 client's its requests in flight.
 */
export async function connectionsTo(pid: number, port: number): Promise<number> {
  const sockets = new Set<string>();
  for await (const entry of Deno.readDir(`/proc/${pid}/fd`)) {
    const target = await Deno.readLink(`/proc/${pid}/fd/${entry.name}`).catch(() => "");
    const inode = target.match(/^socket:\[(\d+)\]$/)?.[1];
    if (inode) sockets.add(inode);
  }
  const remotePort = port.toString(16).toUpperCase().padStart(4, "0");
  let count = 0;
  for (const table of ["tcp", "tcp6"]) {
    const text = await Deno.readTextFile(`/proc/${pid}/net/${table}`).catch(() => "");
    for (const line of text.split("\n").slice(1)) {
      // sl, local address, remote address, state (01: established), …, inode (the tenth field).
      const fields = line.trim().split(/\s+/);
      if (fields.length < 10 || fields[3] !== "01") continue;
      if (fields[2].split(":")[1] === remotePort && sockets.has(fields[9])) count++;
    }
  }
  return count;
}

/** The CPU time (user and system) a process has used so far, in seconds (100 ticks a second). */
export function cpuSeconds(pid: number): Promise<number> {
  return statCpu(`/proc/${pid}/stat`);
}

/** The part of {@linkcode cpuSeconds} spent in the kernel on the process's behalf (its system time). */
export function systemSeconds(pid: number): Promise<number> {
  return statCpu(`/proc/${pid}/stat`, "system");
}

/**
 * The CPU time (s) of a process's main thread, and of its other threads (V8's helpers, the
 * runtime's) together, from CPU times by thread name ({@linkcode cpuBetween}).
 */
export function mainAndOthers(byName: Map<string, number>): { main: number; others: number } {
  let others = 0;
  for (const [name, seconds] of byName) if (name !== "main") others += seconds;
  return { main: byName.get("main") ?? 0, others };
}

/** Each living thread of a process by its id: its name (`main` for the main thread) and the CPU time it has used (s). */
export type ThreadTimes = Map<string, { name: string; seconds: number }>;

/**
 * Each thread's CPU time so far, to the nanosecond: the scheduler's own count
 * (`/proc/PID/task/TID/schedstat`), where `stat`'s user and system times come in ticks of 10 ms
 * (a fresh process's 500 objects take ~20 of them: a tick is ~5% of a reading). Read while the
 * process waits, as between a benchmark's rounds: a running thread's count lags by up to a tick.
 */
async function threadTimes(pid: number): Promise<ThreadTimes> {
  const times: ThreadTimes = new Map();
  for await (const entry of Deno.readDir(`/proc/${pid}/task`)) {
    const folder = `/proc/${pid}/task/${entry.name}`;
    try {
      const nanoseconds = Number((await Deno.readTextFile(`${folder}/schedstat`)).split(" ")[0]);
      const name = entry.name === String(pid) ? "main" : (await Deno.readTextFile(`${folder}/comm`)).trim();
      times.set(entry.name, { name, seconds: nanoseconds / 1e9 });
    } catch {
      // Ended meanwhile.
    }
  }
  return times;
}

/** One reading of a process's CPU: its threads' scheduler counts, and its ticks (which the ended threads' keep). */
export interface CpuReading {
  readonly threads: ThreadTimes;
  /** {@linkcode cpuSeconds}: in ticks of 10 ms, the process's threads that ended included. */
  readonly ticks: number;
}

/** Reads a process's CPU for {@linkcode cpuBetween}: while it waits, as between a benchmark's steps. */
export async function readCpu(pid: number): Promise<CpuReading> {
  return { threads: await threadTimes(pid), ticks: await cpuSeconds(pid) };
}

/**
 * The CPU time (s) a process used between two readings, in all and by thread name: each thread of
 * the later reading less what it had in the earlier (one begun between them counts whole). A thread
 * that ended between them takes its time along: where the ticks exceed the threads' sum by more
 * than two ticks and a tenth of their own total, the total is the ticks' (`precise` false; the
 * names' split then misses that thread's share).
 */
export function cpuBetween(
  before: CpuReading,
  after: CpuReading,
): { seconds: number; byName: Map<string, number>; precise: boolean } {
  const byName = new Map<string, number>();
  let seconds = 0;
  for (const [id, { name, seconds: used }] of after.threads) {
    const spent = used - (before.threads.get(id)?.seconds ?? 0);
    byName.set(name, (byName.get(name) ?? 0) + spent);
    seconds += spent;
  }
  const ticked = after.ticks - before.ticks;
  const precise = ticked - seconds <= 0.02 + 0.1 * ticked;
  return { seconds: precise ? seconds : ticked, byName, precise };
}

/**
 * How often a process's main thread has blocked and woken up so far (its voluntary context
 * switches): for an event loop, about one per wake-up.
 */
export async function mainThreadWakeups(pid: number): Promise<number> {
  const status = await Deno.readTextFile(`/proc/${pid}/task/${pid}/status`);
  const match = status.match(/^voluntary_ctxt_switches:\s+(\d+)/m);
  if (!match) throw new Error(`No voluntary_ctxt_switches in /proc/${pid}/task/${pid}/status.`);
  return Number(match[1]);
}

async function statCpu(file: string, part: "all" | "system" = "all"): Promise<number> {
  // The fields after the command name, which is in parentheses and may contain spaces: utime, then stime.
  const fields = (await Deno.readTextFile(file)).split(") ")[1].split(" ");
  return ((part === "all" ? Number(fields[11]) : 0) + Number(fields[12])) / 100;
}

/**
 * The process whose command line has `argument` as one of its arguments (e.g. kube-apiserver's
 * `--secure-port=<port>`: a LocalCluster does not tell its processes' ids); `undefined` if none.
 */
async function findPid(argument: string): Promise<number | undefined> {
  for await (const entry of Deno.readDir("/proc")) {
    if (!/^\d+$/.test(entry.name)) continue;
    try {
      const args = (await Deno.readTextFile(`/proc/${entry.name}/cmdline`)).split("\0");
      if (args.includes(argument)) return Number(entry.name);
    } catch {
      // Exited meanwhile, or not ours to read.
    }
  }
  return undefined;
}

/** The process ids of a LocalCluster's kube-apiserver and etcd (found by their flags); throws if either is missing. */
export async function controlPlanePids(cluster: { server: string; etcdUrl: string }): Promise<number[]> {
  const pids = await Promise.all([
    findPid(`--secure-port=${new URL(cluster.server).port}`),
    findPid(`--listen-client-urls=${cluster.etcdUrl}`),
  ]);
  if (pids.includes(undefined)) throw new Error("The cluster's kube-apiserver or etcd process is not found.");
  return pids as number[];
}

/** The CPU time of the whole machine so far (all cores, in seconds): busy, busy plus idle, and stolen (in busy). */
export async function machineCpuSeconds(): Promise<{ busy: number; total: number; steal: number }> {
  // The first line: `cpu  user nice system idle iowait irq softirq steal …` in ticks of 1/100 s.
  const fields = (await Deno.readTextFile("/proc/stat")).split("\n")[0].trim().split(/\s+/).slice(1, 9).map(Number);
  const total = fields.reduce((sum, value) => sum + value, 0);
  const idle = fields[3] + fields[4];
  return { busy: (total - idle) / 100, total: total / 100, steal: fields[7] / 100 };
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

/**
 * Two contestants' figures compared round by round: the median of the rounds' ratios, and the lowest and highest.
 * Rounds that run the two side by side share the machine's drift (an hour of other work, a warmer cache), which a
 * ratio of the two medians does not cancel: a change a few percent wide shows in the paired ratios first.
 *
 * @param numerators the first contestant's figure in each round.
 * @param denominators the second's, in the same rounds.
 */
export function pairedRatios(
  numerators: readonly number[],
  denominators: readonly number[],
): { median: number; lowest: number; highest: number } {
  if (numerators.length !== denominators.length || numerators.length === 0) {
    throw new Error(
      `Paired ratios need as many rounds on each side, at least one: ${numerators.length} and ${denominators.length}.`,
    );
  }
  const ratios = numerators.map((value, round) => value / denominators[round]);
  return { median: median(ratios), lowest: Math.min(...ratios), highest: Math.max(...ratios) };
}
