/**
 * The scenarios of the fault suite, shared by bench/faults.ts (long runs, a printed table) and
 * tests/faults_test.ts (short runs with assertions): an operator process
 * (tests/support/fault_operator.ts) under a churn of objects (tests/support/churn.ts) while a fault
 * is injected, its liveness endpoint sampled throughout (tests/support/liveness_sampler.ts).
 *
 * Each scenario reports what a user would ask after the fault: objects missed (a create or update
 * handler that never succeeded), duplicated completions (a create handler that succeeded twice for
 * one object), stuck objects (deleted but still there), the time to recover (from the end of the
 * fault until every step of the churn taken before it is handled), and what the liveness endpoint
 * said during and after the fault.
 *
 * @module
 */

import type { ApiClient } from "../../src/api/client.ts";
import { rss } from "../../bench/process_stats.ts";
import { freshNamespace } from "./cluster.ts";
import { Churn, type ChurnOptions } from "./churn.ts";
import { FaultOperator } from "./fault_operator.ts";
import { LivenessSampler } from "./liveness_sampler.ts";

/** What a scenario runs against. */
export interface FaultEnvironment {
  /** A client straight to the API server, for the churn and the checks. */
  client: ApiClient;
  /** A kubeconfig straight to the API server, for the operator. */
  kubeconfig: string;
  /** A folder for ledgers and logs (one subfolder per scenario). */
  directory: string;
  /** Progress lines (the bench prints them; tests drop them). */
  print?: (line: string) => void;
}

/** What a scenario found. */
export interface FaultReport {
  /** The scenario's name, as in the table. */
  scenario: string;
  /** Objects created by the churn. */
  objects: number;
  /** Objects whose create or update handler never succeeded. */
  missed: number;
  /** Objects whose create handler succeeded more than once. */
  duplicates: number;
  /** Objects deleted but still there at the end (held by the finalizer). */
  stuck: number;
  /**
   * Seconds from the end of the fault until every step of the churn taken before it was handled:
   * the longest over the scenario's faults; `null` if some never were.
   */
  recovery: number | null;
  /** Whether the liveness endpoint answered non-200 (or nothing) during every fault; `null`: not asked. */
  unhealthyDuring: boolean | null;
  /** Seconds after the end of the last fault until the endpoint answered 200 for good; `null`: never. */
  healthyAfter: number | null;
  /** Further findings, printed below the table. */
  notes: string[];
  /** The operator's log and ledger, for a look after a failure. */
  directory: string;
}

/** How long to wait for the churn to be handled after the last fault, at most. */
const SETTLE_SECONDS = 180;

/** The options of {@linkcode soak}. */
export interface SoakOptions {
  /** How long the churn runs. */
  minutes: number;
  /** RSS samples before this moment are the warm-up, left out of the summary. */
  warmupMinutes: number;
  /** Seconds between two RSS samples. */
  sampleSeconds: number;
}

/**
 * The soak: the operator under a steady churn (an object created every 2 s, changed at 10 s,
 * deleted at 40 s of age: about 20 live objects, each with a timer and a daemon), its RSS sampled
 * every `sampleSeconds` and printed as it goes; at the end, the RSS after the warm-up is summarised
 * and the churn's objects are counted.
 */
export async function soak(environment: FaultEnvironment, options: SoakOptions): Promise<FaultReport> {
  return await scenario(environment, "soak", { interval: 2, updateAfter: 10, deleteAfter: 40 }, async (run) => {
    const print = environment.print ?? (() => {});
    const samples: { minute: number; bytes: number }[] = [];
    const started = Date.now();
    const end = started + options.minutes * 60_000;
    while (Date.now() < end) {
      const bytes = await rss(run.operator.pid);
      const minute = (Date.now() - started) / 60_000;
      samples.push({ minute, bytes });
      print(`soak: ${minute.toFixed(1)} min  RSS ${mib(bytes)} MiB  objects ${run.churn.objects.length}`);
      await new Promise((resolve) => setTimeout(resolve, Math.min(options.sampleSeconds * 1000, end - Date.now())));
    }
    samples.push({ minute: (Date.now() - started) / 60_000, bytes: await rss(run.operator.pid) });
    const steady = samples.filter((sample) => sample.minute >= options.warmupMinutes);
    const series = samples.map((sample) => mib(sample.bytes)).join(" ");
    run.notes.push(`soak RSS series (MiB, every ${options.sampleSeconds} s): ${series}`);
    if (steady.length) {
      const values = steady.map((sample) => sample.bytes);
      const [low, high] = [Math.min(...values), Math.max(...values)];
      const within = high - low <= 10 * 1024 * 1024;
      run.notes.push(
        `soak RSS after the first ${options.warmupMinutes} min (${steady.length} samples): min ${mib(low)} MiB, ` +
          `max ${mib(high)} MiB, spread ${mib(high - low)} MiB — ` +
          `${within ? "within" : "NOT within"} ±5 MiB of ${mib((low + high) / 2)} MiB; ` +
          `first ${mib(values[0])} MiB, last ${mib(values.at(-1)!)} MiB.`,
      );
    } else {
      run.notes.push(`soak: no RSS sample after the warm-up of ${options.warmupMinutes} min.`);
    }
    if (run.liveness.unhealthyWithin(started, Date.now())) {
      const bad = run.liveness.samples.filter((sample) => sample.at >= started && sample.status !== 200);
      run.notes.push(`soak: the liveness endpoint answered non-200 ${bad.length}× during the churn.`);
    }
    await run.churn.stop();
    return { faults: [] };
  });
}

/** What a scenario's fault phase hands back: the faults' spans (ms since the epoch). */
interface FaultSpans {
  faults: { from: number; to: number }[];
}

/** What a scenario's fault phase works with. */
interface ScenarioRun {
  operator: FaultOperator;
  churn: Churn;
  liveness: LivenessSampler;
  notes: string[];
}

/**
 * Runs a scenario: a fresh namespace, the operator (started and healthy), the churn and the
 * sampler; then the fault phase; then waits until the churn is handled and counts.
 */
async function scenario(
  environment: FaultEnvironment,
  name: string,
  pace: Pick<ChurnOptions, "interval" | "updateAfter" | "deleteAfter" | "objects">,
  faults: (run: ScenarioRun) => Promise<FaultSpans>,
  operatorOptions: { kubeconfig?: string; unhealthyAfter?: number } = {},
): Promise<FaultReport> {
  const { client } = environment;
  const directory = `${environment.directory}/${name}`;
  await Deno.mkdir(directory, { recursive: true });
  const namespace = await freshNamespace(client, name.replace(/[^a-z0-9]+/g, "-"));
  await using operator = new FaultOperator({
    kubeconfig: operatorOptions.kubeconfig ?? environment.kubeconfig,
    namespace,
    directory,
    unhealthyAfter: operatorOptions.unhealthyAfter,
  });
  await operator.start();
  await using liveness = new LivenessSampler(operator.liveness);
  if (await liveness.healthyAfter(Date.now(), 120) === null) {
    throw new Error(`The operator is not healthy within 120 s; see ${operator.log}`);
  }
  await using churn = new Churn(client, { namespace, prefix: "kex", ledger: operator.ledger, ...pace });
  const notes: string[] = [];
  const { faults: spans } = await faults({ operator, churn, liveness, notes });
  await churn.created;
  const last = spans.at(-1)?.to ?? Date.now();
  const recoveries: number[] = [];
  let recovered = true;
  for (const span of spans) {
    const moment = await churn.settled(span.to, SETTLE_SECONDS);
    if (moment === null) recovered = false;
    else recoveries.push((moment - span.to) / 1000);
  }
  await churn.settled(Infinity, SETTLE_SECONDS);
  await churn.stop();
  const healthy = spans.length ? await liveness.healthyAfter(last, 120) : null;
  const tally = await churn.tally();
  notes.push(`${name}: ${await logLevels(operator.log)}; log and ledger in ${directory}.`);
  return {
    scenario: name,
    objects: tally.objects,
    missed: tally.unhandledCreations + tally.unhandledUpdates,
    duplicates: tally.duplicatedCreations,
    stuck: tally.undeleted,
    recovery: spans.length ? (recovered ? Math.max(...recoveries) : null) : null,
    unhealthyDuring: spans.length ? spans.every((span) => liveness.unhealthyWithin(span.from, span.to)) : null,
    healthyAfter: healthy === null ? null : Math.max(0, (healthy - last) / 1000),
    notes,
    directory,
  };
}

/** How many WARNING and ERROR lines the operator logged (the log level's column of its default format). */
async function logLevels(log: string): Promise<string> {
  const text = await Deno.readTextFile(log);
  const count = (level: string) => text.split("\n").filter((line) => line.includes(`[${level}`)).length;
  return `the operator logged ${count("WARNING")} WARNING and ${count("ERROR")} ERROR lines`;
}

function mib(bytes: number): string {
  return (bytes / 1024 / 1024).toFixed(1);
}
