/**
 * What the parts of bench/sharding.ts share: the cluster, a fresh namespace of pre-created
 * objects, a group of replicas started over it, waits that fail at once when a replica dies, and
 * who handled what.
 *
 * @module
 */

import type { ApiClient } from "../src/api/client.ts";
import type { KubernetesList, KubernetesObject } from "../src/model/body.ts";
import type { LocalCluster } from "../testing.ts";

import type { Tracker } from "./compare_tracker.ts";
import { prepareExamples } from "./example_namespace.ts";
import { cpuSeconds } from "./process_stats.ts";
import { Replica } from "./sharded_replica.ts";
import { eventually } from "../tests/support/eventually.ts";

/** The cluster every part runs on. */
export interface Bench {
  readonly cluster: LocalCluster;
  readonly client: ApiClient;
  /** The ids of kube-apiserver and etcd, whose CPU time tells how much they competed with the replicas. */
  readonly controlPlane: readonly number[];
}

/** A printed table: one per part. */
export interface Table {
  readonly title: string;
  readonly headers: readonly string[];
  readonly rows: readonly (readonly string[])[];
  /** What the figures mean, printed under the table. */
  readonly notes: readonly string[];
}

/** The note under a table with a "results lost" column. */
export const RESULTS_LOST = "Results lost: objects that Kopf marked as handled (the handler's annotation went with " +
  "that mark, in the patch of the object) whose result never reached `status.work` (a second request, to the " +
  "status subresource); their handler does not run again. Should be 0.";

const PARALLEL_POSTS = 32;
let namespaces = 0;

/** A new namespace with `count` objects `kex-<i>` in it; returns its name. */
export async function namespaceWithObjects(client: ApiClient, prefix: string, count: number): Promise<string> {
  const namespace = `${prefix}-${Date.now().toString(36)}-${++namespaces}`;
  const collection = await prepareExamples(client, namespace);
  let next = 0;
  const worker = async () => {
    while (next < count) {
      const name = `kex-${next++}`;
      await client.request({
        method: "POST",
        path: collection,
        body: { apiVersion: "kopf.dev/v1", kind: "KopfExample", metadata: { name }, spec: {} },
      });
    }
  };
  await Promise.all(Array.from({ length: Math.min(PARALLEL_POSTS, count) }, worker));
  return namespace;
}

/** Deletes the namespace's objects, so that the next part's cluster is not burdened by them. */
export async function deleteObjects(client: ApiClient, namespace: string): Promise<void> {
  await client.request({ method: "DELETE", path: `/apis/kopf.dev/v1/namespaces/${namespace}/kopfexamples` });
}

/** What the fixture's handler leaves in the status. */
interface WorkResult {
  readonly replica: string;
  readonly handledAt: number;
}

function workResult(object: KubernetesObject): WorkResult | undefined {
  return (object.status as { work?: WorkResult } | undefined)?.work;
}

/**
 * The replica that ran the fixture's create handler for an object (its annotation, or with the lean
 * storage its result); `undefined` if none yet.
 */
export function handler(object: KubernetesObject): string | undefined {
  return object.metadata.annotations?.["bench.kopf.dev/replica"] ?? workResult(object)?.replica;
}

/** Whether the fixture's create handler has run for an object and its replica marked it as handled. */
export function isHandled(object: KubernetesObject): boolean {
  return handler(object) !== undefined;
}

/** Whether the fixture's create handler's result has reached an object's status. */
export function hasResult(object: KubernetesObject): boolean {
  return workResult(object) !== undefined;
}

/**
 * Waits until every one of `count` objects has its result in the status, or until no more results
 * have come for `quiet` seconds; returns when the last one came (`performance.now()`, within 0.25 s)
 * and how many never did.
 */
export async function resultsSettled(
  tracker: Tracker,
  count: number,
  quiet = 10,
): Promise<{ at: number; missing: number }> {
  let seen = tracker.count(hasResult);
  let changed = performance.now();
  while (seen < count) {
    await new Promise((resolve) => setTimeout(resolve, 250));
    const now = tracker.count(hasResult);
    if (now !== seen) [seen, changed] = [now, performance.now()];
    else if (performance.now() - changed > quiet * 1000) break;
  }
  return { at: changed, missing: count - seen };
}

/** Who handled what: the objects per replica, and how many lack the handler's result in their status. */
export interface Handled {
  readonly byReplica: ReadonlyMap<string, number>;
  /** The first and the last end of a handler's work (ms since the epoch). */
  readonly first: number;
  readonly last: number;
  /**
   * Objects marked as handled (the annotation, sent with Kopf's own mark) whose result never reached
   * the status subresource (a second request): Kopf will not run the handler again for them.
   */
  readonly resultsLost: number;
}

/** Who handled the objects of a namespace, listed in pages. */
export async function handledBy(client: ApiClient, namespace: string): Promise<Handled> {
  const byReplica = new Map<string, number>();
  let resultsLost = 0;
  let [first, last] = [Infinity, -Infinity];
  let token: string | undefined;
  do {
    const list = await client.request<KubernetesList>({
      path: `/apis/kopf.dev/v1/namespaces/${namespace}/kopfexamples`,
      query: { limit: 1000, ...token ? { continue: token } : {} },
    });
    for (const item of list.items) {
      const replica = handler(item) ?? "none";
      byReplica.set(replica, (byReplica.get(replica) ?? 0) + 1);
      if (replica !== "none" && !hasResult(item)) resultsLost++;
      const at = Number(item.metadata.annotations?.["bench.kopf.dev/handled-at"] ?? workResult(item)?.handledAt ?? NaN);
      if (at < first) first = at;
      if (at > last) last = at;
    }
    token = list.metadata?.continue || undefined;
  } while (token);
  return { byReplica, resultsLost, first, last };
}

/** Starts `count` replicas `r1…rN` over a namespace, in one shard group or (without `group`) unsharded. */
export function startReplicas(
  bench: Bench,
  namespace: string,
  count: number,
  options: { group?: string; env?: Record<string, string>; count?: boolean; probe?: boolean } = {},
): Promise<Replica[]> {
  return Promise.all(
    Array.from(
      { length: count },
      (_, index) => Replica.start({ cluster: bench.cluster, namespace, id: `r${index + 1}`, ...options }),
    ),
  );
}

/** Stops (SIGKILL) every replica and releases its proxy. */
export async function stopReplicas(replicas: readonly Replica[]): Promise<void> {
  await Promise.all(replicas.map((replica) => replica[Symbol.asyncDispose]()));
}

/** Waits for a promise, but fails at once if one of the replicas exits on its own meanwhile. */
export function guard<T>(promise: Promise<T>, replicas: readonly Replica[]): Promise<T> {
  return Promise.race([promise, ...replicas.map((replica) => replica.failure)]);
}

/**
 * Waits until every replica answers its liveness probe and, in a group, all of them see all
 * members and their ranges cover the whole hash space; returns when (`performance.now()`).
 */
export async function groupFormed(replicas: readonly Replica[], sharded: boolean): Promise<number> {
  await guard(
    eventually("the replicas to be up and to share the hash space", async () => {
      if (!sharded) return (await Promise.all(replicas.map(answers))).every(Boolean) || undefined;
      const reports = await Promise.all(replicas.map((replica) => replica.sharding()));
      if (reports.some((report) => report?.members.length !== replicas.length)) return undefined;
      const covered = reports.reduce((sum, report) => sum + report!.share, 0);
      return covered > 0.999 || undefined;
    }, { seconds: 600 }),
    replicas,
  );
  return performance.now();
}

/** The CPU seconds kube-apiserver and etcd have used so far. */
export async function controlPlaneCpu(bench: Bench): Promise<number> {
  const seconds = await Promise.all(bench.controlPlane.map(cpuSeconds));
  return seconds.reduce((sum, value) => sum + value, 0);
}

/** Seconds with one decimal. */
export function seconds(milliseconds: number): string {
  return (milliseconds / 1000).toFixed(1);
}

async function answers(replica: Replica): Promise<boolean> {
  try {
    await (await fetch(replica.liveness)).body?.cancel();
    return true;
  } catch {
    return false;
  }
}
