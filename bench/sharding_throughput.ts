/**
 * Part 1 of bench/sharding.ts: throughput of 1, 2, 3… replicas with a CPU-bound create handler over
 * pre-created objects, against one unsharded replica: the time from the spawn of the replicas
 * until every object is handled, and what the CPU went to meanwhile.
 *
 * @module
 */

import { Tracker } from "./compare_tracker.ts";
import { cpuSeconds, machineCpuSeconds } from "./process_stats.ts";
import {
  type Bench,
  controlPlaneCpu,
  deleteObjects,
  groupFormed,
  guard,
  handledBy,
  isHandled,
  namespaceWithObjects,
  RESULTS_LOST,
  resultsSettled,
  seconds,
  startReplicas,
  stopReplicas,
  type Table,
} from "./sharding_runs.ts";

/** What part 1 runs. */
export interface ThroughputOptions {
  readonly objects: number;
  /** The group sizes to run, e.g. `[1, 2, 3]`. */
  readonly replicas: readonly number[];
  /** The iterations of the handler's work (calibrated to its milliseconds). */
  readonly iterations: number;
  readonly workMs: number;
  /** The fixture's storage: `default` writes the object and its status, `lean` only the status. */
  readonly storage: "default" | "lean";
}

const WRITES = { default: "2 writes per object", lean: "1 write per object" } as const;

/** One run; times in ms from the spawn of the replicas. */
interface Outcome {
  readonly label: string;
  readonly serverSide: string;
  readonly formed?: number;
  /** The first and the last end of a handler's work. */
  readonly firstHandler: number;
  readonly lastHandler: number;
  /** When the bench saw every object marked as handled. */
  readonly all: number;
  /** When the last result reached a status. */
  readonly results: number;
  readonly shares: string;
  readonly resultsLost: number;
  readonly replicaCpu: number;
  readonly controlPlaneCpu: number;
  readonly machineBusy: number;
  /** The share of the machine's CPU time that the hypervisor gave to others (a run with much of it is not comparable). */
  readonly steal: number;
}

/** Runs one unsharded replica and then each group size; one row each. */
export async function throughput(
  bench: Bench,
  options: ThroughputOptions,
  say: (text: string) => void,
): Promise<Table> {
  const outcomes: Outcome[] = [];
  const runs = [
    { count: 1, group: undefined },
    // A group of its own per storage too: replicas end with SIGKILL, and a group whose Leases of a run before still
    // look alive is not forming, so its members would skip the wait for each other that a new group makes.
    ...options.replicas.map((count) => ({ count, group: `speed-${options.storage}-${count}` })),
  ];
  for (const { count, group } of runs) {
    const label = group ? `${count} sharded` : "1 unsharded";
    say(`throughput (${options.storage}): ${label}: creating ${options.objects} objects`);
    outcomes.push(await run(bench, options, label, count, group));
    say(`throughput (${options.storage}): ${label}: all handled after ${seconds(outcomes.at(-1)!.all)} s`);
  }
  const n = options.objects;
  const phase = (outcome: Outcome) => outcome.lastHandler - outcome.firstHandler;
  return {
    title: `Throughput, ${options.storage} storage (${WRITES[options.storage]}): ${n} pre-created objects, ` +
      `a create handler of ~${options.workMs} ms CPU each`,
    headers: [
      "replicas",
      "server filters",
      "group formed (s)",
      "handlers ran (s)",
      "all handled (s)",
      "objects/s",
      "speed-up",
      "objects/s while handling",
      "speed-up while handling",
      "all results in status (s)",
      "handled per replica",
      "results lost",
      "CPU replicas (s)",
      "CPU apiserver+etcd (s)",
      "machine busy",
      "stolen",
    ],
    rows: outcomes.map((outcome) => [
      outcome.label,
      outcome.serverSide,
      outcome.formed === undefined ? "–" : seconds(outcome.formed),
      `${seconds(outcome.firstHandler)}–${seconds(outcome.lastHandler)}`,
      seconds(outcome.all),
      (n / outcome.all * 1000).toFixed(1),
      `${(outcomes[0].all / outcome.all).toFixed(2)}×`,
      (n / phase(outcome) * 1000).toFixed(1),
      `${(phase(outcomes[0]) / phase(outcome)).toFixed(2)}×`,
      seconds(outcome.results),
      outcome.shares,
      String(outcome.resultsLost),
      outcome.replicaCpu.toFixed(1),
      outcome.controlPlaneCpu.toFixed(1),
      `${(outcome.machineBusy * 100).toFixed(0)}% of ${navigator.hardwareConcurrency} cores`,
      `${(outcome.steal * 100).toFixed(0)}%`,
    ]),
    notes: [
      "Times are from the spawn of the replicas (`deno run`: their start-up is included). Group formed: every " +
      "member sees all members and their ranges cover the hash space (a replica may begin before). Handlers ran: " +
      "the first and the last end of a handler's work (its own timestamp); all handled: when the bench's watch " +
      "saw the last object marked as handled (default storage: the handler's annotation, patched with Kopf's own " +
      "mark, the result going to the status subresource in a second request, later; lean: the result, in the one " +
      "status patch that carries Kopf's mark too). Objects/s and speed-up: over the time to all " +
      "handled, and over the handlers' span alone (without start-up and patch tail); against the unsharded " +
      "replica. CPU and machine busy: from the spawn to all handled; machine busy counts every process on the " +
      "machine, other engineers' runs included; stolen: the share of it that the hypervisor gave to other machines " +
      "(steal time, counted as busy).",
      RESULTS_LOST,
    ],
  };
}

async function run(bench: Bench, options: ThroughputOptions, label: string, count: number, group?: string) {
  const { client } = bench;
  const namespace = await namespaceWithObjects(client, "speed", options.objects);
  await using tracker = await Tracker.start(client, namespace);
  const cpuBefore = await controlPlaneCpu(bench);
  const machineBefore = await machineCpuSeconds();
  const [spawned, spawnedAt] = [performance.now(), Date.now()];
  const replicas = await startReplicas(bench, namespace, count, {
    group,
    env: { KOPF_BENCH_WORK: String(options.iterations), KOPF_BENCH_STORAGE: options.storage },
  });
  try {
    const formed = groupFormed(replicas, group !== undefined);
    formed.catch(() => {}); // Awaited below; a replica's death fails the wait for the objects first.
    const all = await guard(tracker.until(isHandled, options.objects), replicas);
    const machineAfter = await machineCpuSeconds();
    const cpuAfter = await controlPlaneCpu(bench);
    const replicaCpu = (await Promise.all(replicas.map((replica) => cpuSeconds(replica.pid))))
      .reduce((sum, value) => sum + value, 0);
    const results = await guard(resultsSettled(tracker, options.objects), replicas);
    const report = await replicas[0].sharding();
    const handled = await handledBy(client, namespace);
    return {
      label,
      serverSide: report ? (report.serverSide ? "yes" : "no") : "–",
      formed: group ? await formed - spawned : undefined,
      firstHandler: handled.first - spawnedAt,
      lastHandler: handled.last - spawnedAt,
      all: all - spawned,
      results: results.at - spawned,
      shares: replicas.map((replica) => handled.byReplica.get(replica.id) ?? 0).join(" / "),
      resultsLost: handled.resultsLost,
      replicaCpu,
      controlPlaneCpu: cpuAfter - cpuBefore,
      machineBusy: (machineAfter.busy - machineBefore.busy) / (machineAfter.total - machineBefore.total),
      steal: (machineAfter.steal - machineBefore.steal) / (machineAfter.total - machineBefore.total),
    } satisfies Outcome;
  } finally {
    await stopReplicas(replicas);
    await deleteObjects(client, namespace);
  }
}
