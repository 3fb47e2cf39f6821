/**
 * The CPU of one unsharded `kopf run` over pre-created objects with a CPU-bound create handler
 * (bench/fixtures/sharded_work.ts, the same calibrated work for every run), for this checkout and
 * others side by side on one LocalCluster: to find where the framework's own CPU per object went
 * between two commits. Per run: the replica's CPU from its spawn until every object's result is in
 * its status, and from its metrics the cycles it ran and the requests it made. The checkouts take
 * turns, `--rounds` times.
 *
 * Usage: `deno run -A bench/replica_cpu.ts [--objects 1000] [--work-ms 20] [--rounds 2]
 * [--checkout DIR]...` (each DIR a checkout with `deno install` done, e.g. made with
 * `git worktree add DIR COMMIT`; this checkout is always one of them). With `--cpu-prof DIR`, each
 * replica writes a V8 CPU profile to DIR/<checkout's folder name>-<round> (stopped by SIGTERM then,
 * so that the profile is written; read them with bench/cpu_profile.ts).
 *
 * @module
 */

import { commandLine } from "./command_line.ts";
import { fileURLToPath } from "node:url";
import { basename, join } from "node:path";
import { LocalCluster } from "../testing.ts";
import { exitOnSignals } from "./exit_on_signals.ts";
import { ApiClient } from "../src/api/client.ts";
import { loadKubeconfig } from "../src/api/kubeconfig.ts";
import { freePort } from "../tests/support/environment.ts";
import { calibrate } from "./busy_work.ts";
import { cpuSeconds, median } from "./process_stats.ts";
import { deleteObjects, hasResult, namespaceWithObjects } from "./sharding_runs.ts";

const { values } = commandLine({
  options: {
    objects: { type: "string", default: "1000" },
    "work-ms": { type: "string", default: "20" },
    rounds: { type: "string", default: "2" },
    checkout: { type: "string", multiple: true, default: [] },
    "cpu-prof": { type: "string" },
  },
});
const objects = Number(values.objects);
const checkouts = [fileURLToPath(new URL("..", import.meta.url)), ...values.checkout];
const work = String(calibrate(Number(values["work-ms"])));
const KOPF_RUN = ["cli/main.ts", "run", "--standalone", "-q"];

exitOnSignals();
await using cluster = await LocalCluster.start();
using client = new ApiClient(await loadKubeconfig({ path: cluster.kubeconfig }));

/** One run: the replica's CPU (s) until every result is in, and the lines of its metrics that count. */
async function run(checkout: string, round: number): Promise<{ cpu: number; counts: string[] }> {
  const namespace = await namespaceWithObjects(client, "cpu", objects);
  const metrics = `http://127.0.0.1:${freePort()}/metrics`;
  const profiles = values["cpu-prof"];
  const profiling = profiles
    ? ["--cpu-prof", `--cpu-prof-dir=${join(profiles, `${basename(checkout)}-${round}`)}`]
    : [];
  const child = new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "-A",
      ...profiling,
      ...KOPF_RUN,
      "-n",
      namespace,
      "--metrics",
      metrics,
      "bench/fixtures/sharded_work.ts",
    ],
    cwd: checkout,
    env: { KUBECONFIG: cluster.kubeconfig, NO_COLOR: "1", KOPF_BENCH_REPLICA: "r1", KOPF_BENCH_WORK: work },
    stdout: "null",
    stderr: "null",
  }).spawn();
  // Ended by a signal, the bench takes its replica along (exitOnSignals: unload runs).
  const killAtUnload = () => child.kill("SIGKILL");
  globalThis.addEventListener("unload", killAtUnload);
  try {
    for (;;) {
      await new Promise((resolve) => setTimeout(resolve, 1000));
      const list = await client.request<{ items: Parameters<typeof hasResult>[0][] }>({
        path: `/apis/kopf.dev/v1/namespaces/${namespace}/kopfexamples`,
      });
      if (list.items.every(hasResult)) break;
    }
    const cpu = await cpuSeconds(child.pid);
    const text = await (await fetch(metrics)).text();
    const counts = text.split("\n").filter((line) =>
      /^kopf_(queue_latency_seconds_count|api_requests_total)\{.*kopfexamples/.test(line)
    );
    return { cpu, counts };
  } finally {
    globalThis.removeEventListener("unload", killAtUnload);
    child.kill(profiles ? "SIGTERM" : "SIGKILL");
    await child.status;
    await deleteObjects(client, namespace);
  }
}

const cpu = new Map<string, number[]>(checkouts.map((checkout) => [checkout, []]));
for (let round = 0; round < Number(values.rounds); round++) {
  for (const checkout of checkouts) {
    const outcome = await run(checkout, round);
    cpu.get(checkout)!.push(outcome.cpu);
    console.error(`${checkout}: ${outcome.cpu.toFixed(2)} s of CPU; ${outcome.counts.join("; ")}`);
  }
}
console.log(`| checkout | CPU per object, ms (median of ${values.rounds}) | runs, s |`);
console.log("|---|---|---|");
for (const [checkout, seconds] of cpu) {
  const runs = seconds.map((value) => value.toFixed(2)).join(" / ");
  console.log(`| ${checkout} | ${(median(seconds) * 1000 / objects).toFixed(2)} | ${runs} |`);
}
