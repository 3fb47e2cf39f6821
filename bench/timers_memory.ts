/**
 * Memory of an operator with N objects, each with a timer ticking every second (an unchanged
 * result): starts a LocalCluster, creates the objects, runs `kopf run` on
 * `bench/fixtures/steady_timers.ts` as a separate process, waits until every object has its
 * first result, then samples the process's resident memory (RSS) and CPU time, and counts the
 * API server's write requests for the objects during the steady state (from its own metrics).
 *
 * Usage: `deno run -A bench/timers_memory.ts [--objects 1000] [--seconds 30] [--v8-flags=FLAGS]`
 * (`--v8-flags` go to the operator's process, e.g. `--max-old-space-size=96` to see how much of
 * the memory is live and how much is garbage not yet collected).
 *
 * @module
 */

import { commandLine } from "./command_line.ts";
import { LocalCluster } from "../testing.ts";
import { ApiClient } from "../src/api/client.ts";
import { loadKubeconfig } from "../src/api/kubeconfig.ts";
import type { KubernetesObject } from "../src/model/body.ts";
import { apiserverMetrics, writesOf } from "./apiserver_metrics.ts";
import { prepareExamples } from "./example_namespace.ts";
import { cpuSeconds, mib, rss } from "./process_stats.ts";

const { values } = commandLine({
  options: {
    objects: { type: "string", default: "1000" },
    seconds: { type: "string", default: "30" },
    "v8-flags": { type: "string" },
  },
});
const objects = Number(values.objects);
const seconds = Number(values.seconds);
const root = new URL("..", import.meta.url);

await using cluster = await LocalCluster.start();
const client = new ApiClient(await loadKubeconfig({ path: cluster.kubeconfig }));
const namespace = "bench";
const collection = await prepareExamples(client, namespace);
const started = Date.now();
for (let start = 0; start < objects; start += 25) {
  await Promise.all(
    Array.from({ length: Math.min(25, objects - start) }, (_, offset) =>
      client.request({
        method: "POST",
        path: collection,
        body: { apiVersion: "kopf.dev/v1", kind: "KopfExample", metadata: { name: `kex-${start + offset}` } },
      })),
  );
}
console.log(`Created ${objects} objects in ${((Date.now() - started) / 1000).toFixed(1)} s.`);

const child = new Deno.Command(Deno.execPath(), {
  args: [
    "run",
    "-A",
    ...(values["v8-flags"] ? [`--v8-flags=${values["v8-flags"]}`] : []),
    "cli/main.ts",
    "run",
    "--standalone",
    "-q",
    "-n",
    namespace,
    "bench/fixtures/steady_timers.ts",
  ],
  cwd: root,
  env: { KUBECONFIG: cluster.kubeconfig },
  stdout: "null",
  stderr: "inherit",
}).spawn();
try {
  const launched = Date.now();
  await poll("every object's first result", async () => {
    const list = await client.request<{ items: KubernetesObject[] }>({ path: collection });
    // The timer's id is `steady`, and it returns `{ steady: true }`: `status.steady.steady`.
    return list.items.every((item) => (item.status as { steady?: { steady?: boolean } } | undefined)?.steady?.steady);
  });
  console.log(`Every object had its first result ${((Date.now() - launched) / 1000).toFixed(1)} s after the start.`);
  const writesBefore = writesOf((await apiserverMetrics(client)).requests, "kopfexamples");
  const cpuBefore = await cpuSeconds(child.pid);
  const samples: number[] = [];
  for (let second = 0; second < seconds; second++) {
    samples.push(await rss(child.pid));
    await new Promise((resolve) => setTimeout(resolve, 1000));
  }
  const writesAfter = writesOf((await apiserverMetrics(client)).requests, "kopfexamples");
  const cpu = await cpuSeconds(child.pid) - cpuBefore;
  console.log(
    `RSS over ${seconds} s of steady state with ${objects} objects, one timer each at interval 1: ` +
      `min ${mib(Math.min(...samples))} MiB, max ${mib(Math.max(...samples))} MiB, last ${mib(samples.at(-1)!)} MiB.`,
  );
  console.log(`CPU time of the operator during the steady state: ${cpu.toFixed(1)} s in ${seconds} s.`);
  console.log(`Write requests for kopfexamples during the steady state: ${writesAfter - writesBefore}.`);
} finally {
  child.kill("SIGTERM");
  await child.status;
}

async function poll(what: string, check: () => Promise<boolean>, limit = 600): Promise<void> {
  const deadline = Date.now() + limit * 1000;
  while (!await check()) {
    if (Date.now() > deadline) throw new Error(`Timed out waiting for ${what}.`);
    await new Promise((resolve) => setTimeout(resolve, 1000));
  }
}
