/**
 * The cost of one request: N merge-PATCHes of objects' status through our `ApiClient` (with its
 * vault, request cap, timeouts, counters and metrics) against the same PATCHes through plain
 * `fetch` on a `Deno.createHttpClient` (what bench/fixtures/raw_operator.ts does), and through
 * plain `fetch` over HTTP/1.1 (a pool of connections instead of HTTP/2's streams on one), and
 * without `fetch`: Node's `node:http2`, and an HTTP/1.1 client on connections of its own
 * (bench/fixtures/http1_client.ts); on one LocalCluster, in one process, in alternating rounds.
 * Prints the CPU per request (this process: user and system time from /proc/self/stat; and
 * kube-apiserver's with etcd's, which share the cores with an operator) and the requests per
 * second, medians of the rounds.
 *
 * With `--only NAME` (`ApiClient.request`, `fetch`, `fetch with a signal`, `fetch over HTTP/1.1`,
 * `node:http2`, `own HTTP/1.1`), one of them: for a CPU profile of it alone
 * (`deno run -A --cpu-prof --cpu-prof-dir=DIR bench/request_path.ts --only fetch`).
 *
 * Usage: `deno run -A bench/request_path.ts [--requests 2000] [--parallel 32] [--rounds 5] [--only NAME]`
 *
 * @module
 */

import { commandLine } from "./command_line.ts";
import { LocalCluster } from "../testing.ts";
import { exitOnSignals } from "./exit_on_signals.ts";
import { ApiClient } from "../src/api/client.ts";
import { loadKubeconfig } from "../src/api/kubeconfig.ts";
import { prepareExamples } from "./example_namespace.ts";
import http2 from "node:http2";
import { Http1Pool } from "./fixtures/http1_client.ts";
import { controlPlanePids, cpuSeconds, median } from "./process_stats.ts";

const { values } = commandLine({
  options: {
    requests: { type: "string", default: "2000" },
    parallel: { type: "string", default: "32" },
    rounds: { type: "string", default: "5" },
    only: { type: "string" },
  },
});
const requests = Number(values.requests);
const parallel = Number(values.parallel);
const rounds = Number(values.rounds);
const OBJECTS = 200;

exitOnSignals();
await using cluster = await LocalCluster.start();
using client = new ApiClient(await loadKubeconfig({ path: cluster.kubeconfig }));
const namespace = `request-path-${Date.now().toString(36)}`;
await prepareExamples(client, namespace);
const collection = `/apis/kopf.dev/v1/namespaces/${namespace}/kopfexamples`;
await each(OBJECTS, (index) =>
  client.request({
    method: "POST",
    path: collection,
    body: { apiVersion: "kopf.dev/v1", kind: "KopfExample", metadata: { name: `kex-${index}` }, spec: {} },
  }));

const controlPlane = await controlPlanePids(cluster);
const controlPlaneCpu = async () => {
  const seconds = await Promise.all(controlPlane.map(cpuSeconds));
  return seconds.reduce((sum, value) => sum + value, 0);
};
const http = Deno.createHttpClient({ caCerts: [cluster.caCert] });
const http1 = Deno.createHttpClient({ caCerts: [cluster.caCert], http2: false });
const serverUrl = new URL(cluster.server);
const session = http2.connect(cluster.server, { ca: cluster.caCert });
using own = new Http1Pool(serverUrl.hostname, Number(serverUrl.port), [cluster.caCert]);
// The headers fetch sends, which the clients without fetch send too: the same work on the API server's
// side (without them, kube-apiserver spent 0.3–0.4 ms more CPU per request).
const FETCH_HEADERS = `Accept: */*\r\nAccept-Encoding: gzip,br\r\nUser-Agent: Deno/${Deno.version.deno}\r\n`;
const variants: Record<string, (index: number) => Promise<unknown>> = {
  "ApiClient.request": (index) =>
    client.request({
      method: "PATCH",
      path: `${collection}/kex-${index % OBJECTS}/status`,
      contentType: "application/merge-patch+json",
      body: { status: { done: { ok: index } } },
    }),
  "fetch": (index) => plain(index),
  // What a request's own AbortController (for its timeouts) adds to plain fetch.
  "fetch with a signal": (index) => plain(index, new AbortController().signal),
  "fetch over HTTP/1.1": (index) => plain(index, undefined, http1),
  "node:http2": (index) => viaNodeHttp2(index),
  "own HTTP/1.1": async (index) => {
    const answer = await own.request(
      "PATCH",
      `${collection}/kex-${index % OBJECTS}/status`,
      `Authorization: Bearer ${cluster.token}\r\nContent-Type: application/merge-patch+json\r\n${FETCH_HEADERS}`,
      JSON.stringify({ status: { done: { ok: index } } }),
    );
    if (answer.status !== 200) throw new Error(`PATCH: HTTP ${answer.status}: ${answer.text}`);
    return JSON.parse(answer.text);
  },
};

/** The PATCH as a stream of an HTTP/2 session of Node's API. */
function viaNodeHttp2(index: number): Promise<unknown> {
  return new Promise((resolve, reject) => {
    const stream = session.request({
      ":method": "PATCH",
      ":path": `${collection}/kex-${index % OBJECTS}/status`,
      authorization: `Bearer ${cluster.token}`,
      "content-type": "application/merge-patch+json",
      accept: "*/*",
      "accept-encoding": "gzip,br",
      "user-agent": `Deno/${Deno.version.deno}`,
    });
    let status = 0;
    const chunks: string[] = [];
    stream.setEncoding("utf8");
    stream.on("response", (headers) => status = Number(headers[":status"]));
    stream.on("data", (chunk: string) => chunks.push(chunk));
    stream.on("end", () => {
      if (status === 200) resolve(JSON.parse(chunks.join("")));
      else reject(new Error(`PATCH: HTTP ${status}: ${chunks.join("")}`));
    });
    stream.on("error", reject);
    stream.end(JSON.stringify({ status: { done: { ok: index } } }));
  });
}

async function plain(index: number, signal?: AbortSignal, over = http): Promise<unknown> {
  const response = await fetch(`${cluster.server}${collection}/kex-${index % OBJECTS}/status`, {
    method: "PATCH",
    client: over,
    signal,
    headers: { authorization: `Bearer ${cluster.token}`, "content-type": "application/merge-patch+json" },
    body: JSON.stringify({ status: { done: { ok: index } } }),
  });
  if (!response.ok) throw new Error(`PATCH: HTTP ${response.status}: ${await response.text()}`);
  return await response.json();
}

const results: Record<string, { cpu: number[]; server: number[]; rate: number[] }> = {};
for (let round = 0; round < rounds; round++) {
  for (const [name, send] of Object.entries(variants)) {
    if (values.only !== undefined && name !== values.only) continue;
    const [cpuBefore, serverBefore] = [await cpuSeconds(Deno.pid), await controlPlaneCpu()];
    const started = performance.now();
    await each(requests, send);
    const seconds = (performance.now() - started) / 1000;
    const cpu = await cpuSeconds(Deno.pid) - cpuBefore;
    const server = await controlPlaneCpu() - serverBefore;
    results[name] ??= { cpu: [], server: [], rate: [] };
    results[name].cpu.push(cpu * 1000 / requests);
    results[name].server.push(server * 1000 / requests);
    results[name].rate.push(requests / seconds);
  }
}
http.close();
http1.close();
session.close();

console.log(`${requests} PATCHes, ${parallel} at once, medians of ${rounds} rounds:`);
console.log("| client | CPU per request, ms | kube-apiserver + etcd CPU per request, ms | requests/s |");
console.log("|---|---:|---:|---:|");
for (const [name, { cpu, server, rate }] of Object.entries(results)) {
  console.log(`| ${name} | ${median(cpu).toFixed(3)} | ${median(server).toFixed(3)} | ${median(rate).toFixed(0)} |`);
}

/** Runs `action` for 0…count-1, `parallel` at a time. */
async function each(count: number, action: (index: number) => Promise<unknown>): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < count) await action(next++);
  };
  await Promise.all(Array.from({ length: Math.min(parallel, count) }, worker));
}
