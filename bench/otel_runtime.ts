/**
 * What Deno's OpenTelemetry costs by itself, without the operator: a bare script that does what
 * the operator does per object (a cycle and a handler span through src/observability/tracing.ts,
 * two API requests over `fetch` to a loopback server; optionally a span of its own around each
 * request, as the operator once made), a bare `await` loop and console log lines, run in child
 * processes with `OTEL_DENO` off and on and with different samplers and settings. The CPU time of
 * each phase is read from the child itself (`process.cpuUsage()`), so the server's work (in this
 * process, without OpenTelemetry) is not counted. Compare its per-cycle CPU with the operator's
 * per-object CPU in bench/observability.ts to tell the runtime's cost from ours.
 *
 * Usage: `deno run -A bench/otel_runtime.ts [--cycles 3000] [--rounds 3]`.
 *
 * @module
 */

import { commandLine } from "./command_line.ts";
import process from "node:process";
import { median } from "./process_stats.ts";
import { traceCycle, traceHandler } from "../src/observability/tracing.ts";

const { values } = commandLine({
  options: {
    cycles: { type: "string", default: "3000" },
    rounds: { type: "string", default: "3" },
    child: { type: "string" },
    spans: { type: "string", default: "none" },
  },
});
const cycles = Number(values.cycles);
const LINES = 5000;

/** CPU seconds of this process so far (user and system). */
function cpu(): number {
  const usage = process.cpuUsage();
  return (usage.user + usage.system) / 1e6;
}

if (values.child) {
  const url = values.child;
  const { trace, SpanKind } = await import("@opentelemetry/api");
  const requestTracer = trace.getTracer("bench");
  const send = async (method: string) => {
    const response = await fetch(url, { method, body: method === "GET" ? undefined : "{}" });
    await response.text();
    return response;
  };
  // The earlier shape: a client span of ours around each request, Deno's fetch span under it.
  const request = (method: string) => {
    if (values.spans !== "requests") return send(method);
    const attributes = { "http.request.method": method, "k8s.resource": "kopfexamples" };
    return requestTracer.startActiveSpan(
      `${method} kopfexamples`,
      { kind: SpanKind.CLIENT, attributes },
      async (span) => {
        try {
          const response = await send(method);
          span.setAttribute("http.response.status_code", response.status);
          return response;
        } finally {
          span.end();
        }
      },
    );
  };
  const body = { metadata: { namespace: "bench", name: "kex-1", uid: crypto.randomUUID() } };
  const cycle = async () => {
    await traceHandler("done", "kopfexamples", body, "create", 0, async () => {});
    await request("PATCH");
    await request("PATCH");
  };
  let began = cpu();
  for (let i = 0; i < 200_000; i++) await Promise.resolve(i);
  const awaits = cpu() - began;
  for (let i = 0; i < 200; i++) await request("GET");
  began = cpu();
  for (let i = 0; i < cycles; i++) {
    if (values.spans === "none") await cycle();
    else await traceCycle("kopfexamples", body, "ADDED", cycle);
  }
  const work = cpu() - began;
  // Log lines as the operator writes them, through `console` (to stderr, discarded by the parent).
  began = cpu();
  for (let i = 0; i < LINES; i++) {
    console.error(`[2026-11-23 13:40:00,123] kopf.objects [INFO] [bench/kex-${i}] Handler 'done' succeeded.`);
    if (i % 50 === 0) await new Promise((resolve) => setTimeout(resolve, 0));
  }
  const logs = cpu() - began;
  await new Promise((resolve) => setTimeout(resolve, 2000));
  console.log(JSON.stringify({ awaits, work, logs, rss: Deno.memoryUsage().rss }));
  Deno.exit(0);
}

const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, () => Response.json({}));
let exported = 0;
const receiver = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, async (request) => {
  exported += (await request.arrayBuffer()).byteLength;
  return Response.json({});
});

interface Mode {
  name: string;
  /** `none`: no tracing calls; `ours`: through src/observability/tracing.ts; `requests`: also a span per request. */
  spans: "none" | "ours" | "requests";
  env: Record<string, string>;
}

const otel = { OTEL_DENO: "true", OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${receiver.addr.port}` };
const MODES: Mode[] = [
  { name: "off", spans: "none", env: {} },
  { name: "off, through our tracing", spans: "ours", env: {} },
  { name: "otel always_off, our tracing", spans: "ours", env: { ...otel, OTEL_TRACES_SAMPLER: "always_off" } },
  { name: "otel, fetch spans only", spans: "none", env: otel },
  { name: "otel, our tracing", spans: "ours", env: otel },
  { name: "otel, + a span per request", spans: "requests", env: otel },
  {
    name: "otel 1%, our tracing",
    spans: "ours",
    env: { ...otel, OTEL_TRACES_SAMPLER: "parentbased_traceidratio", OTEL_TRACES_SAMPLER_ARG: "0.01" },
  },
  {
    name: "otel, our tracing, big batches",
    spans: "ours",
    env: { ...otel, OTEL_BSP_SCHEDULE_DELAY: "5000", OTEL_BSP_MAX_EXPORT_BATCH_SIZE: "2048" },
  },
  { name: "otel, our tracing, console off", spans: "ours", env: { ...otel, OTEL_DENO_CONSOLE: "ignore" } },
];

const results = new Map<string, { awaits: number; work: number; logs: number; rss: number }[]>();
for (let round = 0; round < Number(values.rounds); round++) {
  for (const mode of MODES) {
    const output = await new Deno.Command(Deno.execPath(), {
      args: [
        "run",
        "-A",
        import.meta.filename!,
        `--child=http://127.0.0.1:${server.addr.port}/`,
        `--cycles=${cycles}`,
        `--spans=${mode.spans}`,
      ],
      env: mode.env,
      stderr: "null",
    }).output();
    const result = JSON.parse(new TextDecoder().decode(output.stdout));
    results.set(mode.name, [...results.get(mode.name) ?? [], result]);
    console.log(
      `round ${round + 1} ${mode.name.padEnd(32)} ${(result.work / cycles * 1e6).toFixed(0)} µs/cycle, ` +
        `${(result.awaits / 200 * 1000).toFixed(2)} ms per 1000 awaits, ${
          (result.logs / LINES * 1e6).toFixed(1)
        } µs/log line, RSS ${(result.rss / 2 ** 20).toFixed(1)} MiB`,
    );
  }
}
console.log(`\n${cycles} cycles (2 spans + 2 requests each), medians:`);
for (const [name, list] of results) {
  const work = median(list.map((result) => result.work)) / cycles * 1e6;
  const awaits = median(list.map((result) => result.awaits)) / 200 * 1000;
  const logs = median(list.map((result) => result.logs)) / LINES * 1e6;
  const rss = median(list.map((result) => result.rss)) / 2 ** 20;
  console.log(
    `${name.padEnd(32)} ${work.toFixed(0)} µs/cycle, ${awaits.toFixed(2)} ms per 1000 awaits, ` +
      `${logs.toFixed(1)} µs/log line, RSS ${rss.toFixed(1)} MiB`,
  );
}
console.log(`OTLP bytes received: ${exported}`);
await server.shutdown();
await receiver.shutdown();
