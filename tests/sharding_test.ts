/**
 * Sharding across replicas, as users run it: separate `kopf run --shard-group` processes share
 * 300 objects. Every object's creation is handled exactly once in total, each of three replicas
 * handles a fair share, and through a fourth replica joining, a graceful stop and a SIGKILL, no
 * object's daemon ever runs in two replicas at once, every object ends with exactly one daemon
 * again, and the daemons of objects that did not move are never restarted. Once with the API server filtering (the `ShardedListAndWatch` gate on, a cluster
 * of its own), once with the replicas filtering themselves (the shared cluster, gate off).
 */

import assert from "node:assert/strict";
import type { ApiClient } from "../src/api/client.ts";
import type { KubernetesObject } from "../src/model/body.ts";
import { LocalCluster } from "../testing.ts";
import { connect, createExample, freshNamespace, KOPFEXAMPLES, testCluster } from "./support/cluster.ts";
import { freePort } from "./support/environment.ts";
import { KopfProcess } from "./support/kopf_process.ts";
import { resourcePath } from "../src/api/paths.ts";
import { eventually } from "./support/eventually.ts";

const OBJECTS = 300;
const CONFIGMAPS = 20;
const LEASE = 5;

/** One object's daemon in one replica: from its start to its stop (or the replica's death). */
interface Run {
  readonly replica: string;
  readonly start: number;
  readonly stop: number;
}

class Replica {
  killedAt?: number;
  private constructor(readonly id: string, readonly process: KopfProcess, readonly liveness: string) {}

  static async start(id: string, namespace: string, kubeconfig: string): Promise<Replica> {
    for (let attempt = 1;; attempt++) {
      const port = freePort();
      const liveness = `http://127.0.0.1:${port}/healthz`;
      const metrics = `http://127.0.0.1:${port}/metrics`;
      const process = await KopfProcess.start(
        namespace,
        [
          ...["--shard-group", "shards", "--shard-id", id, "--liveness", liveness, "--metrics", metrics],
          "tests/fixtures/sharded_handlers.ts",
        ],
        { KUBECONFIG: kubeconfig, KOPF_TEST_REPLICA: id, KOPF_TEST_SHARD_LEASE: String(LEASE) },
      );
      try {
        await process.waitForLine(/Shard ranges of shards changed/, 120);
        return new Replica(id, process, liveness);
      } catch (error) {
        // Another program bound the port between its check and the replica's bind (rare): it exited; another port.
        if (attempt < 3 && /Address already in use/.test(process.output)) continue;
        throw error;
      }
    }
  }

  /** Its daemons' runs; those still running end at its death, or never. */
  runs(): Map<string, Run[]> {
    const starts = new Map<string, number>();
    const runs = new Map<string, Run[]>();
    const add = (name: string, start: number, stop: number) =>
      runs.set(name, [...runs.get(name) ?? [], { replica: this.id, start, stop }]);
    for (const line of this.process.lines) {
      const match = line.match(/^daemon-(start|stop) (\S+) (\d+)$/);
      if (!match) continue;
      const [, what, name, at] = match;
      if (what === "start") starts.set(name, Number(at));
      else if (starts.has(name)) {
        add(name, starts.get(name)!, Number(at));
        starts.delete(name);
      }
    }
    for (const [name, start] of starts) add(name, start, this.killedAt ?? Infinity);
    return runs;
  }

  /** The objects whose daemon runs here now, and when it started. */
  current(): Map<string, number> {
    if (this.killedAt !== undefined) return new Map();
    const current = new Map<string, number>();
    for (const [name, runs] of this.runs()) {
      const run = runs.find((run) => run.stop === Infinity);
      if (run) current.set(name, run.start);
    }
    return current;
  }

  /** The objects whose daemon runs here now. */
  running(): Set<string> {
    return new Set(this.current().keys());
  }

  creations(): string[] {
    return this.process.lines.flatMap((line) => line.match(/created (\S+) by /)?.[1] ?? []);
  }
}

/** Every pair of daemon runs of one object in two replicas that overlap in time. */
function overlaps(replicas: readonly Replica[]): string[] {
  const byObject = new Map<string, Run[]>();
  for (const replica of replicas) {
    for (const [name, runs] of replica.runs()) byObject.set(name, [...byObject.get(name) ?? [], ...runs]);
  }
  const found: string[] = [];
  for (const [name, runs] of byObject) {
    const sorted = runs.toSorted((a, b) => a.start - b.start);
    for (let i = 1; i < sorted.length; i++) {
      const [before, after] = [sorted[i - 1], sorted[i]];
      if (after.start < before.stop) {
        found.push(`${name}: ${before.replica} until ${before.stop}, ${after.replica} from ${after.start}`);
      }
    }
  }
  return found;
}

/** Each running daemon as `replica object` and when it started. */
function daemons(replicas: readonly Replica[]): Map<string, number> {
  return new Map(
    replicas.flatMap((replica) => [...replica.current()].map(([name, start]) => [`${replica.id} ${name}`, start])),
  );
}

/** The daemons running before and after a change in the same replica that were restarted in between. */
function restarted(before: Map<string, number>, after: Map<string, number>): string[] {
  return [...after].filter(([key, start]) => before.has(key) && before.get(key) !== start).map(([key]) => key);
}

/** Waits until every object has its daemon running in exactly one of the replicas. */
function oneDaemonEach(replicas: readonly Replica[], names: readonly string[], what: string): Promise<true> {
  return eventually(what, () => {
    const counts = new Map<string, number>();
    for (const replica of replicas) for (const name of replica.running()) counts.set(name, (counts.get(name) ?? 0) + 1);
    const wrong = names.filter((name) => counts.get(name) !== 1);
    if (wrong.length) throw new Error(`${wrong.map((name) => `${name}: ${counts.get(name) ?? 0}`).join(", ")}`);
    return true;
  }, { seconds: 180 });
}

/**
 * The live replicas' sharded indexes hold their own objects (together: every object once, of the
 * kopfexamples and of the configmaps), their unsharded index every configmap.
 */
async function checkIndexes(replicas: readonly Replica[]): Promise<void> {
  const live = replicas.filter((replica) => replica.killedAt === undefined);
  const indexed = await eventually("every object in one replica's sharded indexes", async () => {
    const all = await Promise.all(live.map(async (replica) => (await (await fetch(replica.liveness)).json()).indexed));
    const sum = (key: string) => all.reduce((total, one) => total + one[key], 0);
    return sum("mine") === OBJECTS && sum("myConfigMaps") === CONFIGMAPS ? all : undefined;
  });
  for (const one of indexed) assert.equal(one.configmaps, CONFIGMAPS, JSON.stringify(one));
}

/** The indexes as above; the metrics count the group's members and a replica's share. */
async function checkIndexesAndMetrics(replicas: readonly Replica[]): Promise<void> {
  await checkIndexes(replicas);
  const metrics = await (await fetch(replicas[0].liveness.replace("/healthz", "/metrics"))).text();
  assert.match(metrics, /^kopf_shard_members\{group="shards"\} 3$/m);
  const ratio = Number(metrics.match(/^kopf_shard_owned_ratio\{group="shards"\} (\S+)$/m)?.[1]);
  assert.ok(Math.abs(ratio - 1 / 3) <= 0.1, `owned ratio ${ratio}`);
  assert.match(metrics, /^kopf_shard_handovers_total\{group="shards"\} [1-9]/m);
}

async function scenario(client: ApiClient, kubeconfig: string, serverSide: boolean): Promise<void> {
  const namespace = await freshNamespace(client, "sharding");
  const names = Array.from({ length: OBJECTS }, (_, i) => `obj-${i}`);
  const configMaps = Array.from({ length: CONFIGMAPS }, (_, i) => `cm-${i}`);
  // The configmaps have daemons too, in an unsharded stream (an index holds them all).
  const daemonNames = [...names, ...configMaps];
  const replicas = await Promise.all(["r1", "r2", "r3"].map((id) => Replica.start(id, namespace, kubeconfig)));
  try {
    const health = await (await fetch(replicas[0].liveness)).json();
    assert.equal(health["kopf.sharding"]?.serverSide, serverSide, JSON.stringify(health));
    assert.equal(health["kopf.sharding"]?.group, "shards");

    for (const name of configMaps) {
      await client.request({
        method: "POST",
        path: `/api/v1/namespaces/${namespace}/configmaps`,
        body: { metadata: { name } },
      });
    }
    for (let i = 0; i < names.length; i += 30) {
      await Promise.all(names.slice(i, i + 30).map((name) => createExample(client, namespace, name)));
    }
    const handled = await eventually("every object's creation handled", async () => {
      const list = await client.request<{ items: KubernetesObject[] }>({
        path: resourcePath(KOPFEXAMPLES, { namespace }),
      });
      const by = list.items.map((item) =>
        (item.status as { created?: { replica: string } } | undefined)?.created?.replica
      );
      return by.every(Boolean) && by.length === OBJECTS ? by as string[] : undefined;
    }, { seconds: 180 });
    for (const id of ["r1", "r2", "r3"]) {
      const share = handled.filter((replica) => replica === id).length / OBJECTS;
      assert.ok(share >= 0.2 && share <= 0.47, `${id} handled ${(share * 100).toFixed(1)}% of the objects`);
    }
    await oneDaemonEach(replicas, daemonNames, "one daemon per object among three replicas");
    await checkIndexesAndMetrics(replicas);

    // The daemons of objects that stay where they are run on undisturbed through every change.
    let before = daemons(replicas);
    replicas.push(await Replica.start("r4", namespace, kubeconfig));
    await oneDaemonEach(replicas, daemonNames, "one daemon per object among four replicas");
    assert.ok(replicas[3].running().size > 0, "the fourth replica took a share");
    assert.deepEqual(restarted(before, before = daemons(replicas)), [], "kept daemons, a member joining");

    await replicas[1].process.stop("SIGTERM");
    replicas[1].killedAt = Date.now();
    await oneDaemonEach(replicas, daemonNames, "one daemon per object after a graceful stop");
    assert.deepEqual(restarted(before, before = daemons(replicas)), [], "kept daemons, a member leaving");

    replicas[2].process.signal("SIGKILL");
    replicas[2].killedAt = Date.now();
    await replicas[2].process.exited;
    await oneDaemonEach(replicas, daemonNames, "one daemon per object after a SIGKILL");
    assert.deepEqual(restarted(before, daemons(replicas)), [], "kept daemons, a member dying");
    await checkIndexes(replicas);

    assert.deepEqual(overlaps(replicas), []);
    const creations = replicas.flatMap((replica) => replica.creations());
    assert.equal(creations.length, OBJECTS, "each creation handled once in total, none again after a move");
    assert.equal(new Set(creations).size, OBJECTS);
  } finally {
    await Promise.all(replicas.map((replica) => replica.process.stop("SIGKILL").catch(() => {})));
  }
}

Deno.test("three replicas, then four, then two: one handler run and one daemon per object (server-side)", async () => {
  await using cluster = await LocalCluster.start({ featureGates: { ShardedListAndWatch: true } });
  const { client } = await connect(cluster.kubeconfig);
  try {
    await scenario(client, cluster.kubeconfig, true);
  } finally {
    client.close();
  }
});

Deno.test("three replicas, then four, then two: one handler run and one daemon per object (client-side)", async () => {
  const { client, kubeconfig } = await testCluster();
  await scenario(client, kubeconfig, false);
});
