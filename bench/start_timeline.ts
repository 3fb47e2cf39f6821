/**
 * Where the start of `kopf run` goes: for each round, one object created in a fresh namespace,
 * then `deno run` of the CLI spawned as bench/compare.ts spawns ours (bench/fixtures/compare_create.ts,
 * the production V8 flags) with `--debug --log-format=json`; the milestones are read from the
 * timestamps of its log lines, in ms after the spawn: its first line (the modules loaded, the
 * startup handlers run), the first request sent (discovery), the first request of kopfexamples (a
 * LIST, or the watch that streams the listing: `settings.watching.streamingLists`), its watch sent,
 * the object's handler done. With `--before DIR`, the
 * CLI of another checkout (`git worktree add DIR COMMIT`) runs in the same rounds, interleaved.
 *
 * The bench's clock and the operator's log timestamps are both the machine's wall clock (ms).
 *
 * Usage: `deno run -A bench/start_timeline.ts [--rounds 5] [--before DIR] [--storage default|lean]`
 *
 * @module
 */

import { commandLine, usageError } from "./command_line.ts";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { LocalCluster } from "../testing.ts";
import { OPERATOR_V8_FLAGS } from "../cli/build.ts";
import { exitOnSignals } from "./exit_on_signals.ts";
import { ApiClient } from "../src/api/client.ts";
import { loadKubeconfig } from "../src/api/kubeconfig.ts";
import { prepareExamples } from "./example_namespace.ts";
import { median } from "./process_stats.ts";
import { roundOrder } from "./round_order.ts";

const { values } = commandLine({
  options: {
    rounds: { type: "string", default: "5" },
    before: { type: "string" },
    storage: { type: "string", default: "default" },
  },
});
const rounds = Number(values.rounds);
if (!(rounds >= 1)) usageError(`--rounds takes a number of rounds, 1 or more; got ${values.rounds}.`);
if (!["default", "lean"].includes(values.storage)) {
  usageError(`--storage takes default or lean; got ${values.storage}.`);
}
const root = fileURLToPath(new URL("..", import.meta.url));
const checkouts: Record<string, string> = { ours: root, ...(values.before ? { before: values.before } : {}) };

/** The milestones, by the text of the log line that marks each (the first line that matches). */
const MILESTONES: readonly { name: string; line: RegExp }[] = [
  { name: "first line", line: /./ },
  { name: "first request sent", line: /^Sending GET / },
  { name: "listing sent", line: /^Sending GET \/apis\/kopf\.dev\/v1\/namespaces\/[^/]+\/kopfexamples\?/ },
  { name: "watch sent", line: /^Sending GET \/apis\/kopf\.dev\/v1\/namespaces\/[^/]+\/kopfexamples\?.*watch=true/ },
  { name: "object handled", line: /^Handler 'done' succeeded/ },
];

exitOnSignals();
await using cluster = await LocalCluster.start();
using client = new ApiClient(await loadKubeconfig({ path: cluster.kubeconfig }));
await prepareExamples(client, "bench-start");

const results = new Map<string, Map<string, number[]>>();
for (let round = 1; round <= rounds; round++) {
  const names = Object.keys(checkouts);
  const order = roundOrder(names, round);
  for (const name of order) {
    const times = await oneStart(checkouts[name], `start-${name}-${round}`);
    console.error(`[round ${round}, ${name}] ${MILESTONES.map((m) => `${m.name} ${times.get(m.name)} ms`).join(", ")}`);
    const byMilestone = results.get(name) ?? new Map<string, number[]>();
    for (const [milestone, ms] of times) byMilestone.set(milestone, [...byMilestone.get(milestone) ?? [], ms]);
    results.set(name, byMilestone);
  }
}

const names = [...results.keys()];
console.log(`\nMedians of ${rounds} round(s), ms after the spawn (storage: ${values.storage}).\n`);
console.log(`| milestone | ${names.join(" | ")} |${names.includes("before") ? " ours − before |" : ""}`);
console.log(`|---|${names.map(() => "--:|").join("")}${names.includes("before") ? "--:|" : ""}`);
for (const { name: milestone } of MILESTONES) {
  const cells = names.map((name) => median(results.get(name)!.get(milestone)!));
  const delta = names.includes("before") ? ` ${cells[0] - cells[names.indexOf("before")]} |` : "";
  console.log(`| ${milestone} | ${cells.join(" | ")} |${delta}`);
}

/** Spawns the operator of a checkout over one pre-created object; returns each milestone's ms after the spawn. */
async function oneStart(checkout: string, namespace: string): Promise<Map<string, number>> {
  await client.request({ method: "POST", path: "/api/v1/namespaces", body: { metadata: { name: namespace } } });
  await client.request({
    method: "POST",
    path: `/apis/kopf.dev/v1/namespaces/${namespace}/kopfexamples`,
    body: { apiVersion: "kopf.dev/v1", kind: "KopfExample", metadata: { name: "existing" }, spec: {} },
  });
  const spawned = Date.now();
  const child = new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "-A",
      OPERATOR_V8_FLAGS,
      `--config=${join(checkout, "deno.json")}`,
      "cli/main.ts",
      "run",
      "--standalone",
      "--debug",
      "--log-format=json",
      "-n",
      namespace,
      join(root, "bench/fixtures/compare_create.ts"),
    ],
    cwd: checkout,
    env: { KUBECONFIG: cluster.kubeconfig, DENO_NO_UPDATE_CHECK: "1", KOPF_BENCH_STORAGE: values.storage },
    stdout: "piped",
    stderr: "null",
  }).spawn();
  const times = new Map<string, number>();
  // An operator that never gets there is stopped, and the round fails below with what it missed.
  const deadline = setTimeout(() => child.kill("SIGKILL"), 60_000);
  const lines = child.stdout.pipeThrough(new TextDecoderStream());
  let pending = "";
  let stopping = false;
  for await (const chunk of lines) {
    const parts = (pending + chunk).split("\n");
    pending = parts.pop()!;
    for (const text of parts) {
      const record = parseRecord(text);
      if (!record) continue;
      for (const milestone of MILESTONES) {
        if (!times.has(milestone.name) && milestone.line.test(record.message)) {
          times.set(milestone.name, Date.parse(record.timestamp) - spawned);
        }
      }
    }
    if (!stopping && times.size === MILESTONES.length) {
      stopping = true;
      child.kill("SIGTERM");
    }
  }
  const status = await child.status;
  clearTimeout(deadline);
  if (times.size < MILESTONES.length) {
    const missing = MILESTONES.filter((m) => !times.has(m.name)).map((m) => m.name);
    throw new Error(`The operator of ${checkout} exited (code ${status.code}) before: ${missing.join(", ")}.`);
  }
  return times;
}

/** One JSON log line's message and timestamp; `undefined` for other output. */
function parseRecord(text: string): { message: string; timestamp: string } | undefined {
  try {
    const record = JSON.parse(text);
    return typeof record?.message === "string" && typeof record?.timestamp === "string" ? record : undefined;
  } catch {
    return undefined;
  }
}
