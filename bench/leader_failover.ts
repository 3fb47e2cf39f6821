/**
 * Leader fail-over times: starts a LocalCluster and three `kopf run --leader-elect` replicas on
 * `tests/fixtures/replicas/handlers.ts`, then, for each round, kills the leader (SIGKILL: no
 * release) and stops the next one gracefully (SIGTERM: it releases the Lease). For each, it
 * measures the time from the signal until another replica holds the Lease, and until an object
 * created at the moment of the signal has been handled (its `status.createFn`). The stopped
 * replica is started again after each measurement, so that three are always running.
 *
 * Usage: `deno run -A bench/leader_failover.ts [--rounds 3] [--settle 0] [--peering] [--lease-duration 15]
 * [--renew-deadline 10] [--retry-period 2]` (the durations' defaults are controller-runtime's).
 * `--peering` applies the peering CRDs and creates the namespace's `KopfPeering` `default` first,
 * so that the replicas peer (not standalone) as they do where Kopf's CRDs are installed.
 * The first round begins as soon as a leader is elected, unless `--settle SECONDS` waits first
 * (the later rounds begin 5 s after the previous one).
 *
 * @module
 */

import { commandLine } from "./command_line.ts";
import { LocalCluster } from "../testing.ts";
import { exitOnSignals } from "./exit_on_signals.ts";
import { ApiClient } from "../src/api/client.ts";
import { loadKubeconfig } from "../src/api/kubeconfig.ts";
import type { KubernetesObject } from "../src/model/body.ts";
import { prepareExamples, preparePeering } from "./example_namespace.ts";

const { values } = commandLine({
  options: {
    rounds: { type: "string", default: "3" },
    settle: { type: "string", default: "0" },
    peering: { type: "boolean", default: false },
    "lease-duration": { type: "string", default: "15" },
    "renew-deadline": { type: "string", default: "10" },
    "retry-period": { type: "string", default: "2" },
  },
});
const rounds = Number(values.rounds);
const root = new URL("..", import.meta.url);
const namespace = "bench";
const lease = "kopf-bench";
const leasePath = `/apis/coordination.k8s.io/v1/namespaces/${namespace}/leases/${lease}`;
const collection = `/apis/kopf.dev/v1/namespaces/${namespace}/kopfexamples`;

exitOnSignals();
await using cluster = await LocalCluster.start();
const client = new ApiClient(await loadKubeconfig({ path: cluster.kubeconfig }));
await prepareExamples(client, namespace);
if (values.peering) await preparePeering(client, namespace);

const replicas = new Map<string, Deno.ChildProcess>();
function startReplica(identity: string): void {
  const child = new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "-A",
      "cli/main.ts",
      "run",
      "-q",
      "-n",
      namespace,
      "--leader-elect",
      `--leader-elect-resource-name=${lease}`,
      `--leader-elect-resource-namespace=${namespace}`,
      `--leader-elect-lease-duration=${values["lease-duration"]}`,
      `--leader-elect-renew-deadline=${values["renew-deadline"]}`,
      `--leader-elect-retry-period=${values["retry-period"]}`,
      "tests/fixtures/replicas/handlers.ts",
    ],
    cwd: root.pathname,
    env: { KUBECONFIG: cluster.kubeconfig, POD_ID: identity, NO_COLOR: "1" },
    stdin: "null",
    stdout: "null",
    stderr: "null",
  }).spawn();
  replicas.set(identity, child);
}

async function holder(): Promise<string> {
  try {
    const body = await client.request<KubernetesObject>({ path: leasePath });
    return (body.spec as { holderIdentity?: string } | undefined)?.holderIdentity ?? "";
  } catch {
    return "";
  }
}

async function handled(name: string): Promise<boolean> {
  const body = await client.request<KubernetesObject>({ path: `${collection}/${name}` });
  return (body.status as Record<string, unknown> | undefined)?.createFn !== undefined;
}

/** Polls every 20 ms until the check is true; resolves with the moment it was. */
async function poll(check: () => Promise<boolean>, seconds = 120): Promise<number> {
  const deadline = performance.now() + seconds * 1000;
  for (;;) {
    try {
      if (await check()) return performance.now();
    } catch {
      // Not yet.
    }
    if (performance.now() > deadline) throw new Error("Timed out: the replicas do not fail over.");
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** Stops the leader with a signal; returns the seconds until a new holder and until a new object is handled. */
async function failover(signal: Deno.Signal, round: number): Promise<[number, number]> {
  const leader = await holder();
  const object = `${signal.toLowerCase()}-${round}`;
  const start = performance.now();
  replicas.get(leader)!.kill(signal);
  await client.request({
    method: "POST",
    path: collection,
    body: { apiVersion: "kopf.dev/v1", kind: "KopfExample", metadata: { name: object } },
  });
  const [taken, done] = await Promise.all([
    poll(async () => !["", leader].includes(await holder())),
    poll(() => handled(object)),
  ]);
  await replicas.get(leader)!.status;
  startReplica(leader);
  return [(taken - start) / 1000, (done - start) / 1000];
}

for (const identity of ["replica-1", "replica-2", "replica-3"]) startReplica(identity);
try {
  await poll(async () => (await holder()) !== "");
  // With --settle, the first round starts as the others do: the leader has renewed a few times.
  await new Promise((resolve) => setTimeout(resolve, Number(values.settle) * 1000));
  const results: Record<string, [number, number][]> = { SIGKILL: [], SIGTERM: [] };
  for (let round = 1; round <= rounds; round++) {
    for (const signal of ["SIGKILL", "SIGTERM"] as const) {
      results[signal].push(await failover(signal, round));
      // Let the restarted replica come up as a standby before the next measurement.
      await new Promise((resolve) => setTimeout(resolve, 5000));
    }
  }
  const format = (values: number[]) => values.map((value) => value.toFixed(2)).join(", ");
  console.log(
    `Lease duration ${values["lease-duration"]} s, renew deadline ${values["renew-deadline"]} s, ` +
      `retry period ${values["retry-period"]} s; ${rounds} rounds; ` +
      (values.peering ? "peering on (KopfPeering default)." : "no peering CRDs."),
  );
  for (const [signal, what] of [["SIGKILL", "killed (no release)"], ["SIGTERM", "stopped gracefully (release)"]]) {
    const taken = results[signal].map(([seconds]) => seconds);
    const done = results[signal].map(([, seconds]) => seconds);
    console.log(`Leader ${what}: a new holder after ${format(taken)} s (max ${Math.max(...taken).toFixed(2)} s).`);
    console.log(
      `  An object created at the signal is handled after ${format(done)} s (max ${Math.max(...done).toFixed(2)} s).`,
    );
  }
} finally {
  for (const child of replicas.values()) {
    try {
      child.kill("SIGKILL");
    } catch {
      // Exited already.
    }
    await child.status;
  }
}
