/**
 * The figures of bench/compare.ts: samples per contestant and metric, printed as one Markdown
 * table of medians with the ratios of ours and lean to each peer compared (Kopf, the raw clients,
 * controller-runtime, kube-rs), and ours/before with `before`.
 *
 * @module
 */

import { type RequestTotals, writesOf } from "./apiserver_metrics.ts";
import type { ContestantName } from "./compare_contestants.ts";
import { median, mib } from "./process_stats.ts";

/** What the table is made of. */
export interface Layout {
  throughputSizes: number[];
  memorySizes: number[];
  burst: number;
  /** How many bursts came one after another (the last one's rows when more than one). */
  bursts: number;
  lifecycle: number;
  idleSeconds: number;
  restartAt: number;
  rounds: number;
}

interface Row {
  label: string;
  key: string;
  format: (value: number) => string;
}

const seconds = (value: number) => value.toFixed(2);
const rate = (value: number) => value.toFixed(0);
const milliseconds = (value: number) => (value * 1000).toFixed(2);
const perObject = (value: number) => value.toFixed(2);

/**
 * The operator's CPU per object over the API server's, round by round: a fresh process's CPU per object follows the
 * API server's from round to round (a slower server spreads a burst into a trickle, met with cold caches), so the
 * quotient spreads ~±5% where either alone spreads ~±25% (docs/performance/side-by-side.md, the six rounds of
 * 3166a1e against 26e4025).
 */
const SHARE_LABEL = "… operator CPU over kube-apiserver's and etcd's, per round";
const share = (value: number) => value.toFixed(3);

/**
 * The ratio columns, where both contestants are compared: each of our modes against Kopf, its own
 * limit (the raw client making the same writes: `raw2` for the default storages' two, `raw` for
 * lean's one), controller-runtime and kube-rs; ours/raw as well, the distance to the least possible; the
 * bundle (ours as the image of `kopf init` runs it) against Kopf and ours.
 */
const RATIOS: readonly (readonly [ContestantName, ContestantName])[] = [
  ["ours", "kopf"],
  ["ours", "raw"],
  ["ours", "raw2"],
  ["ours", "cr"],
  ["ours", "rs"],
  ["lean", "kopf"],
  ["lean", "raw"],
  ["lean", "cr"],
  ["lean", "rs"],
  ["lean", "floor"],
  ["floor", "raw"],
  ["bundle", "kopf"],
  ["bundle", "ours"],
];

/** The table's rows, in order; a row no contestant has samples of is left out when printed. */
function rowsOf(layout: Layout): Row[] {
  return [
    ...preCreatedRateRows(layout),
    ...burstRows(layout),
    ...lastBurstRows(layout),
    ...preCreatedCpuRows(layout),
    { label: "start-up CPU (first 10 s, no objects), s", key: "startupCpu", format: seconds },
    { label: "time from the spawn to the watch of kopfexamples open, s", key: "ready", format: seconds },
    ...memoryRows(layout),
    ...idleRows(layout),
    ...restartRows(layout),
    ...requestRows(layout),
  ];
}

/** The rows of the pre-created objects' handling: its rate, and its first object. */
function preCreatedRateRows(layout: Layout): Row[] {
  return [
    ...layout.throughputSizes.map((size) => ({
      label: `${size} pre-created objects, from the spawn to all handled: objects/s`,
      key: `rate:${size}`,
      format: rate,
    })),
    ...layout.throughputSizes.map((size) => ({
      label: `${size} pre-created: from the spawn to the first handled (as the bench's watch sees it), s`,
      key: `first:${size}`,
      format: seconds,
    })),
  ];
}

/** The rows of the (first) burst: the process fresh. */
function burstRows(layout: Layout): Row[] {
  return [
    { label: `${layout.burst} objects created while running: objects/s`, key: "burstRate", format: rate },
    { label: `… lag from the last POST to the last handled, s`, key: "burstLag", format: seconds },
    { label: `… operator CPU per object, ms`, key: "burstCpu", format: milliseconds },
    {
      label: `… kube-apiserver's and etcd's CPU per object (the bench's POSTs and watch too), ms`,
      key: "burstServerCpu",
      format: milliseconds,
    },
    { label: SHARE_LABEL, key: "share:burst", format: share },
  ];
}

/** The rows of the last of several bursts: the same process, warm by then. */
function lastBurstRows(layout: Layout): Row[] {
  return [
    {
      label: `the last of ${layout.bursts} bursts of ${layout.burst} (the process warm): objects/s`,
      key: "lastBurstRate",
      format: rate,
    },
    { label: "… lag from the last POST to the last handled, s", key: "lastBurstLag", format: seconds },
    { label: "… operator CPU per object, ms", key: "lastBurstCpu", format: milliseconds },
    { label: "… kube-apiserver's and etcd's CPU per object, ms", key: "lastBurstServerCpu", format: milliseconds },
    { label: SHARE_LABEL, key: "share:lastBurst", format: share },
  ];
}

/** The rows of the pre-created objects' CPU: up to the last handled, and up to settled. */
function preCreatedCpuRows(layout: Layout): Row[] {
  return [
    ...layout.throughputSizes.map((size) => ({
      label: `${size} pre-created: operator CPU per object (start-up included), ms`,
      key: `cpu:${size}`,
      format: milliseconds,
    })),
    ...layout.throughputSizes.map((size) => ({
      label: `… up to settled (10 s after the last handled: the echoes of its writes read too), ms`,
      key: `cpuSettled:${size}`,
      format: milliseconds,
    })),
  ];
}

/** The rows of RSS: with no objects, with each number of them, and per object. */
function memoryRows(layout: Layout): Row[] {
  return [
    { label: "RSS with no objects (after the idle time), MiB", key: "rss:0", format: mib },
    ...layout.memorySizes.map((size) => ({
      label: `RSS with ${size} objects (10 s after handling them), MiB`,
      key: `rss:${size}`,
      format: mib,
    })),
    ...layout.memorySizes.map((size) => ({
      label: `… per object above the RSS with no objects (${size}), KiB`,
      key: `rssPer:${size}`,
      format: (value: number) => (value / 1024).toFixed(2),
    })),
  ];
}

/** The rows of the requests while idle. */
function idleRows(layout: Layout): Row[] {
  return [
    {
      label:
        `requests while idle (${layout.idleSeconds} s, no objects), watches and the API server's LIST of services aside`,
      key: "idleRequests",
      format: rate,
    },
    // The API server counts a watch when it ends: one that times out within the idle time counts, the bench's own too.
    { label: "… watch requests of kopfexamples that ended in that time", key: "idleWatches", format: rate },
    // Its own informers' watches (roles, storage classes, webhook configurations…) time out every 5-10 minutes and
    // land in whichever contestant's idle time they do: kept apart, so that they are not read as the contestant's.
    {
      label: "… watches of other resources that ended (the API server's informers' among them)",
      key: "idleOtherWatches",
      format: rate,
    },
  ];
}

/** The rows of the restart with handled objects. */
function restartRows(layout: Layout): Row[] {
  return [
    {
      label: `restart with ${layout.restartAt} handled objects: to the watch open, s`,
      key: "restartReady",
      format: seconds,
    },
    { label: "… its LISTs of kopfexamples in the first 10 s", key: "lists:restart", format: rate },
    { label: "… its GETs of kopfexamples", key: "gets:restart", format: rate },
    { label: "… its writes to kopfexamples", key: "writes:restart", format: rate },
  ];
}

/** The rows of the requests per object: in the burst, with pre-created objects, and by each handler. */
function requestRows(layout: Layout): Row[] {
  return [
    ...["burst", ...layout.throughputSizes.map((size) => `pre:${size}`)].flatMap((scenario) => [
      { label: `writes per object (${scenario})`, key: `writes:${scenario}`, format: perObject },
      { label: `Events written per object (${scenario})`, key: `events:${scenario}`, format: perObject },
      { label: `GETs + LISTs per object (${scenario})`, key: `reads:${scenario}`, format: perObject },
    ]),
    // In the burst only: the pre-created scenarios' count has the watch that the operator's stop ends as well.
    {
      label: "watch requests of kopfexamples ended in the burst (the bench's own watch's too), in all",
      key: "watchEnds:burst",
      format: rate,
    },
    ...["create", "update", "delete"].map((step) => ({
      label: `create+update+delete handlers: writes per object on ${step}`,
      key: `writes:${step}`,
      format: perObject,
    })),
  ];
}

/** Samples by contestant and metric. */
export class Results {
  readonly #names: ContestantName[];
  readonly #samples = new Map<string, number[]>();

  constructor(names: ContestantName[]) {
    this.#names = names;
  }

  /** Adds one sample. */
  add(name: ContestantName, key: string, value: number): void {
    const samples = this.#samples.get(`${name} ${key}`) ?? [];
    samples.push(value);
    this.#samples.set(`${name} ${key}`, samples);
  }

  /**
   * Adds the requests of a scenario, per object: writes and reads of kopfexamples, writes of Events;
   * and the watch requests of kopfexamples that ended meanwhile (the API server ends those of readers
   * that fall behind, each then resumed with a new one; its metrics do not say whose, the bench's own
   * watch of the namespace is one of them).
   */
  addRequests(name: ContestantName, scenario: string, requests: RequestTotals, objects: number): void {
    const of = (verb: string, resource = "kopfexamples") => requests.get(`${verb} ${resource}`) ?? 0;
    this.add(name, `writes:${scenario}`, writesOf(requests, "kopfexamples") / objects);
    this.add(name, `events:${scenario}`, writesOf(requests, "events") / objects);
    this.add(name, `lists:${scenario}`, of("LIST") / objects);
    this.add(name, `gets:${scenario}`, of("GET") / objects);
    this.add(name, `watchEnds:${scenario}`, of("WATCH"));
  }

  /** Prints the table of medians to stdout. */
  print(layout: Layout): void {
    const header = ["metric", ...this.#names, ...this.#ratioNames()];
    console.log(`\nMedians of ${layout.rounds} round(s).\n`);
    console.log(`| ${header.join(" | ")} |`);
    console.log(`|${header.map((_, index) => index ? "---:" : "---").join("|")}|`);
    for (const row of rowsOf(layout)) {
      const cells = this.#cells(row);
      if (cells) console.log(`| ${[row.label, ...cells].join(" | ")} |`);
    }
  }

  /** A row's medians and ratios, formatted; none when no contestant has samples of it. */
  #cells(row: Row): string[] | undefined {
    const medians = this.#names.map((name) => this.#median(name, row.key));
    if (medians.every((value) => value === undefined)) return undefined;
    const cells = medians.map((value) => value === undefined ? "–" : row.format(value));
    const ratios = this.#ratioNames().map((ratio) => {
      const [mine, theirs] = ratio.split("/") as [ContestantName, ContestantName];
      const value = this.#median(mine, row.key);
      const other = this.#median(theirs, row.key);
      return value === undefined || !other ? "–" : (value / other).toFixed(2);
    });
    return [...cells, ...ratios];
  }

  #ratioNames(): string[] {
    const progress = this.#names.includes("before") && this.#names.includes("ours") ? ["ours/before"] : [];
    const compared = RATIOS.filter(([mine, theirs]) => this.#names.includes(mine) && this.#names.includes(theirs));
    return [...progress, ...compared.map(([mine, theirs]) => `${mine}/${theirs}`)];
  }

  #median(name: ContestantName, key: string): number | undefined {
    const samples = key.startsWith("reads:")
      ? this.#combine(name, key.replace("reads:", "gets:"), key.replace("reads:", "lists:"), (a, b) => a + b)
      : key.startsWith("rssPer:")
      ? this.#combine(name, key.replace("rssPer:", "rss:"), "rss:0", (a, b) => (a - b) / Number(key.split(":")[1]))
      : key.startsWith("share:")
      ? this.#combine(name, `${key.slice(6)}Cpu`, `${key.slice(6)}ServerCpu`, (a, b) => a / b)
        ?.filter((value) => Number.isFinite(value))
      : this.#samples.get(`${name} ${key}`);
    return samples?.length ? median(samples) : undefined;
  }

  /** Per round, a value made of two samples of that round. */
  #combine(
    name: ContestantName,
    first: string,
    second: string,
    combine: (a: number, b: number) => number,
  ): number[] | undefined {
    const a = this.#samples.get(`${name} ${first}`);
    const b = this.#samples.get(`${name} ${second}`);
    return a && b ? a.map((value, index) => combine(value, b[index])) : undefined;
  }
}
