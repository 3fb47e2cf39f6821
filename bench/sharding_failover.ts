/**
 * Part 3 of bench/sharding.ts: fail-over. Three replicas share objects that each have a daemon;
 * one replica is killed (SIGKILL: its Lease stays until it expires); measured is the time from the
 * kill until the daemon of every object it ran has started in another replica (from the daemons'
 * own start times in the replicas' output), for each lease duration.
 *
 * @module
 */

import type { Replica } from "./sharded_replica.ts";
import {
  type Bench,
  deleteObjects,
  groupFormed,
  guard,
  namespaceWithObjects,
  seconds,
  startReplicas,
  stopReplicas,
  type Table,
} from "./sharding_runs.ts";
import { eventually } from "../tests/support/eventually.ts";

/** What part 3 runs. */
export interface FailoverOptions {
  readonly objects: number;
  /** The lease durations to try, in seconds. */
  readonly leases: readonly number[];
}

const REPLICAS = 3;
/** Seconds of steady state between every object having its one daemon and the kill. */
const STEADY = 3;

/** Kills one of three replicas once per lease duration; one row each. */
export async function failover(bench: Bench, options: FailoverOptions, say: (text: string) => void): Promise<Table> {
  const rows: string[][] = [];
  for (const lease of options.leases) {
    say(`failover: lease ${lease} s: creating ${options.objects} objects`);
    const { moved, first, last, serverSide } = await run(bench, options.objects, lease);
    say(`failover: lease ${lease} s: all ${moved} daemons elsewhere after ${seconds(last)} s`);
    rows.push([
      String(lease),
      serverSide,
      String(options.objects),
      String(moved),
      seconds(first),
      seconds(last),
      `≤ ${lease + 5}`,
      last <= (lease + 5) * 1000 ? "yes" : "no",
    ]);
  }
  return {
    title: `Fail-over: SIGKILL of one of ${REPLICAS} replicas, ${options.objects} objects with a daemon each`,
    headers: [
      "lease duration (s)",
      "server filters",
      "objects",
      "daemons in the killed replica",
      "first restarted elsewhere (s)",
      "all restarted elsewhere (s)",
      "target (s)",
      "met",
    ],
    rows,
    notes: [
      "From the SIGKILL to the start of the daemon of each object that ran in the killed replica, in one of the " +
      `other two (the daemons' own timestamps), after ${STEADY} s of steady state. The survivors take the dead ` +
      "member's ranges only once its Lease has not been renewed for the lease duration, so the figure is the " +
      "lease duration minus the time since its last renewal, plus the restart of the streams and the daemons.",
    ],
  };
}

async function run(bench: Bench, objects: number, lease: number) {
  const { client } = bench;
  const namespace = await namespaceWithObjects(client, "failover", objects);
  const names = Array.from({ length: objects }, (_, index) => `kex-${index}`);
  const replicas = await startReplicas(bench, namespace, REPLICAS, {
    group: `failover-${lease}`,
    env: { KOPF_BENCH_DAEMONS: "1", KOPF_BENCH_LEASE: String(lease) },
  });
  try {
    await groupFormed(replicas, true);
    await guard(oneDaemonEach(replicas, names), replicas);
    await new Promise((resolve) => setTimeout(resolve, STEADY * 1000));
    const report = await replicas[0].sharding();
    const [victim, ...survivors] = replicas.toSorted((a, b) => b.daemons.size - a.daemons.size);
    const orphans = [...victim.daemons.keys()];
    const killed = Date.now();
    victim.kill("SIGKILL");
    const restarts = await guard(
      eventually("the killed replica's daemons to start elsewhere", () => {
        const starts = orphans.map((name) => restartOf(survivors, name, killed));
        return starts.every((start) => start !== undefined) ? starts as number[] : undefined;
      }, { seconds: lease + 300 }),
      survivors,
    );
    return {
      moved: orphans.length,
      first: Math.min(...restarts) - killed,
      last: Math.max(...restarts) - killed,
      serverSide: report?.serverSide ? "yes" : "no",
    };
  } finally {
    await stopReplicas(replicas);
    await deleteObjects(client, namespace);
  }
}

/** Waits until every object's daemon runs in exactly one replica. */
function oneDaemonEach(replicas: readonly Replica[], names: readonly string[]): Promise<true> {
  return eventually("one daemon per object", () => {
    const counts = new Map<string, number>();
    for (const replica of replicas) {
      for (const name of replica.daemons.keys()) counts.set(name, (counts.get(name) ?? 0) + 1);
    }
    return names.every((name) => counts.get(name) === 1) || undefined;
  }, { seconds: 600 });
}

/** When the object's daemon first started in one of the replicas after a moment (ms since the epoch). */
function restartOf(replicas: readonly Replica[], name: string, after: number): number | undefined {
  const starts = replicas.flatMap((replica) =>
    replica.daemonStarts.filter((start) => start.name === name && start.at >= after).map((start) => start.at)
  );
  return starts.length ? Math.min(...starts) : undefined;
}
