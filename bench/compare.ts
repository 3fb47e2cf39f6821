/**
 * Our operator side by side with Python Kopf, raw clients and controller-runtime, on one
 * LocalCluster, in interleaved rounds, printing one table of medians with the ratios of ours to
 * each peer (and the same for `lean`: ours with `settings.persistence.useLeanStorage()`).
 * `bundle` (name it in `--only`) is ours as the image of `kopf init` runs it: the
 * `kopf build --minify` bundle of the fixture, made at the start of the run, with
 * `deno run --no-config` in a folder of its own.
 *
 * The contestants do the same work: `bench/fixtures/compare_create.{ts,py}` (one create handler
 * returning a result, `status.done`) and `compare_lifecycle.{ts,py}` (create, update and delete
 * handlers); the raw client (`bench/fixtures/raw_operator.ts`) does with plain `fetch` only the
 * writes that work needs — the physical limit of handling an object here — once as `raw` (one
 * write per object, as the lean storage) and once as `raw2` (also the diff-base annotation, Kopf's
 * protocol with the default storages); `floor` (name it in `--only`, with `--lifecycle 0`) does the lean
 * storage's work on creations without the framework's layers (`bench/fixtures/lean_floor.ts`); `cr` is a
 * controller-runtime reconciler making the same
 * writes as `raw` (`bench/fixtures/controller_runtime/`, built with Go into a cache folder by
 * `bench/built_peers.ts` on first use), and `rs` (name it in `--only`) a kube-rs controller making them
 * too (`bench/fixtures/kube_rs/`, built with Cargo the same way). Every process is
 * started as production would start it (ours: `deno run` of the CLI with cli/build.ts's `OPERATOR_V8_FLAGS`,
 * no `deno task`), serving one fresh namespace, its output kept in the log folder.
 *
 * Before the first round, 1,000 objects are created, changed and deleted in a namespace of their own: the API server's
 * cache of a fresh resource's events is small, and a burst would end the watches of whoever came first (its size and
 * the watches it ends: `watchCacheOf()` in bench/apiserver_metrics.ts).
 *
 * Per round and contestant (in the order of bench/round_order.ts: every other round backwards):
 * - start-up: time from the spawn to its watch of kopfexamples being open (the API server's own
 *   gauge), CPU in the first 10 s, requests in `--idle` seconds of idling (watches apart: the API server counts one when it
 *   ends, so a watch that times out then counts; those of kopfexamples apart from the others, which the API server's
 *   own informers end every 5-10 minutes whoever runs), RSS after them (no objects);
 * - burst: `--burst` objects created while it runs (`--posts` parallel POSTs, 32 by default): objects/s from the first
 *   POST to the last handled, the lag after the last POST, CPU and requests per object, and the CPU per object of
 *   kube-apiserver and etcd meanwhile (the bench's own POSTs and watch are in it, the same for every contestant), and
 *   the quotient of the two taken round by round (steadier than either: a fresh process's CPU follows the server's);
 *   with `--bursts N`, N such bursts one after another (2 s apart), the last one's figures on rows of their own: a
 *   fresh process compiles its path during its first objects, an operator that has run a while does not;
 * - pre-created: for each N of `--objects` and `--memory`, N objects created first, then the
 *   process started: objects/s from the spawn to the last handled, the time from the spawn to the first handled (the
 *   start as the bench's own watch sees it, in the same way for every contestant, where the row of the watch's opening
 *   reads a polled gauge of the API server's), CPU per object then and 10 s after (the echoes
 *   of its writes read: an operator that reads them amid the handling and one that reads them after it compare
 *   there), RSS 10 s after;
 *   with `--restart-at` objects, a restart: time to ready and the requests of its first 10 s;
 * - lifecycle: `--lifecycle` objects created, changed and deleted, writes per object for each.
 *
 * Every wait while a contestant runs fails at once, with its exit code and log, if it exits.
 *
 * Requests come from the API server's `apiserver_request_total` minus the bench's own, without
 * the API server's own Leases; a watch counts when it ends (so an open one is not counted yet).
 *
 * Usage: `deno run -A bench/compare.ts [options]`; `--help` lists the options and their defaults.
 *
 * `--private-binary` runs the Deno contestants from a copy of the `deno` binary, as an operator in its container has
 * the binary to itself (the idle collection gives back the binary's pages that only it maps:
 * src/utils/executable_pages.ts; RSS otherwise counts pages the bench's own process maps too).
 *
 * `--before DIR` adds the contestant `before` (name it in `--only`): the CLI of another checkout
 * (`git worktree add DIR <commit>`) with the default storages, for before/after tables in one run.
 *
 * @module
 */

import { readOptions } from "./compare_options.ts";
import { join } from "node:path";
import { LocalCluster } from "../testing.ts";
import { exitOnSignals } from "./exit_on_signals.ts";
import { ApiClient } from "../src/api/client.ts";
import { loadKubeconfig } from "../src/api/kubeconfig.ts";
import {
  checkPrerequisites,
  type ContestantName,
  contestants,
  type Mode,
  type Started,
  usePrivateBinary,
} from "./compare_contestants.ts";
import { preparePeers } from "./compare_peers.ts";
import { prepareExamples } from "./example_namespace.ts";
import { controlPlanePids, cpuBetween, cpuSeconds, readCpu, rss } from "./process_stats.ts";
import { Results } from "./compare_results.ts";
import { Tracker } from "./compare_tracker.ts";
import { collection, createExample, inParallel, isDone, objectName, status } from "./example_objects.ts";
import { measure, total } from "./served_requests.ts";
import { openWatches, untilWatching } from "./watch_open.ts";
import { watchCacheOf } from "./apiserver_metrics.ts";
import { roundOrder } from "./round_order.ts";

const options = readOptions();
const { rounds, preCreated, burst, bursts, lifecycle, idleSeconds, restartAt } = options;
const logs = options.logs ?? await Deno.makeTempDir({ prefix: "kopf-compare-" });
await Deno.mkdir(logs, { recursive: true });
if (options.privateBinary) await usePrivateBinary(logs);
const PARALLEL_POSTS = options.posts;
const SETTLE_MS = 10_000;
/** Objects created, changed and deleted before the first round (3 events each): `warmWatchCache()`. */
const WARM_UP_OBJECTS = 1000;
/**
 * A request that the API server makes of itself every 3 minutes (its repair loops of service IPs and node ports), with
 * no operator running: left out of the requests while idle, which no contestant here makes (said in the progress line).
 */
const API_SERVER_OWN_LIST = "LIST services";

checkPrerequisites(options.names);
const root = new URL("..", import.meta.url);
const { names, python, controllerRuntime, kubeRs } = await preparePeers(options.names, options.kopfVersion, root);

exitOnSignals();
await using cluster = await LocalCluster.start();
const client = new ApiClient(await loadKubeconfig({ path: cluster.kubeconfig }));
const caFile = join(logs, "ca.pem");
await Deno.writeTextFile(caFile, cluster.caCert);
const controlPlane = await controlPlanePids(cluster);

const all = contestants({ cluster, caFile, python, root, before: options.before, controllerRuntime, kubeRs });
const chosen = names.map((name) => all[name]);
const results = new Results(names);
console.error(`Logs of every process: ${logs}`);

let serial = 0;
let namespaces = 0;
await warmWatchCache();
for (let round = 1; round <= rounds; round++) {
  const order = roundOrder(chosen, round);
  for (const contestant of order) {
    const say = (what: string) => console.error(`[round ${round}, ${contestant.name}] ${what}`);
    say("start-up, idling and a burst");
    await startupAndBurst(contestant.name, (mode, namespace) => contestant.start(mode, namespace, log()), say);
    for (const size of preCreated) {
      say(`${size} pre-created objects`);
      await preCreatedObjects(
        contestant.name,
        size,
        (mode, namespace) => contestant.start(mode, namespace, log()),
        say,
      );
    }
    if (lifecycle > 0) {
      say(`${lifecycle} objects created, changed and deleted`);
      await lifecycleOfObjects(contestant.name, (mode, namespace) => contestant.start(mode, namespace, log()));
    }
  }
}
results.print(options);

function log(): string {
  return join(logs, `${String(++serial).padStart(3, "0")}.log`);
}

type Start = (mode: Mode, namespace: string) => Started;
/** Prints a line of the round's progress (each round's own figures too: the medians hide how far rounds differ). */
type Say = (what: string) => void;

async function startupAndBurst(name: ContestantName, start: Start, say: Say): Promise<void> {
  const namespace = await freshNamespace();
  const watchesBefore = await openWatches(client);
  const process = start("create", namespace);
  try {
    const ready = await untilWatching(client, watchesBefore, process);
    const readySeconds = (ready - process.started) / 1000;
    results.add(name, "ready", readySeconds);
    await process.guard(sleepUntil(process.started + SETTLE_MS), "the start-up to settle");
    const startupCpu = await cpuSeconds(process.pid);
    results.add(name, "startupCpu", startupCpu);
    // Each round's own start too: the medians of three hide which rounds a slow start came from.
    say(`watch open ${readySeconds.toFixed(2)} s after the spawn; start-up CPU ${startupCpu.toFixed(2)} s`);
    const idle = await measure(client, () => process.guard(sleep(idleSeconds * 1000), "the idle time to pass"));
    const watches = [...idle.requests].filter(([key]) => key.startsWith("WATCH ")).reduce((sum, [, n]) => sum + n, 0);
    const ownWatches = idle.requests.get("WATCH kopfexamples") ?? 0;
    const background = idle.requests.get(API_SERVER_OWN_LIST) ?? 0;
    results.add(name, "idleRequests", total(idle.requests) - watches - background);
    results.add(name, "idleWatches", ownWatches);
    results.add(name, "idleOtherWatches", watches - ownWatches);
    // By resource: the API server's own loops (its informers' watches, its repair of service IPs) come in any window.
    if (idle.requests.size) say(`while idle: ${[...idle.requests].map(([key, n]) => `${key} ${n}`).join(", ")}`);
    // Read once idle, not right after the start: an allocator that returns memory after a decay time (jemalloc's
    // 10 s, the image's) has not yet given back what the start used.
    results.add(name, "rss:0", await rss(process.pid));

    await using tracker = await Tracker.start(client, namespace);
    for (let index = 0; index < bursts; index++) await oneBurst(name, process, tracker, namespace, index, say);
  } finally {
    await process.stop();
  }
  await deleteAll(namespace);
}

/**
 * The `index`th burst of objects into a running process's namespace: recorded under the burst's keys
 * when it is the first, under the last burst's when it is the last of several.
 */
async function oneBurst(
  name: ContestantName,
  process: Started,
  tracker: Tracker,
  namespace: string,
  index: number,
  say: Say,
): Promise<void> {
  const key = index === 0 ? "burst" : "lastBurst";
  const cpuBefore = await readCpu(process.pid);
  const serverCpuBefore = await serverCpuSeconds();
  const work = await measure(client, async () => {
    const posts = await process.guard(
      createObjects(namespace, burst, index * burst),
      "the burst's objects to be created",
    );
    const handled = await process.guard(tracker.until(isDone, (index + 1) * burst), `${burst} objects to be handled`);
    await process.guard(sleep(2000), "trailing writes"); // writes that trail the visible result count too
    return { ...posts, handled };
  });
  if (index > 0 && index < bursts - 1) return;
  const rate = burst / ((work.value.handled - work.value.first) / 1000);
  const cpu = cpuBetween(cpuBefore, await readCpu(process.pid)).seconds / burst;
  results.add(name, `${key}Rate`, rate);
  results.add(name, `${key}Lag`, (work.value.handled - work.value.last) / 1000);
  results.add(name, `${key}Cpu`, cpu);
  const serverCpu = (await serverCpuSeconds() - serverCpuBefore) / burst;
  results.add(name, `${key}ServerCpu`, serverCpu);
  say(
    `burst ${index + 1}: ${rate.toFixed(0)} objects/s, ${(cpu * 1000).toFixed(2)} ms CPU per object ` +
      `(kube-apiserver and etcd: ${(serverCpu * 1000).toFixed(2)} ms)`,
  );
  if (index === 0) results.addRequests(name, "burst", work.requests, burst);
}

async function preCreatedObjects(name: ContestantName, size: number, start: Start, say: Say): Promise<void> {
  const namespace = await freshNamespace();
  await createObjects(namespace, size);
  await using tracker = await Tracker.start(client, namespace);
  const work = await measure(client, async () => {
    const process = start("create", namespace);
    try {
      let first = Number.NaN;
      const handled = await process.guard(
        tracker.until(isDone, size, undefined, (at) => first = at),
        `${size} objects to be handled`,
      );
      const rate = size / ((handled - process.started) / 1000);
      const firstSeconds = (first - process.started) / 1000;
      results.add(name, `first:${size}`, firstSeconds);
      const cpu = await cpuSeconds(process.pid) / size;
      results.add(name, `rate:${size}`, rate);
      results.add(name, `cpu:${size}`, cpu);
      say(
        `${size} pre-created: ${rate.toFixed(0)} objects/s, ${(cpu * 1000).toFixed(2)} ms CPU per object, ` +
          `the first handled ${firstSeconds.toFixed(2)} s after the spawn`,
      );
      await process.guard(sleepUntil(handled + SETTLE_MS), "the memory to settle");
      results.add(name, `cpuSettled:${size}`, await cpuSeconds(process.pid) / size);
      results.add(name, `rss:${size}`, await rss(process.pid));
    } finally {
      await process.stop();
    }
  });
  results.addRequests(name, `pre:${size}`, work.requests, size);
  if (size === restartAt) {
    const watchesBefore = await openWatches(client);
    const restart = await measure(client, async () => {
      const process = start("create", namespace);
      try {
        const ready = await untilWatching(client, watchesBefore, process);
        results.add(name, "restartReady", (ready - process.started) / 1000);
        await process.guard(sleepUntil(process.started + SETTLE_MS), "the restart to settle");
      } finally {
        await process.stop();
      }
    });
    results.addRequests(name, "restart", restart.requests, 1);
  }
  await deleteAll(namespace);
}

async function lifecycleOfObjects(name: ContestantName, start: Start): Promise<void> {
  const namespace = await freshNamespace();
  const watchesBefore = await openWatches(client);
  const process = start("lifecycle", namespace);
  try {
    await untilWatching(client, watchesBefore, process);
    await using tracker = await Tracker.start(client, namespace);
    const created = await measure(client, async () => {
      await process.guard(createObjects(namespace, lifecycle), "the objects to be created");
      await process.guard(tracker.until(isDone, lifecycle), `${lifecycle} created objects to be handled`);
      await process.guard(sleep(2000), "trailing writes");
    });
    results.addRequests(name, "create", created.requests, lifecycle);
    const changed = await measure(client, async () => {
      await process.guard(
        forEachObject(lifecycle, (object) =>
          client.request({
            method: "PATCH",
            path: `${collection(namespace)}/${object}`,
            contentType: "application/merge-patch+json",
            body: { spec: { field: "changed" } },
          })),
        "the objects to be changed",
      );
      await process.guard(
        tracker.until((object) => status(object, "updated")?.seen === "changed", lifecycle),
        `${lifecycle} changed objects to be handled`,
      );
      await process.guard(sleep(2000), "trailing writes");
    });
    results.addRequests(name, "update", changed.requests, lifecycle);
    const deleted = await measure(client, async () => {
      await process.guard(
        forEachObject(
          lifecycle,
          (object) => client.request({ method: "DELETE", path: `${collection(namespace)}/${object}` }),
        ),
        "the objects to be deleted",
      );
      await process.guard(tracker.untilEmpty(), "the deleted objects to be gone");
      await process.guard(sleep(2000), "trailing writes");
    });
    results.addRequests(name, "delete", deleted.requests, lifecycle);
  } finally {
    await process.stop();
  }
  await deleteAll(namespace);
}

/**
 * Grows the API server's cache of kopfexamples' events before the first round: on a fresh CRD it holds 100 events and
 * gives each watch a buffer of 10, which a burst fills, so the server ended the watches of whoever came first (8-10
 * times in its first burst of 500, the others' never) and that contestant alone paid for their resumptions.
 */
async function warmWatchCache(): Promise<void> {
  const namespace = await freshNamespace();
  const before = await watchCacheOf(client, "kopfexamples");
  {
    await using tracker = await Tracker.start(client, namespace);
    await createObjects(namespace, WARM_UP_OBJECTS);
    await forEachObject(WARM_UP_OBJECTS, (name) =>
      client.request({
        method: "PATCH",
        path: `${collection(namespace)}/${name}/status`,
        contentType: "application/merge-patch+json",
        body: { status: { done: { ok: true } } },
      }));
    await tracker.until(isDone, WARM_UP_OBJECTS);
    await deleteAll(namespace);
    await tracker.untilEmpty();
  }
  const after = await watchCacheOf(client, "kopfexamples");
  console.error(
    `The API server's cache of kopfexamples' events warmed with ${WARM_UP_OBJECTS} objects: capacity ${after.capacity} ` +
      `events (watches it ended meanwhile: ${after.ended - before.ended}).`,
  );
}

async function freshNamespace(): Promise<string> {
  const namespace = `compare-${Date.now().toString(36)}-${++namespaces}`;
  await prepareExamples(client, namespace);
  return namespace;
}

/**
 * Creates `count` objects numbered from `from`, `PARALLEL_POSTS` at a time; returns when the first POST
 * started and the last ended.
 */
async function createObjects(namespace: string, count: number, from = 0): Promise<{ first: number; last: number }> {
  const first = performance.now();
  await forEachObject(count, (name) => createExample(client, namespace, name), from);
  return { first, last: performance.now() };
}

function forEachObject(count: number, action: (name: string) => Promise<unknown>, from = 0): Promise<void> {
  return inParallel(from, from + count, PARALLEL_POSTS, (index) => action(objectName(index)));
}

/** Removes what is left (the namespace itself stays: without controllers, nothing would empty it). */
async function deleteAll(namespace: string): Promise<void> {
  await client.request({ method: "DELETE", path: collection(namespace) });
}

/** The CPU time of kube-apiserver and etcd so far: what a contestant's requests cost the server shows in it. */
async function serverCpuSeconds(): Promise<number> {
  const times = await Promise.all(controlPlane.map((pid) => cpuSeconds(pid)));
  return times.reduce((sum, seconds) => sum + seconds, 0);
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

function sleepUntil(moment: number): Promise<void> {
  return sleep(Math.max(0, moment - performance.now()));
}
