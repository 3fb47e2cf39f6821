/**
 * Part 2 of bench/sharding.ts: memory and bandwidth. Over a namespace of small objects: a group of
 * replicas that the API server filters for, the same group filtering client-side, and one
 * unsharded replica; and each kind of replica warm over a few objects (the baseline: its code loaded
 * and compiled by handling some, which an idle replica never does). For each replica: its
 * resident memory once every object is handled and it has run its idle collection, the bytes it
 * received from the API server (its lists and watches, through its own counting proxy), and what
 * it gives back when its objects are deleted.
 *
 * @module
 */

import { Tracker } from "./compare_tracker.ts";
import { anonymousRss, median, mib, rss } from "./process_stats.ts";
import type { ReceivedBytes } from "./counting_proxy.ts";
import type { Replica } from "./sharded_replica.ts";
import {
  type Bench,
  deleteObjects,
  groupFormed,
  guard,
  handledBy,
  isHandled,
  namespaceWithObjects,
  RESULTS_LOST,
  resultsSettled,
  startReplicas,
  stopReplicas,
  type Table,
} from "./sharding_runs.ts";

/** What part 2 runs. */
export interface MemoryOptions {
  readonly objects: number;
  /** The size of the sharded groups. */
  readonly replicas: number;
  /** Seconds of RSS samples (one a second) after the objects are handled; the median counts. */
  readonly settle: number;
}

interface Variant {
  readonly label: string;
  readonly replicas: number;
  readonly objects: number;
  readonly group?: string;
  readonly serverSide?: "never";
  /** Whether its objects are deleted once handled, before its memory is read (the warm baselines). */
  readonly forget?: boolean;
  /** The label of the warm variant whose memory is this one's baseline. */
  readonly baseline: string;
}

interface Outcome {
  readonly variant: Variant;
  readonly serverSide: string;
  readonly shares: string;
  readonly resultsLost: number;
  readonly rss: readonly number[];
  /** The part of each replica's RSS that no file backs (not the runtime's code). */
  readonly anonymous: readonly number[];
  /** Each replica's V8 heap in use after a full collection, read after the RSS samples. */
  readonly heap: readonly number[];
  /** How much of each replica's live heap is compiled code. */
  readonly code: readonly number[];
  /** Seconds from the objects settled to each replica's idle collection; `undefined`: none within the wait. */
  readonly collected: readonly (number | undefined)[];
  /** Each replica's RSS once its objects were deleted and it collected again (not for the warm baselines). */
  readonly forgotten?: readonly number[];
  readonly received: readonly ReceivedBytes[];
}

/**
 * Objects a baseline replica handles and then sees deleted: enough for V8 to load and optimise
 * what handling needs (its optimising compilers' own code and buffers: 2–3 MiB of the deno binary
 * and of malloc that 30 objects left untouched, the same for any count above), while the objects
 * themselves are forgotten, so that what the baseline holds is the replica's fixed part only.
 */
const WARM_OBJECTS = 1000;
/** Seconds the bench waits for a replica's idle collection after its objects settled or were deleted. */
const COLLECTION_WAIT = 60;
/** RSS samples (one a second) of a replica whose objects were deleted. */
const FORGOTTEN_SAMPLES = 5;
const WARM = `warm (${WARM_OBJECTS} objects handled, then deleted), unsharded`;
const WARM_SHARDED = `warm (${WARM_OBJECTS} objects handled, then deleted), sharded (group of 1)`;

/** Runs the warm replicas, the two sharded groups and the unsharded replica; one row each. */
export async function memory(bench: Bench, options: MemoryOptions, say: (text: string) => void): Promise<Table> {
  const outcomes = new Map<string, Outcome>();
  for (const variant of variantsOf(options)) {
    say(`memory: ${variant.label}: creating ${variant.objects} objects`);
    const outcome = await run(bench, variant, options.settle);
    outcomes.set(variant.label, outcome);
    const heaps = outcome.heap.map(mib).join(" / ");
    say(`memory: ${variant.label}: RSS ${outcome.rss.map(mib).join(" / ")} MiB, live heap ${heaps} MiB`);
  }
  return {
    title: `Memory and bandwidth: ${options.objects} small objects, groups of ${options.replicas}`,
    headers: HEADERS,
    rows: rowsOf(outcomes),
    notes: notesOf(options.settle),
  };
}

/** The replicas part 2 runs, in order: each warm baseline before the replicas measured against it. */
function variantsOf({ objects, replicas }: MemoryOptions): Variant[] {
  return [
    { label: WARM, replicas: 1, objects: WARM_OBJECTS, forget: true, baseline: WARM },
    {
      label: WARM_SHARDED,
      replicas: 1,
      objects: WARM_OBJECTS,
      group: "warm",
      forget: true,
      baseline: WARM_SHARDED,
    },
    { label: "sharded, server-side", replicas, objects, group: "server", baseline: WARM_SHARDED },
    {
      label: "sharded, client-side",
      replicas,
      objects,
      group: "client",
      serverSide: "never",
      baseline: WARM_SHARDED,
    },
    { label: "unsharded", replicas: 1, objects, baseline: WARM },
  ];
}

const HEADERS = [
  "replicas",
  "server filters",
  "objects handled (each)",
  "results lost",
  "idle collection, s after settled (each)",
  "RSS MiB (each)",
  "above warm MiB (mean)",
  "above warm vs unsharded",
  "anonymous MiB (each)",
  "anonymous above warm vs unsharded",
  "live heap MiB (each)",
  "live above warm vs unsharded",
  "of which code MiB (each)",
  "live data above warm vs unsharded",
  "RSS once its objects were deleted MiB (each)",
  "held for the objects MiB (mean)",
  "held vs unsharded",
  "lists+watches received MiB (each)",
  "vs unsharded",
  "all received MiB (each)",
];

/** A row per replica run, its figures above its warm baseline also as a share of the unsharded replica's. */
function rowsOf(outcomes: ReadonlyMap<string, Outcome>): string[][] {
  const unsharded = outcomes.get("unsharded")!;
  const unshardedAbove = aboveWarm(unsharded, outcomes);
  const unshardedHeld = held(unsharded)!;
  const share = (value: number, of: number) => `${(value / of * 100).toFixed(0)}%`;
  return [...outcomes.values()].map((outcome) => {
    const above = aboveWarm(outcome, outcomes);
    const baseline = outcome.variant.baseline === outcome.variant.label;
    return [
      `${outcome.variant.label} ×${outcome.variant.replicas}`,
      outcome.serverSide,
      outcome.shares,
      String(outcome.resultsLost),
      outcome.collected.map((seconds) => seconds === undefined ? "none" : seconds.toFixed(1)).join(" / "),
      outcome.rss.map(mib).join(" / "),
      baseline ? "–" : mib(above.rss),
      baseline ? "–" : share(above.rss, unshardedAbove.rss),
      outcome.anonymous.map(mib).join(" / "),
      baseline ? "–" : share(above.anonymous, unshardedAbove.anonymous),
      outcome.heap.map(mib).join(" / "),
      baseline ? "–" : share(above.live, unshardedAbove.live),
      outcome.code.map(mib).join(" / "),
      baseline ? "–" : share(above.data, unshardedAbove.data),
      outcome.forgotten?.map(mib).join(" / ") ?? "–",
      outcome.forgotten ? mib(held(outcome)!) : "–",
      outcome.forgotten ? share(held(outcome)!, unshardedHeld) : "–",
      outcome.received.map((bytes) => mib(streamed(bytes))).join(" / "),
      share(mean(outcome.received.map(streamed)), mean(unsharded.received.map(streamed))),
      outcome.received.map((bytes) => mib(streamed(bytes) + bytes.other)).join(" / "),
    ];
  });
}

/** What the table's figures mean, printed under it. */
function notesOf(settle: number): string[] {
  return [
    `RSS: the median of ${settle} samples (one a second), begun once every object was handled and its ` +
    "result written (the warm replicas: their objects then deleted) and the replica had run its idle collection " +
    `after that (idle collection: how long after; none: not within ${COLLECTION_WAIT} s, sampled then). ` +
    "Above warm: the mean RSS minus that of the warm replica of the same kind. Anonymous: the RSS that " +
    "no file backs (without the pages of the deno binary's code that the replica has run). Live heap: V8's heap in use right after a full collection (a preloaded " +
    "probe, bench/fixtures/memory_probe.ts), read after the samples: what the replica holds, whatever the peak " +
    "its heap grew to; live data: without the compiled code (V8's code spaces), which grows with the code " +
    "paths run, not with the objects. Received: the response bodies the API server sent the replica through an " +
    "HTTPS proxy of its own, from its spawn to the last sample: the lists and watches of kopfexamples (every " +
    "re-list when the ranges changed included), and all (plus the answers to its patches, its Lease renewals, " +
    "discovery). Shares of a group of N ideally 1/N each. Once its objects were deleted: the same replica after the " +
    `deletions and its idle collection (the median of ${FORGOTTEN_SAMPLES} samples); held for the objects: its RSS ` +
    "before minus after, which leaves out what a replica keeps whether it has objects or not (its runtime, the " +
    "code its bursts compiled, allocator pages).",
    RESULTS_LOST,
  ];
}

/** A replica's means above those of its warm baseline: RSS, anonymous RSS, live heap, and the live heap's data. */
function aboveWarm(
  outcome: Outcome,
  outcomes: ReadonlyMap<string, Outcome>,
): { rss: number; anonymous: number; live: number; data: number } {
  const warm = outcomes.get(outcome.variant.baseline)!;
  return {
    rss: mean(outcome.rss) - mean(warm.rss),
    anonymous: mean(outcome.anonymous) - mean(warm.anonymous),
    live: mean(outcome.heap) - mean(warm.heap),
    data: liveData(outcome) - liveData(warm),
  };
}

/** The live heap without the compiled code: what the replica holds as data. */
function liveData(outcome: Outcome): number {
  return mean(outcome.heap) - mean(outcome.code);
}

/** What deleting its objects gave back: the memory the replica held for them (the warm baselines: `undefined`). */
function held(outcome: Outcome): number | undefined {
  return outcome.forgotten && mean(outcome.rss) - mean(outcome.forgotten);
}

function mean(values: readonly number[]): number {
  return values.reduce((sum, value) => sum + value, 0) / values.length;
}

async function run(bench: Bench, variant: Variant, settle: number): Promise<Outcome> {
  const { client } = bench;
  const namespace = await namespaceWithObjects(client, "memory", variant.objects);
  await using tracker = await Tracker.start(client, namespace);
  const replicas = await startReplicas(bench, namespace, variant.replicas, {
    group: variant.group,
    env: variant.serverSide ? { KOPF_BENCH_SERVER_SIDE: variant.serverSide } : {},
    count: true,
    probe: true,
  });
  try {
    await groupFormed(replicas, variant.group !== undefined);
    if (variant.objects) {
      await guard(tracker.until(isHandled, variant.objects), replicas);
      await guard(resultsSettled(tracker, variant.objects), replicas);
    }
    const handled = await handledBy(client, namespace);
    let since = await collections(replicas);
    if (variant.forget) {
      await deleteObjects(client, namespace);
      await guard(tracker.untilEmpty(), replicas);
      since = await collections(replicas);
    }
    const collected = await guard(collectedAgain(replicas, since), replicas);
    const samples = await guard(sample(replicas, settle), replicas);
    const heaps = await guard(Promise.all(replicas.map((replica) => replica.liveHeap())), replicas);
    const received = replicas.map((replica) => ({ ...replica.proxy!.received }));
    let forgotten: number[] | undefined;
    if (!variant.forget && variant.objects) {
      const before = await collections(replicas);
      await deleteObjects(client, namespace);
      await guard(tracker.untilEmpty(), replicas);
      await guard(collectedAgain(replicas, before), replicas);
      forgotten = (await guard(sample(replicas, FORGOTTEN_SAMPLES), replicas)).rss;
    }
    const report = await replicas[0].sharding();
    return {
      variant,
      serverSide: report ? (report.serverSide ? "yes" : "no") : "–",
      shares: variant.objects ? replicas.map((replica) => handled.byReplica.get(replica.id) ?? 0).join(" / ") : "–",
      resultsLost: handled.resultsLost,
      rss: samples.rss,
      anonymous: samples.anonymous,
      heap: heaps.map((heap) => heap.used),
      code: heaps.map((heap) => heap.code),
      collected,
      forgotten,
      received,
    };
  } finally {
    await stopReplicas(replicas);
    if (variant.objects) await deleteObjects(client, namespace);
  }
}

/** The body bytes of the lists and watches of the objects' resource. */
function streamed(bytes: ReceivedBytes): number {
  return bytes.list + bytes.watch;
}

/** Each replica's median RSS and anonymous RSS over `settle` seconds, one sample a second. */
async function sample(
  replicas: readonly Replica[],
  settle: number,
): Promise<{ rss: number[]; anonymous: number[] }> {
  const resident = replicas.map(() => [] as number[]);
  const anonymous = replicas.map(() => [] as number[]);
  for (let second = 0; second < settle; second++) {
    await new Promise((resolve) => setTimeout(resolve, 1000));
    for (const [index, replica] of replicas.entries()) {
      resident[index].push(await rss(replica.pid));
      anonymous[index].push(await anonymousRss(replica.pid));
    }
  }
  return { rss: resident.map(median), anonymous: anonymous.map(median) };
}

/** How many idle collections each replica has run so far (a replica that does not answer counts as none). */
async function collections(replicas: readonly Replica[]): Promise<number[]> {
  return await Promise.all(replicas.map(async (replica) => await replica.idleCollections() ?? 0));
}

/**
 * Waits until each replica has run an idle collection since `since` (its counts then), at most
 * {@linkcode COLLECTION_WAIT} seconds: its memory is read once it has given back what the burst
 * left, whenever that is (its stream may still be reading the last events when the bench sees them
 * settled). Returns the seconds each waited; `undefined` for one that did not collect in time.
 */
async function collectedAgain(replicas: readonly Replica[], since: readonly number[]): Promise<(number | undefined)[]> {
  const started = performance.now();
  const waited: (number | undefined)[] = replicas.map(() => undefined);
  while (performance.now() - started < COLLECTION_WAIT * 1000) {
    const now = await collections(replicas);
    for (const index of replicas.keys()) {
      if (waited[index] === undefined && now[index] > since[index]) {
        waited[index] = (performance.now() - started) / 1000;
      }
    }
    if (waited.every((seconds) => seconds !== undefined)) break;
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
  return waited;
}
