/**
 * What `@kopf/kopf/types` costs at run time: the RSS of an idle operator (`kopf run`, nothing to
 * handle) with untyped handlers, with typed handlers importing `@kopf/kopf/types`, and — for
 * contrast — with client-node's JavaScript loaded as users load it without our types. The
 * variants run in turns (`--rounds`), each sampled for `--seconds` after `--settle` seconds; the
 * medians are printed.
 *
 * Usage: `deno run -A bench/types_rss.ts [--rounds 3] [--settle 10] [--seconds 10]`
 *
 * @module
 */

import { commandLine } from "./command_line.ts";
import { LocalCluster } from "../testing.ts";
import { ApiClient } from "../src/api/client.ts";
import { loadKubeconfig } from "../src/api/kubeconfig.ts";
import { prepareExamples } from "./example_namespace.ts";
import { median, mib, rss } from "./process_stats.ts";

const { values } = commandLine({
  options: {
    rounds: { type: "string", default: "3" },
    settle: { type: "string", default: "10" },
    seconds: { type: "string", default: "10" },
  },
});
const root = new URL("..", import.meta.url);
const VARIANTS = {
  "untyped handlers": "bench/fixtures/idle_untyped.ts",
  "typed handlers (@kopf/kopf/types)": "bench/fixtures/idle_typed.ts",
  "client-node's JavaScript loaded": "bench/fixtures/idle_client_node.ts",
};

await using cluster = await LocalCluster.start();
using client = new ApiClient(await loadKubeconfig({ path: cluster.kubeconfig }));
const namespace = "bench";
await prepareExamples(client, namespace);

const results = new Map<string, number[]>();
for (let round = 0; round < Number(values.rounds); round++) {
  for (const [name, file] of Object.entries(VARIANTS)) {
    const value = await idleRss(file);
    results.set(name, [...results.get(name) ?? [], value]);
    console.log(`round ${round + 1}: ${name}: ${mib(value)} MiB`);
  }
}
const baseline = median(results.get("untyped handlers")!);
for (const [name, samples] of results) {
  const value = median(samples);
  const delta = value - baseline;
  console.log(
    `${name}: median RSS ${mib(value)} MiB (${delta >= 0 ? "+" : ""}${mib(delta)} MiB against untyped); ` +
      `runs: ${samples.map(mib).join(", ")}`,
  );
}

/** Runs `kopf run FILE` idle and returns the median of its RSS samples after settling. */
async function idleRss(file: string): Promise<number> {
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", "cli/main.ts", "run", "--standalone", "-q", "-n", namespace, file],
    cwd: root,
    env: { KUBECONFIG: cluster.kubeconfig },
    stdout: "null",
    stderr: "inherit",
  }).spawn();
  try {
    await new Promise((resolve) => setTimeout(resolve, Number(values.settle) * 1000));
    const samples: number[] = [];
    for (let second = 0; second < Number(values.seconds); second++) {
      samples.push(await rss(child.pid));
      await new Promise((resolve) => setTimeout(resolve, 1000));
    }
    return median(samples);
  } finally {
    child.kill("SIGTERM");
    await child.status;
  }
}
