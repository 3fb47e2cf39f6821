/**
 * What each contestant spends per object on its whole path — the watch's events, the queues, the
 * cycles, the handler, the writes and their responses, the log lines — against a scripted API
 * server (bench/scripted_api.ts) instead of kube-apiserver. On one LocalCluster, kube-apiserver and
 * etcd take most of the two cores and the rounds of bench/compare.ts differ by 10–30%; here the
 * server's share is small and steady: with the objects added at once, rounds differ by 3–5%
 * (with `--rate`, by up to 10%).
 *
 * The contestants are bench/compare.ts's, started the same way with the same fixture (one create
 * handler returning a result): ours, `lean`, the raw clients `raw` and `raw2`, `floor` (lean's work
 * written straight, without the framework's layers: bench/fixtures/lean_floor.ts), `before` (another
 * checkout, `--before DIR`), and controller-runtime's reconciler `cr` (built with Go on first use;
 * the server streams its cache's list as client-go asks, `sendInitialEvents`; the main thread's
 * share and wake-ups are left out for it: Go runs goroutines on any thread). Per round and contestant
 * (interleaved): a fresh namespace, the process started and its watch open, 2 s of rest, then
 * `--objects` objects added at once; measured from then until every object has its result in the
 * status: the process's CPU per object (each thread's by the scheduler's count, to the nanosecond; the
 * kernel's share by `stat`'s ticks of 10 ms; how much its main thread spent, and how often it woke
 * up), objects/s, the writes per object, and how long an object waits in the contestant: from its
 * ADDED event to its first write, the median and the 99th percentile. After the medians, the pairs the table compares,
 * round by round: the median of the rounds' ratios of CPU per object, the lowest and the highest (the contestants of a
 * round share the machine's drift, so a before/after reads best there).
 *
 * With `--latency MS`, each write's response comes that much later (after its watch event), as from a
 * busy API server: what waiting writes cost a contestant shows (ours keeps at most
 * `settings.networking.concurrentRequests` in flight, 32 by default). With `--event-after MS`, each write's watch
 * event goes out that many ms after its response instead of before it (kube-apiserver's order: the response once
 * etcd has the write, the event once its watch cache has it). With `--rate N`, the objects come at
 * N per second instead of at once (every contestant then works at the same pace, as on a LocalCluster,
 * where kube-apiserver sets it: the CPU per object of a process that idles between objects is higher),
 * added every `--tick` ms (20 by default: 5 objects at a time at 250 per second). With `--warm N`, N objects are
 * added the same way and handled before the measured ones, unmeasured: a process past its warm-up (V8 has optimised
 * the code its objects run), where a fresh one pays for compiling it.
 * With `--threads`, also the CPU per object by thread name (V8's helpers, the runtime's pools). With
 * `--perf DIR`, `perf record -g` samples each Deno contestant while it handles the objects, into
 * `DIR/<name>-<round>.data`, for bench/perf_split.ts (JavaScript against the runtime's native work). With
 * `--compilations`, each Deno contestant runs with V8's `--trace-opt`, and the table adds how many functions
 * V8's optimising compilers (Maglev, TurboFan) compiled in the process's life, its start included, and the
 * time those compilations took (on V8's worker threads, mostly), per object: the warm-up that a fresh process
 * pays for the code its objects run. (Its trace and its log share one file; a line of one cut by the other is
 * not counted, ~1% of them.) With `--instructions`, each Deno contestant runs under Valgrind's callgrind
 * (Debian: apt-get install valgrind), counting from the objects' addition to the last echo: the table adds
 * the machine instructions per object, all threads together (V8's compilers and collector included), and
 * what Valgrind's model of the caches and the branch predictor makes of them: misses of the first-level
 * instruction and data caches and of the last level, and mispredicted branches. Counts, within a few percent
 * from run to run (more when the event loop batches the events otherwise: read the wake-ups row beside them, and
 * a change against `before` in the same run), where this machine's CPU times spread 10-30% per round; not
 * times: a miss costs more than an instruction, a process whose caches are cold does less per cycle. The
 * process runs ~60 times slower under Valgrind, so what depends on time (the turns' budget, how many watch
 * events one read brings) is not as in a run without it. The main thread's counts are also split by the
 * origin of the code that ran (bench/callgrind_origins.ts: the framework's JavaScript, Deno's, V8's builtins,
 * the binary's native code, ...), and again with the native code's counts charged to the code that called it.
 * With `--promises`, each Deno contestant counts the promises it makes (bench/fixtures/promise_probe.ts) and
 * the table adds them per object: a count, steady from run to run, where CPU times of a fresh process spread
 * 10-30% per round (the hook's own cost makes those times incomparable).
 *
 * Usage: `deno run -A bench/operator_path.ts [--objects 2000] [--rounds 3] [--only ours,lean,raw,raw2,floor,cr]
 * [--latency 0] [--event-after MS] [--rate N [--tick 20]] [--warm 0] [--before DIR] [--threads] [--perf DIR]
 * [--compilations] [--promises] [--instructions]`
 *
 * @module
 */

import type { ContestantName } from "./compare_contestants.ts";
import { ScriptedApi, scriptedContestants } from "./scripted_api.ts";
import { roundOrder } from "./round_order.ts";
import { preparePeers } from "./compare_peers.ts";
import { eventDelayOf, readOptions } from "./operator_path_options.ts";
import { type Measured, measureRound } from "./operator_path_round.ts";
import { printReport } from "./operator_path_table.ts";

const options = await readOptions();
const { names, ...built } = await preparePeers(options.requested, "", new URL("../", import.meta.url));

await using api = await ScriptedApi.start();
api.latency = options.latency;
if (options.eventAfter !== undefined) api.eventDelay = eventDelayOf(options.eventAfter);
const logs = await Deno.makeTempDir({ prefix: "kopf-operator-path-" });
// Read by bench/fixtures/promise_probe.ts, which the Deno contestants preload with `--promises`.
if (options.promises) Deno.env.set("KOPF_BENCH_PROMISES", logs);
const probe = options.promises ? [`--preload=${new URL("./fixtures/promise_probe.ts", import.meta.url).pathname}`] : [];
// Read by bench/compare_contestants.ts: the Deno contestants run under callgrind, writing into the logs' folder.
if (options.instructions) Deno.env.set("KOPF_BENCH_CALLGRIND", logs);
const contestants = await scriptedContestants(api, logs, options.before, built, probe);

const measured = new Map<ContestantName, Measured[]>(names.map((name) => [name, []]));
for (let round = 1; round <= options.rounds; round++) {
  for (const name of roundOrder(names, round)) {
    measured.get(name)!.push(await measureRound({ api, contestants, logs, options }, name, round));
  }
}
if (api.unknown.size) console.error("Requests the script does not answer:", Object.fromEntries(api.unknown));
printReport({ names, measured, options, latency: api.latency, eventDelay: api.eventDelay });
