/**
 * The first HTTPS request of a fresh Deno process against a LocalCluster, without and with
 * cli/tls_warmup.ts's warm-up started beforehand (bench/fixtures/first_request_probe.ts, spawned
 * anew for every sample, alternately): the first request, a second one over the same client, and
 * the first one of a second client (a new connection), in ms; medians of `--rounds` samples each.
 *
 * Usage: `deno run -A bench/first_request.ts [--rounds 5]`
 *
 * @module
 */

import { commandLine, usageError } from "./command_line.ts";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { LocalCluster } from "../testing.ts";
import { exitOnSignals } from "./exit_on_signals.ts";
import { median } from "./process_stats.ts";

const { values } = commandLine({ options: { rounds: { type: "string", default: "5" } } });
const rounds = Number(values.rounds);
if (!(rounds >= 1)) usageError(`--rounds takes a number of samples, 1 or more; got ${values.rounds}.`);
const probe = fileURLToPath(new URL("./fixtures/first_request_probe.ts", import.meta.url));

exitOnSignals();
await using cluster = await LocalCluster.start();
const folder = await Deno.makeTempDir({ prefix: "kopf-bench-first-request-" });
await using _folder = { [Symbol.asyncDispose]: () => Deno.remove(folder, { recursive: true }) };
const caFile = join(folder, "ca.pem");
await Deno.writeTextFile(caFile, cluster.caCert);

type Sample = { first: number; second: number; newConnection: number };
const samples: Record<"cold" | "warm", Sample[]> = { cold: [], warm: [] };
for (let round = 1; round <= rounds; round++) {
  for (const variant of ["cold", "warm"] as const) {
    const output = await new Deno.Command(Deno.execPath(), {
      args: ["run", "-A", probe, ...(variant === "warm" ? ["warm"] : [])],
      env: { RAW_SERVER: cluster.server, RAW_TOKEN: cluster.token, RAW_CA_FILE: caFile, DENO_NO_UPDATE_CHECK: "1" },
    }).output();
    const text = new TextDecoder().decode(output.stdout).trim();
    if (!output.success) throw new Error(`The probe failed: ${new TextDecoder().decode(output.stderr)}`);
    const sample = JSON.parse(text) as Sample;
    console.error(`[round ${round}, ${variant}] ${text}`);
    samples[variant].push(sample);
  }
}

console.log(`\nMedians of ${rounds} fresh processes each, ms.\n`);
console.log("| request | without the warm-up | with it |");
console.log("|---|--:|--:|");
for (const key of ["first", "second", "newConnection"] as const) {
  const label =
    { first: "the first", second: "the second, same client", newConnection: "a second client's first" }[key];
  console.log(`| ${label} | ${median(samples.cold.map((s) => s[key]))} | ${median(samples.warm.map((s) => s[key]))} |`);
}
