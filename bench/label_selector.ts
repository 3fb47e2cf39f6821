/**
 * What server-side label selectors save: 5,000 unlabelled ConfigMaps and 10 labelled ones, and an
 * operator whose only handler wants the labelled ones — once with the filter pushed down to the
 * server (a literal label), once filtered client-side (the same filter as a callback, as every
 * filter worked before). For each: the bytes of LIST responses for configmaps (the API server's
 * own `apiserver_response_sizes` metric) and the operator's RSS once it has handled the 10 objects.
 *
 * Usage: `deno run -A bench/label_selector.ts [--plain 5000] [--labelled 10] [--rounds 2] [--seconds 10]`
 *
 * @module
 */

import { commandLine } from "./command_line.ts";
import { LocalCluster } from "../testing.ts";
import { exitOnSignals } from "./exit_on_signals.ts";
import { ApiClient } from "../src/api/client.ts";
import { loadKubeconfig } from "../src/api/kubeconfig.ts";
import type { KubernetesList } from "../src/model/body.ts";
import { median, mib, rss } from "./process_stats.ts";
import { metricsText } from "./apiserver_metrics.ts";

const { values } = commandLine({
  options: {
    plain: { type: "string", default: "5000" },
    labelled: { type: "string", default: "10" },
    rounds: { type: "string", default: "2" },
    seconds: { type: "string", default: "10" },
  },
});
const plain = Number(values.plain);
const labelled = Number(values.labelled);
const root = new URL("..", import.meta.url);
/** The LIST bytes of the bench's own polling during a run: not the operator's. */
let ownListing = 0;
const VARIANTS = {
  "client-side filter (before)": "bench/fixtures/labelled_clientside.ts",
  "server-side labelSelector (after)": "bench/fixtures/labelled_pushdown.ts",
};

exitOnSignals();
await using cluster = await LocalCluster.start();
using client = new ApiClient(await loadKubeconfig({ path: cluster.kubeconfig }));
const namespace = "bench";
await client.request({ method: "POST", path: "/api/v1/namespaces", body: { metadata: { name: namespace } } });
const collection = `/api/v1/namespaces/${namespace}/configmaps`;
const started = Date.now();
const names = [
  ...Array.from({ length: plain }, (_, i) => ({ name: `plain-${i}`, labels: undefined })),
  ...Array.from({ length: labelled }, (_, i) => ({ name: `picked-${i}`, labels: { app: "picked" } })),
];
for (let start = 0; start < names.length; start += 50) {
  await Promise.all(
    names.slice(start, start + 50).map(({ name, labels }) =>
      client.request({
        method: "POST",
        path: collection,
        body: { metadata: { name, labels }, data: { payload: "x".repeat(200) } },
      })
    ),
  );
}
console.log(`Created ${plain} unlabelled and ${labelled} labelled ConfigMaps in ${elapsed(started)} s.`);

const results = new Map<string, { rss: number[]; bytes: number[] }>();
for (let round = 0; round < Number(values.rounds); round++) {
  for (const [name, file] of Object.entries(VARIANTS)) {
    const result = await measure(file);
    const entry = results.get(name) ?? { rss: [], bytes: [] };
    entry.rss.push(result.rss);
    entry.bytes.push(result.bytes);
    results.set(name, entry);
    console.log(`round ${round + 1}: ${name}: RSS ${mib(result.rss)} MiB, listed ${kib(result.bytes)} KiB`);
  }
}
for (const [name, { rss, bytes }] of results) {
  console.log(`${name}: median RSS ${mib(median(rss))} MiB, median listed bytes ${kib(median(bytes))} KiB`);
}

/** Runs the operator until it has handled the labelled objects; its RSS then, and the LIST bytes it caused. */
async function measure(file: string): Promise<{ rss: number; bytes: number }> {
  await unmark();
  const before = await listedBytes();
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", "cli/main.ts", "run", "--standalone", "-q", "-n", namespace, file],
    cwd: root,
    env: { KUBECONFIG: cluster.kubeconfig },
    stdout: "null",
    stderr: "inherit",
  }).spawn();
  try {
    const deadline = Date.now() + 600_000;
    while ((await marked()) < labelled) {
      if (Date.now() > deadline) throw new Error("The operator has not handled the labelled objects in 600 s.");
      await new Promise((resolve) => setTimeout(resolve, 1000));
    }
    const samples: number[] = [];
    for (let second = 0; second < Number(values.seconds); second++) {
      samples.push(await rss(child.pid));
      await new Promise((resolve) => setTimeout(resolve, 1000));
    }
    // The bench's own listing of the labelled objects is by selector and small; it is subtracted.
    return { rss: median(samples), bytes: await listedBytes() - before - ownListing };
  } finally {
    child.kill("SIGTERM");
    await child.status;
  }
}

/** How many labelled objects carry the handler's mark; counts what this listing itself adds to the metric. */
async function marked(): Promise<number> {
  const before = await listedBytes();
  const list = await client.request<KubernetesList>({ path: collection, query: { labelSelector: "app=picked" } });
  ownListing += await listedBytes() - before;
  return list.items.filter((item) => item.metadata.annotations?.["bench.kopf.dev/seen"] === "yes").length;
}

async function unmark(): Promise<void> {
  ownListing = 0;
  for (let i = 0; i < labelled; i++) {
    await client.request({
      method: "PATCH",
      path: `${collection}/picked-${i}`,
      body: { metadata: { annotations: { "bench.kopf.dev/seen": null } } },
      contentType: "application/merge-patch+json",
    });
  }
}

/** The API server's total bytes of LIST responses for configmaps so far. */
async function listedBytes(): Promise<number> {
  const text = await metricsText(client);
  let total = 0;
  for (const line of text.split("\n")) {
    if (!line.startsWith("apiserver_response_sizes_sum{")) continue;
    if (line.includes('resource="configmaps"') && line.includes('verb="LIST"')) total += Number(line.split(" ").at(-1));
  }
  return total;
}

function kib(bytes: number): string {
  return (bytes / 1024).toFixed(1);
}

function elapsed(since: number): string {
  return ((Date.now() - since) / 1000).toFixed(1);
}
