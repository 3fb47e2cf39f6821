/**
 * The fault suite, long runs (issue 11): starts a LocalCluster and, for each scenario, an operator
 * process (`kopf run` on tests/fixtures/faults_handlers.ts: create, update and delete handlers, a
 * timer and a daemon) under a churn of objects while a fault is injected; prints one table with a
 * row per scenario (objects missed, duplicated completions of the create handler, stuck
 * finalizers, the time to recover, the liveness endpoint during and after the fault), and the
 * findings below it. The scenarios themselves are in tests/support/fault_scenarios.ts; the short
 * variants run in CI as tests/faults_test.ts.
 *
 * Usage: `deno run -A bench/faults.ts [--only soak,restarts,…] [--minutes 60] [--warmup 15]
 * [--fault-seconds N] [--unhealthy-after 10]` — `--minutes` is the soak's length (its RSS is
 * sampled every 30 s and summarised after the first `--warmup` minutes), `--fault-seconds`
 * shortens the proxy faults (5xx 180 s, freeze 120 s, 429 60 s, 403 60 s, watch ERROR events
 * 90 s), `--unhealthy-after` is the operator's `settings.watching.unhealthyAfter` in the fault
 * scenarios: shorter than the 20-s outages, so that the liveness endpoint can tell during each
 * fault (the default 90 s would let it stay green through the shorter ones).
 *
 * @module
 */

import { commandLine } from "./command_line.ts";
import { LocalCluster } from "../testing.ts";
import { exitOnSignals } from "./exit_on_signals.ts";
import { ApiClient } from "../src/api/client.ts";
import { loadKubeconfig } from "../src/api/kubeconfig.ts";
import { applyExampleCrd } from "../tests/support/cluster.ts";
import {
  type FaultEnvironment,
  type FaultReport,
  kills,
  proxied,
  restarts,
  soak,
} from "../tests/support/fault_scenarios.ts";

const { values } = commandLine({
  options: {
    only: { type: "string" },
    minutes: { type: "string", default: "60" },
    warmup: { type: "string", default: "15" },
    "fault-seconds": { type: "string" },
    "unhealthy-after": { type: "string", default: "10" },
  },
});

/** A proxy fault's duration: its default, or `--fault-seconds`. */
const seconds = (standard: number) => values["fault-seconds"] ? Number(values["fault-seconds"]) : standard;

const SCENARIOS: Record<string, (environment: FaultEnvironment) => Promise<FaultReport>> = {
  restarts: (environment) => restarts(environment, { restarts: 3, down: 20, up: 15, objects: 300 }),
  sigkill: (environment) => kills(environment, { kills: 10, objects: 300, spacing: 15 }),
  "5xx": (environment) =>
    proxied(environment, { name: "5xx", fault: { kind: "fail", status: 503 }, seconds: seconds(180), objects: 100 }),
  freeze: (environment) =>
    proxied(environment, { name: "freeze", fault: { kind: "freeze" }, seconds: seconds(120), objects: 100 }),
  "429": (environment) =>
    proxied(environment, {
      name: "429",
      fault: { kind: "throttle", retryAfter: 5 },
      seconds: seconds(60),
      objects: 100,
    }),
  "403": (environment) =>
    proxied(environment, { name: "403", fault: { kind: "forbid" }, seconds: seconds(60), objects: 100 }),
  "watch-errors": (environment) =>
    proxied(environment, { name: "watch-errors", fault: { kind: "watchErrors" }, seconds: seconds(90), objects: 100 }),
  soak: (environment) =>
    soak(environment, { minutes: Number(values.minutes), warmupMinutes: Number(values.warmup), sampleSeconds: 30 }),
};

const chosen = values.only ? values.only.split(",").map((name) => name.trim()) : Object.keys(SCENARIOS);
const unknown = chosen.filter((name) => !(name in SCENARIOS));
if (unknown.length) {
  console.error(`Unknown scenarios: ${unknown.join(", ")}. Known: ${Object.keys(SCENARIOS).join(", ")}.`);
  Deno.exit(2);
}

const print = (line: string) => console.log(`[${new Date().toISOString().slice(11, 19)}] ${line}`);
exitOnSignals();
await using cluster = await LocalCluster.start();
using client = new ApiClient(await loadKubeconfig({ path: cluster.kubeconfig }));
await applyExampleCrd(client);
const directory = await Deno.makeTempDir({ prefix: "kopf-faults-" });
print(`LocalCluster at ${cluster.server}; ledgers and logs in ${directory}.`);
const environment: FaultEnvironment = {
  client,
  kubeconfig: cluster.kubeconfig,
  directory,
  upstream: { server: cluster.server, caCert: cluster.caCert, token: cluster.token },
  apiserver: cluster,
  unhealthyAfter: Number(values["unhealthy-after"]),
  print,
};

const reports: FaultReport[] = [];
for (const name of chosen) {
  print(`${name}: starting.`);
  const report = await SCENARIOS[name](environment);
  print(`${name}: done.`);
  reports.push(report);
}

console.log();
console.log(
  `settings.watching.unhealthyAfter = ${values["unhealthy-after"]} s in the fault scenarios (the soak: the default).`,
);
console.log(table(reports));
for (const report of reports) for (const note of report.notes) console.log(note);

function table(reports: FaultReport[]): string {
  const header = ["scenario", "objects", "missed", "duplicates", "stuck", "recovery s", "liveness during", "after"];
  const rows = reports.map((report) => [
    report.scenario,
    String(report.objects),
    String(report.missed),
    report.duplicates === report.unexplainedDuplicates
      ? String(report.duplicates)
      : `${report.duplicates} (${report.duplicates - report.unexplainedDuplicates} at a kill)`,
    String(report.stuck),
    report.recovery === null ? (report.unhealthyDuring === null ? "—" : "never") : report.recovery.toFixed(1),
    report.unhealthyDuring === null ? "—" : report.unhealthyDuring ? "non-200" : "200 (!)",
    report.unhealthyDuring === null
      ? "—"
      : report.healthyAfter === null
      ? "never 200"
      : `200 after ${report.healthyAfter.toFixed(0)} s`,
  ]);
  const widths = header.map((_, column) => Math.max(...[header, ...rows].map((row) => row[column].length)));
  const line = (row: string[]) => `| ${row.map((cell, column) => cell.padEnd(widths[column])).join(" | ")} |`;
  return [line(header), `|${widths.map((width) => "-".repeat(width + 2)).join("|")}|`, ...rows.map(line)].join("\n");
}
