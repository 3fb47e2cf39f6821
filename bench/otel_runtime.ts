/**
 * What Deno's OpenTelemetry costs by itself, without the operator: a bare script that does what
 * the operator does per object (a cycle span, a handler span with the same attributes, two API
 * requests each in a client span, over `fetch` to a loopback server) and a bare `await` loop,
 * run in child processes with `OTEL_DENO` off and on and with different samplers. The CPU time
 * of each phase is read from the child itself (`process.cpuUsage()`), so the server's work (in
 * this process, without OpenTelemetry) is not counted. Compare its per-cycle CPU with the
 * operator's per-object CPU in bench/observability.ts to tell the runtime's cost from ours.
 *
 * Usage: `deno run -A bench/otel_runtime.ts [--cycles 3000] [--rounds 3]`.
 *
 * @module
 */

import { parseArgs } from "node:util";
import process from "node:process";
import { median } from "./process_stats.ts";

const { values } = parseArgs({
  options: {
    cycles: { type: "string", default: "3000" },
    rounds: { type: "string", default: "3" },
    child: { type: "string" },
    spans: { type: "boolean", default: false },
  },
});
const cycles = Number(values.cycles);

/** CPU seconds of this process so far (user and system). */
function cpu(): number {
  const usage = process.cpuUsage();
  return (usage.user + usage.system) / 1e6;
}

if (values.child) {
  const url = values.child;
  const { trace, SpanKind } = await import("@opentelemetry/api");
  const tracer = trace.getTracer("bench");
  const request = async (method: string) => {
    const send = async () => {
      const response = await fetch(url, { method, body: method === "GET" ? undefined : "{}" });
      await response.text();
      return response;
    };
    if (!values.spans) return await send();
    const attributes = { "http.request.method": method, "k8s.resource": "kopfexamples" };
    return await tracer.startActiveSpan(
      `${method} kopfexamples`,
      { kind: SpanKind.CLIENT, attributes },
      async (span) => {
        try {
          const response = await send();
          span.setAttribute("http.response.status_code", response.status);
          return response;
        } finally {
          span.end();
        }
      },
    );
  };
  const inSpan = async (name: string, attributes: Record<string, string | number>, fn: () => Promise<unknown>) => {
    if (!values.spans) return await fn();
    return await tracer.startActiveSpan(name, { attributes }, async (span) => {
      try {
        return await fn();
      } finally {
        span.end();
      }
    });
  };
  const object = {
    "k8s.resource": "kopfexamples",
    "k8s.namespace.name": "bench",
    "k8s.object.name": "kex-1",
    "k8s.object.uid": crypto.randomUUID(),
  };
  let began = cpu();
  for (let i = 0; i < 200_000; i++) await Promise.resolve(i);
  const awaits = cpu() - began;
  for (let i = 0; i < 200; i++) await request("GET");
  began = cpu();
  for (let i = 0; i < cycles; i++) {
    await inSpan("kopf.cycle", { ...object, "kopf.event": "ADDED" }, async () => {
      await inSpan("kopf.handler done", { ...object, "kopf.cause": "create", "kopf.retry": 0 }, async () => {});
      await request("PATCH");
      await request("PATCH");
    });
  }
  const work = cpu() - began;
  await new Promise((resolve) => setTimeout(resolve, 2000));
  console.log(JSON.stringify({ awaits, work, rss: Deno.memoryUsage().rss }));
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
  spans: boolean;
  env: Record<string, string>;
}

const otel = { OTEL_DENO: "true", OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${receiver.addr.port}` };
const MODES: Mode[] = [
  { name: "off", spans: false, env: {} },
  { name: "off, our spans (no-op tracer)", spans: true, env: {} },
  { name: "otel, always_off, no spans", spans: false, env: { ...otel, OTEL_TRACES_SAMPLER: "always_off" } },
  { name: "otel, always_off, our spans", spans: true, env: { ...otel, OTEL_TRACES_SAMPLER: "always_off" } },
  { name: "otel, fetch spans only", spans: false, env: otel },
  { name: "otel, our spans", spans: true, env: otel },
  {
    name: "otel, our spans, 1% sampled",
    spans: true,
    env: { ...otel, OTEL_TRACES_SAMPLER: "parentbased_traceidratio", OTEL_TRACES_SAMPLER_ARG: "0.01" },
  },
  {
    name: "otel, our spans, tuned export",
    spans: true,
    env: {
      ...otel,
      OTEL_BSP_SCHEDULE_DELAY: "5000",
      OTEL_BSP_MAX_EXPORT_BATCH_SIZE: "2048",
      OTEL_DENO_CONSOLE: "ignore",
    },
  },
];

const results = new Map<string, { awaits: number; work: number; rss: number }[]>();
for (let round = 0; round < Number(values.rounds); round++) {
  for (const mode of MODES) {
    const output = await new Deno.Command(Deno.execPath(), {
      args: [
        "run",
        "-A",
        import.meta.filename!,
        `--child=http://127.0.0.1:${server.addr.port}/`,
        `--cycles=${cycles}`,
        ...(mode.spans ? ["--spans"] : []),
      ],
      env: mode.env,
      stderr: "inherit",
    }).output();
    const result = JSON.parse(new TextDecoder().decode(output.stdout));
    results.set(mode.name, [...results.get(mode.name) ?? [], result]);
    console.log(
      `round ${round + 1} ${mode.name.padEnd(32)} ${(result.work / cycles * 1e6).toFixed(0)} µs/cycle, ` +
        `${(result.awaits / 200 * 1000).toFixed(2)} ms per 1000 awaits, RSS ${(result.rss / 2 ** 20).toFixed(1)} MiB`,
    );
  }
}
console.log(`\n${cycles} cycles (2 spans + 2 requests each), medians:`);
for (const [name, list] of results) {
  const work = median(list.map((result) => result.work)) / cycles * 1e6;
  const awaits = median(list.map((result) => result.awaits)) / 200 * 1000;
  const rss = median(list.map((result) => result.rss)) / 2 ** 20;
  console.log(
    `${name.padEnd(32)} ${work.toFixed(0)} µs/cycle, ${awaits.toFixed(2)} ms per 1000 awaits, RSS ${
      rss.toFixed(1)
    } MiB`,
  );
}
console.log(`OTLP bytes received: ${exported}`);
await server.shutdown();
await receiver.shutdown();
