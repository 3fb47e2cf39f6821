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
import { type Fault, FaultProxy, type Upstream } from "./fault_proxy.ts";
import { LivenessSampler } from "./liveness_sampler.ts";

/** What a scenario runs against. */
export interface FaultEnvironment {
  /** A client straight to the API server, for the churn and the checks. */
  client: ApiClient;
  /** A kubeconfig straight to the API server, for the operator. */
  kubeconfig: string;
  /** A folder for ledgers and logs (one subfolder per scenario). */
  directory: string;
  /** The API server behind a fault proxy, and the bearer token the operator uses through it. */
  upstream: Upstream & { token: string };
  /** Stops and starts the API server (a LocalCluster of the scenario's own: others would be hurt). */
  apiserver?: { stopApiserver(): Promise<void>; startApiserver(): Promise<void> };
  /**
   * `settings.watching.unhealthyAfter` for the operator, in seconds (the default 90 s when
   * absent): shorter than the faults, so that the liveness endpoint can tell during each one.
   */
  unhealthyAfter?: number;
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
  /**
   * Of those, the ones not explained by at-least-once delivery: a success is explained when its
   * process was SIGKILLed within {@linkcode STORING_WINDOW} ms after it, before its result could be
   * stored; any other second success is a defect.
   */
  unexplainedDuplicates: number;
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

/**
 * Milliseconds after a handler's success within which a SIGKILL may lose its result: the handlers
 * finished in a cycle that is still running are stored after about 1 s (issue 11.10), a fast
 * cycle's at its end; the rest is the patch's round trip.
 */
export const STORING_WINDOW = 2000;

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
  });
}

/** A span of a fault (ms since the epoch) and the recovery after it (s; `null` if never, within the bound). */
interface FaultSpan {
  from: number;
  to: number;
  recovery: Promise<number | null>;
}

/** The options of {@linkcode restarts}. */
export interface RestartOptions {
  /** How many restarts. */
  restarts: number;
  /** Seconds the API server is down each time. */
  down: number;
  /** Seconds it is up between two outages. */
  up: number;
  /** Objects of the churn. */
  objects: number;
}

/**
 * The API server stopped and started again `restarts` times during a churn of `objects` objects;
 * the churn pauses while the server is down (its requests are retried).
 */
export async function restarts(environment: FaultEnvironment, options: RestartOptions): Promise<FaultReport> {
  const apiserver = environment.apiserver;
  if (!apiserver) throw new Error("The restarts scenario needs an API server to restart (environment.apiserver).");
  // The creations span the outages: a little before the first one until a little after the last one.
  const span = options.restarts * (options.down + options.up);
  const pace = { objects: options.objects, interval: span / options.objects, updateAfter: 5, deleteAfter: 15 };
  return await scenario(environment, `restarts-${options.restarts}x`, pace, async (run) => {
    await sleep(5);
    for (let round = 0; round < options.restarts; round++) {
      const from = Date.now();
      await apiserver.stopApiserver();
      await sleep(Math.max(0, options.down - (Date.now() - from) / 1000));
      await apiserver.startApiserver();
      run.ended(from);
      await sleep(options.up);
    }
  }, { unhealthyAfter: environment.unhealthyAfter });
}

/** The options of {@linkcode kills}. */
export interface KillOptions {
  /** How many SIGKILLs. */
  kills: number;
  /** Objects of the churn. */
  objects: number;
  /** The longest pause between a restart and the next kill, in seconds (the pause is random, at least 2 s). */
  spacing: number;
}

/**
 * The operator SIGKILLed `kills` times at random moments of a churn of `objects` objects, and
 * started again after 2–4 s each time (as Kubernetes restarts a container): the fault is the
 * time it is down.
 */
export async function kills(environment: FaultEnvironment, options: KillOptions): Promise<FaultReport> {
  const span = options.kills * (options.spacing / 2 + 4);
  const pace = { objects: options.objects, interval: span / options.objects, updateAfter: 3, deleteAfter: 8 };
  return await scenario(environment, `sigkill-${options.kills}x`, pace, async (run) => {
    for (let kill = 0; kill < options.kills; kill++) {
      await sleep(2 + Math.random() * (options.spacing - 2));
      const from = Date.now();
      await run.operator.kill("SIGKILL");
      await sleep(2 + Math.random() * 2);
      await run.operator.start();
      run.ended(from);
    }
  }, { unhealthyAfter: environment.unhealthyAfter });
}

/** The options of {@linkcode proxied}. */
export interface ProxyFaultOptions {
  /** The scenario's name in the table. */
  name: string;
  /** What the proxy does during the fault. */
  fault: Fault;
  /** Seconds the fault lasts. */
  seconds: number;
  /** Objects of the churn (created from 10 s before the fault until 10 s after it). */
  objects: number;
}

/**
 * The operator connects through a fault proxy, which injects the fault for `seconds` during the
 * churn, then forwards again. The churn itself goes straight to the API server.
 */
export async function proxied(environment: FaultEnvironment, options: ProxyFaultOptions): Promise<FaultReport> {
  await using proxy = await FaultProxy.start(environment.upstream);
  const kubeconfig = await proxy.writeKubeconfig(environment.upstream.token);
  const pace = {
    objects: options.objects,
    interval: (options.seconds + 20) / options.objects,
    updateAfter: 3,
    deleteAfter: 8,
  };
  try {
    return await scenario(environment, options.name, pace, async (run) => {
      await sleep(10);
      const from = Date.now();
      proxy.set(options.fault);
      await sleep(options.seconds);
      proxy.set({ kind: "forward" });
      run.ended(from);
      const requests = proxy.count({ watch: true, from, to: Date.now() });
      run.notes.push(
        `${options.name}: ${requests} watch requests reached the proxy during the ${options.seconds} s of the fault.`,
      );
    }, { kubeconfig, unhealthyAfter: environment.unhealthyAfter });
  } finally {
    await Deno.remove(kubeconfig);
  }
}

/** What a scenario's fault phase works with. */
interface ScenarioRun {
  operator: FaultOperator;
  churn: Churn;
  liveness: LivenessSampler;
  notes: string[];
  /**
   * Declares a fault over: from `from` until now. A probe object is created at once, and the
   * recovery is measured in the background (the next fault may begin meanwhile): until every
   * step of the churn taken before the probe, and the probe's creation, is handled.
   */
  ended(from: number): void;
}

/**
 * Runs a scenario: a fresh namespace, the operator (started and healthy), the churn and the
 * sampler; then the fault phase; then waits until the churn is handled and counts.
 */
async function scenario(
  environment: FaultEnvironment,
  name: string,
  pace: Pick<ChurnOptions, "interval" | "updateAfter" | "deleteAfter" | "objects">,
  faults: (run: ScenarioRun) => Promise<void>,
  operatorOptions: { kubeconfig?: string; unhealthyAfter?: number } = {},
): Promise<FaultReport> {
  const { client } = environment;
  const print = environment.print ?? (() => {});
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
  const spans: FaultSpan[] = [];
  const ended = (from: number) => {
    const to = Date.now();
    const recovery = (async () => {
      const probe = await churn.add(`probe-${spans.length}`);
      const moment = await churn.settled(probe.created + 1, SETTLE_SECONDS);
      return moment === null ? null : (moment - to) / 1000;
    })();
    spans.push({ from, to, recovery });
    print(`${name}: fault ${spans.length} over after ${((to - from) / 1000).toFixed(1)} s.`);
  };
  await faults({ operator, churn, liveness, notes, ended });
  const recoveries = await Promise.all(spans.map((span) => span.recovery));
  const last = spans.at(-1)?.to ?? Date.now();
  // Every object's life to its end, then the deletions still in flight: the counts are final.
  let timer: ReturnType<typeof setTimeout> | undefined;
  const bound = new Promise((resolve) => timer = setTimeout(resolve, SETTLE_SECONDS * 1000));
  await Promise.race([churn.finished(), bound]);
  clearTimeout(timer);
  await churn.stop();
  await churn.settled(Infinity, SETTLE_SECONDS);
  const healthy = spans.length ? await liveness.healthyAfter(last, 120) : null;
  const tally = await churn.tally();
  let unexplainedDuplicates = 0;
  for (const { object, completions } of churn.duplicates()) {
    const first = completions[0];
    const kill = operator.kills.find((kill) => kill.pid === first.pid);
    const lost = kill !== undefined && kill.at >= first.at && kill.at - first.at <= STORING_WINDOW;
    if (!lost) unexplainedDuplicates++;
    const when = kill ? `its process was SIGKILLed ${kill.at - first.at} ms after it` : "its process was not killed";
    notes.push(
      `${name}: ${object.name}'s create handler succeeded ${completions.length}×; after the first one ${when}` +
        (lost ? " (at-least-once: the result was lost with the process)." : " — A DEFECT."),
    );
  }
  if (spans.length) {
    notes.push(
      `${name}: recovery per fault (s): ${recoveries.map((r) => r === null ? "never" : r.toFixed(1)).join(", ")}.`,
    );
    const blind = spans.filter((span) => !liveness.unhealthyWithin(span.from, span.to)).length;
    if (blind) notes.push(`${name}: the liveness endpoint stayed 200 during ${blind} of ${spans.length} faults.`);
  }
  notes.push(`${name}: ${await logLevels(operator.log)}; log and ledger in ${directory}.`);
  return {
    scenario: name,
    objects: tally.objects,
    missed: tally.unhandledCreations + tally.unhandledUpdates,
    duplicates: tally.duplicatedCreations,
    unexplainedDuplicates,
    stuck: tally.undeleted,
    recovery: spans.length ? (recoveries.includes(null) ? null : Math.max(...(recoveries as number[]))) : null,
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

function sleep(seconds: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, seconds * 1000));
}

function mib(bytes: number): string {
  return (bytes / 1024 / 1024).toFixed(1);
}
