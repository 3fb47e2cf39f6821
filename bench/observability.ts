/**
 * What observability costs: throughput and resident memory of `kopf run` with metrics and
 * tracing off, with the metrics endpoint on (scraped every second), and with the metrics and
 * Deno's OpenTelemetry on (traces, metrics and logs exported over OTLP/HTTP in protobuf, Deno's
 * default, to a receiver in this process that only counts the bytes), and with the metrics and
 * traces sampled at 1% (`OTEL_TRACES_SAMPLER=parentbased_traceidratio`). The modes run in interleaved rounds on one LocalCluster: each round
 * pre-creates N objects in a fresh namespace, starts the operator (one create handler returning
 * a result, bench/fixtures/compare_create.ts), and measures the time until every object has its
 * result, then the operator's CPU time and its RSS after a few idle seconds. On a busy machine
 * the CPU time per object is the steadier figure.
 *
 * Usage: `deno run -A bench/observability.ts [--objects 300] [--rounds 3] [--modes 0,1,2,3] [--profile DIR]` (mode 4:
 * Deno's OpenTelemetry on with `OTEL_TRACES_SAMPLER=always_off`, to tell the runtime's cost from our spans';
 * `--profile` writes a V8 CPU profile of each operator run to DIR, named after its namespace).
 *
 * @module
 */

import { commandLine } from "./command_line.ts";
import { OPERATOR_V8_FLAGS } from "../cli/build.ts";
import { LocalCluster } from "../testing.ts";
import { exitOnSignals } from "./exit_on_signals.ts";
import { ApiClient } from "../src/api/client.ts";
import { loadKubeconfig } from "../src/api/kubeconfig.ts";
import type { KubernetesObject } from "../src/model/body.ts";
import { prepareExamples } from "./example_namespace.ts";
import { cpuSeconds, mib, rss } from "./process_stats.ts";

const { values } = commandLine({
  options: {
    objects: { type: "string", default: "300" },
    rounds: { type: "string", default: "3" },
    modes: { type: "string" },
    profile: { type: "string" },
  },
});
const objects = Number(values.objects);
const rounds = Number(values.rounds);
const root = new URL("..", import.meta.url);

type Mode = "off" | "metrics" | "metrics+tracing" | "metrics+tracing 1%" | "metrics+otel, no traces";
const ALL_MODES: Mode[] = ["off", "metrics", "metrics+tracing", "metrics+tracing 1%", "metrics+otel, no traces"];
const MODES: Mode[] = values.modes
  ? values.modes.split(",").map((index) => ALL_MODES[Number(index)] ?? usage(`no mode ${index}`))
  : ALL_MODES.slice(0, 4);

function usage(problem: string): never {
  throw new Error(`${problem}: --modes takes indexes into ${ALL_MODES.map((mode, i) => `${i}=${mode}`).join(", ")}.`);
}

let exported = 0;
const receiver = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, async (request) => {
  exported += (await request.arrayBuffer()).byteLength;
  return Response.json({});
});

function freePort(): number {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = listener.addr.port;
  listener.close();
  return port;
}

async function poll(what: string, check: () => Promise<boolean>, limit = 600): Promise<void> {
  const deadline = Date.now() + limit * 1000;
  while (!await check()) {
    if (Date.now() > deadline) throw new Error(`Timed out waiting for ${what}.`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

exitOnSignals();
await using cluster = await LocalCluster.start();
const client = new ApiClient(await loadKubeconfig({ path: cluster.kubeconfig }));

interface Result {
  mode: Mode;
  perSecond: number;
  rss: number;
  cpu: number;
}

async function round(mode: Mode, index: number): Promise<Result> {
  const namespace = `bench-${mode.replace(/[^a-z]+/g, "-")}-${index}-${crypto.randomUUID().slice(0, 4)}`;
  const collection = await prepareExamples(client, namespace);
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
  const metricsUrl = `http://127.0.0.1:${freePort()}/metrics`;
  const env: Record<string, string> = { KUBECONFIG: cluster.kubeconfig };
  if (mode !== "off" && mode !== "metrics") {
    Object.assign(env, {
      OTEL_DENO: "true",
      OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${receiver.addr.port}`,
    });
  }
  if (mode === "metrics+tracing 1%") {
    Object.assign(env, { OTEL_TRACES_SAMPLER: "parentbased_traceidratio", OTEL_TRACES_SAMPLER_ARG: "0.01" });
  }
  // Deno's OpenTelemetry without any trace recorded: what the runtime's own machinery costs.
  if (mode === "metrics+otel, no traces") Object.assign(env, { OTEL_TRACES_SAMPLER: "always_off" });
  const child = new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "-A",
      OPERATOR_V8_FLAGS,
      ...(values.profile
        ? ["--cpu-prof", `--cpu-prof-dir=${values.profile}`, `--cpu-prof-name=${namespace}.cpuprofile`]
        : []),
      "cli/main.ts",
      "run",
      "--standalone",
      "-q",
      "-n",
      namespace,
      ...(mode === "off" ? [] : ["--metrics", metricsUrl]),
      "bench/fixtures/compare_create.ts",
    ],
    cwd: root,
    env,
    stdout: "null",
    stderr: "inherit",
  }).spawn();
  let scraping = mode !== "off";
  const scraper = (async () => {
    while (scraping) {
      await fetch(metricsUrl).then((response) => response.text()).catch(() => {});
      await new Promise((resolve) => setTimeout(resolve, 1000));
    }
  })();
  try {
    const launched = performance.now();
    await poll("every object's result", async () => {
      const list = await client.request<{ items: KubernetesObject[] }>({ path: collection });
      return list.items.every((item) => (item.status as { done?: unknown } | undefined)?.done !== undefined);
    });
    const seconds = (performance.now() - launched) / 1000;
    await new Promise((resolve) => setTimeout(resolve, 3000));
    const memory = await rss(child.pid);
    const cpu = await cpuSeconds(child.pid);
    return { mode, perSecond: objects / seconds, rss: memory, cpu };
  } finally {
    scraping = false;
    await scraper;
    child.kill("SIGTERM");
    await child.status;
  }
}

const results: Result[] = [];
for (let index = 0; index < rounds; index++) {
  for (const mode of MODES) {
    const result = await round(mode, index);
    results.push(result);
    console.log(
      `round ${index + 1} ${mode.padEnd(24)} ${result.perSecond.toFixed(1)} objects/s, RSS ${mib(result.rss)}, ` +
        `CPU ${result.cpu.toFixed(2)} s`,
    );
  }
}
const median = (numbers: number[]) => numbers.sort((a, b) => a - b)[Math.floor(numbers.length / 2)];
const base = results.filter((result) => result.mode === "off");
console.log(`\n${objects} objects, ${rounds} rounds; medians (ratio to "off"):`);
for (const mode of MODES) {
  const mine = results.filter((result) => result.mode === mode);
  const rate = median(mine.map((result) => result.perSecond));
  const memory = median(mine.map((result) => result.rss));
  const baseRate = median(base.map((result) => result.perSecond));
  const baseMemory = median(base.map((result) => result.rss));
  const cpu = median(mine.map((result) => result.cpu));
  const baseCpu = median(base.map((result) => result.cpu));
  console.log(
    `${mode.padEnd(24)} ${rate.toFixed(1)} objects/s (${(rate / baseRate).toFixed(2)}×), ` +
      `RSS ${mib(memory)} MiB (${memory >= baseMemory ? "+" : ""}${mib(memory - baseMemory)}), ` +
      `CPU ${(cpu * 1000 / objects).toFixed(2)} ms/object (${(cpu / baseCpu).toFixed(2)}×)`,
  );
}
console.log(`OTLP bytes received: ${exported}`);
client.close();
await receiver.shutdown();
