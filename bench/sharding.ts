/**
 * The acceptance bench of sharding (issue 21), its three parts side by side in one run on one
 * LocalCluster with the `ShardedListAndWatch` feature gate on; every replica is a separate
 * `kopf run --shard-group` process on bench/fixtures/sharded_work.ts (in part 2 behind an HTTPS
 * proxy of its own that counts what it receives).
 *
 * 1. Throughput: one unsharded replica, then groups of `--replicas` sizes, each over `--objects`
 *    fresh objects whose create handler burns `--work-ms` of CPU (calibrated once, here, at start);
 *    for each of the `--storage` modes: `default` (2 writes per object: the object and its status)
 *    and `lean` (1: the status).
 * 2. Memory and bandwidth: over `--memory-objects` small objects, a group of `--memory-replicas`
 *    filtered server-side, the same filtering client-side (`settings.sharding.serverSide = "never"`),
 *    one unsharded replica, and idle replicas over no objects: RSS and bytes received per replica.
 * 3. Fail-over: for each `--lease` duration, three replicas with a daemon per object over
 *    `--failover-objects` objects; one is killed; the time until its objects' daemons run elsewhere.
 *
 * Usage: `deno run -A bench/sharding.ts [--objects 3000] [--replicas 1,2,3] [--work-ms 20] [--storage default,lean]
 * [--memory-objects 10000] [--memory-replicas 3] [--settle 20] [--lease 15,5] [--failover-objects 300]
 * [--only throughput,memory,failover]`. Progress goes to stderr, the Markdown tables to stdout.
 *
 * @module
 */

import { commandLine, usageError } from "./command_line.ts";
import { LocalCluster } from "../testing.ts";
import { exitOnSignals } from "./exit_on_signals.ts";
import { ApiClient } from "../src/api/client.ts";
import { loadKubeconfig } from "../src/api/kubeconfig.ts";
import { calibrate } from "./busy_work.ts";
import { controlPlanePids } from "./process_stats.ts";
import { failover } from "./sharding_failover.ts";
import { memory } from "./sharding_memory.ts";
import type { Bench, Table } from "./sharding_runs.ts";
import { throughput } from "./sharding_throughput.ts";

const { values } = commandLine({
  options: {
    objects: { type: "string", default: "3000" },
    replicas: { type: "string", default: "1,2,3" },
    "work-ms": { type: "string", default: "20" },
    storage: { type: "string", default: "default,lean" },
    "memory-objects": { type: "string", default: "10000" },
    "memory-replicas": { type: "string", default: "3" },
    settle: { type: "string", default: "20" },
    lease: { type: "string", default: "15,5" },
    "failover-objects": { type: "string", default: "300" },
    only: { type: "string", default: "throughput,memory,failover" },
  },
});
const numbers = (text: string) => text.split(",").filter(Boolean).map(Number);
const parts = values.only.split(",");
const storages = values.storage.split(",").filter(Boolean) as ("default" | "lean")[];
for (const storage of storages) {
  if (storage !== "default" && storage !== "lean") usageError(`--storage: "${storage}" is not default or lean.`);
}
const started = Date.now();
const say = (text: string) => console.error(`[${((Date.now() - started) / 1000).toFixed(0)} s] ${text}`);

exitOnSignals();
await using cluster = await LocalCluster.start({ featureGates: { ShardedListAndWatch: true } });
using client = new ApiClient(await loadKubeconfig({ path: cluster.kubeconfig }));
const bench: Bench = { cluster, client, controlPlane: await controlPlanePids(cluster) };

const workMs = Number(values["work-ms"]);
const iterations = calibrate(workMs);
say(`calibrated: ${iterations} iterations of the hashing loop take ${workMs} ms here`);

const tables: Table[] = [];
if (parts.includes("throughput")) {
  const replicas = numbers(values.replicas);
  for (const storage of storages) {
    const options = { objects: Number(values.objects), replicas, iterations, workMs, storage };
    tables.push(await throughput(bench, options, say));
  }
}
if (parts.includes("memory")) {
  const options = {
    objects: Number(values["memory-objects"]),
    replicas: Number(values["memory-replicas"]),
    settle: Number(values.settle),
  };
  tables.push(await memory(bench, options, say));
}
if (parts.includes("failover")) {
  tables.push(
    await failover(bench, { objects: Number(values["failover-objects"]), leases: numbers(values.lease) }, say),
  );
}

console.log(`Command: \`deno run -A bench/sharding.ts ${Deno.args.join(" ")}\`.`);
console.log(
  `Cluster: LocalCluster, kube-apiserver v${cluster.version} with the feature gate ShardedListAndWatch on; ` +
    `Deno ${Deno.version.deno}; ${navigator.hardwareConcurrency} cores, shared by the cluster, the replicas and ` +
    `the bench. Handler work: ${iterations} iterations ≈ ${workMs} ms. Whole run: ${
      ((Date.now() - started) / 60000).toFixed(1)
    } min.`,
);
for (const table of tables) {
  console.log(`\n### ${table.title}\n`);
  console.log(`| ${table.headers.join(" | ")} |`);
  console.log(`|${table.headers.map(() => "---").join("|")}|`);
  for (const row of table.rows) console.log(`| ${row.join(" | ")} |`);
  for (const note of table.notes) console.log(`\n${note}`);
}
