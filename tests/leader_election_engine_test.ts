/**
 * The leader elector alone against a real kube-apiserver: one leader among several replicas,
 * handover by release and by expiry, standbys that write nothing, and a foreign holder that keeps
 * its Lease. Durations are short (3 / 2 / 0.5 s); waits have generous bounds and assert no timing.
 */

import assert from "node:assert/strict";
import { reset } from "@logtape/logtape";
import { ApiClient } from "../src/api/client.ts";
import { createLease, getLease, LEASES, type LeaseTarget, replaceLease } from "../src/api/leases.ts";
import { Watcher } from "../src/api/watching.ts";
import { LeaderElector } from "../src/engines/leader_election.ts";
import { formatMicroTime, type Lease } from "../src/model/lease.ts";
import { LeaderElectionSettings } from "../src/settings/leader_election.ts";
import { WatchingSettings } from "../src/settings/watching.ts";
import { freshNamespace, settle, testCluster } from "./support/cluster.ts";
import { eventually } from "./support/eventually.ts";
import { captureLogs } from "./support/logs.ts";

/** One replica: its own client (so its requests are counted apart), elector, and transitions seen. */
interface Replica {
  identity: string;
  client: ApiClient;
  elector: LeaderElector;
  changes: boolean[];
  crash: AbortController;
}

async function target(): Promise<LeaseTarget> {
  const { client } = await testCluster();
  return { namespace: await freshNamespace(client, "lease"), name: `lease-${crypto.randomUUID().slice(0, 8)}` };
}

function settingsFor(lease: LeaseTarget): LeaderElectionSettings {
  return Object.assign(new LeaderElectionSettings(), {
    enabled: true,
    leaseName: lease.name,
    leaseNamespace: lease.namespace,
    leaseDuration: 3,
    renewDeadline: 2,
    retryPeriod: 0.5,
  });
}

async function replica(lease: LeaseTarget, identity: string): Promise<Replica> {
  const { credentials } = await testCluster();
  const client = new ApiClient(credentials);
  const changes: boolean[] = [];
  const crash = new AbortController();
  const elector = LeaderElector.start({
    client,
    settings: settingsFor(lease),
    watching: new WatchingSettings(),
    identity,
    onChange: (leading) => changes.push(leading),
    signal: crash.signal,
  });
  return { identity, client, elector, changes, crash };
}

async function stopAll(replicas: Replica[]): Promise<void> {
  await Promise.all(replicas.map((r) => r.elector.close()));
  for (const r of replicas) r.client.close();
}

function writes(r: Replica): number {
  return r.client.counters.count({ verb: "create", resource: "leases" }) +
    r.client.counters.count({ verb: "update", resource: "leases" });
}

function leaders(replicas: Replica[]): Replica[] {
  return replicas.filter((r) => r.elector.leading);
}

/** Waits until exactly one replica leads; returns it. */
function oneLeader(replicas: Replica[]): Promise<Replica> {
  return eventually("exactly one leader", () => {
    const found = leaders(replicas);
    return found.length === 1 ? found[0] : undefined;
  });
}

/** Follows the Lease with a watch of the test's own, keeping the holder of every version seen. */
async function holders(lease: LeaseTarget): Promise<{ seen: string[]; stop: () => Promise<void> }> {
  const { client } = await testCluster();
  const controller = new AbortController();
  const seen: string[] = [];
  const watcher = new Watcher(client, LEASES, {
    namespace: lease.namespace,
    fieldSelector: `metadata.name=${lease.name}`,
    signal: controller.signal,
  });
  const done = (async () => {
    for await (const event of watcher) {
      if (event.type === "LISTED" || event.type === "DELETED") continue;
      const holder = (event.object as unknown as Lease).spec?.holderIdentity ?? "";
      if (seen.at(-1) !== holder) seen.push(holder);
    }
  })();
  return {
    seen,
    stop: async () => {
      controller.abort();
      await done;
    },
  };
}

Deno.test("of three electors exactly one leads, and the standbys write and read nothing while it lives", async () => {
  const { client } = await testCluster();
  const lease = await target();
  const lines = await captureLogs();
  const replicas = await Promise.all(["a", "b", "c"].map((name) => replica(lease, `replica-${name}`)));
  try {
    assert.equal(replicas[0].elector.lease, `${lease.namespace}/${lease.name}`);
    const leader = await oneLeader(replicas);
    const standbys = replicas.filter((r) => r !== leader);
    assert.deepEqual(leader.changes, [true]);
    const record = await getLease(client, lease);
    assert.equal(record.spec?.holderIdentity, leader.identity);
    assert.equal(record.spec?.leaseDurationSeconds, 3);
    assert.equal(record.spec?.leaseTransitions, 0);

    // Once the standbys have seen the leader's record (each says so once), count what they send
    // over two lease durations: an observation window, which no positive signal can replace.
    const standingBy = `Standing by: the Lease ${lease.namespace}/${lease.name} is held by ${leader.identity}.`;
    await eventually("both standbys to stand by", () => lines.filter((line) => line.includes(standingBy)).length >= 2);
    const before = standbys.map((r) => ({ writes: writes(r), gets: r.client.counters.count({ verb: "get" }) }));
    const leaderUpdates = leader.client.counters.count({ verb: "update", resource: "leases" });
    await settle(6);
    assert.deepEqual(
      standbys.map((r) => ({ writes: writes(r), gets: r.client.counters.count({ verb: "get" }) })),
      before,
      "standbys sent writes or reads while the leader was alive",
    );
    assert.ok(
      leader.client.counters.count({ verb: "update", resource: "leases" }) > leaderUpdates,
      "the leader did not renew",
    );
    assert.deepEqual(leaders(replicas), [leader]);
    for (const standby of standbys) assert.deepEqual(standby.changes, []);
    const renewed = await getLease(client, lease);
    assert.equal(renewed.spec?.holderIdentity, leader.identity);
    assert.notEqual(renewed.spec?.renewTime, record.spec?.renewTime);
    assert.equal(renewed.spec?.acquireTime, record.spec?.acquireTime);
  } finally {
    await stopAll(replicas);
    await reset();
  }
});

Deno.test("close() of a lone leader releases the Lease: no holder, 1-second duration", async () => {
  const { client } = await testCluster();
  const lease = await target();
  const only = await replica(lease, "lone");
  try {
    await eventually("the lone replica to lead", () => only.elector.leading || undefined);
    await only.elector.close();
    assert.equal(only.elector.leading, false);
    assert.deepEqual(only.changes, [true, false]);
    const record = await getLease(client, lease);
    assert.equal(record.spec?.holderIdentity, "");
    assert.equal(record.spec?.leaseDurationSeconds, 1);
    const writesAfterClose = writes(only);
    // An observation window: after close(), nothing is left to happen that a test could wait for.
    await settle(1);
    assert.equal(writes(only), writesAfterClose, "a closed elector kept writing");
  } finally {
    await stopAll([only]);
  }
});

Deno.test("close() of the leader hands over through a release: another elector leads", async () => {
  const { client } = await testCluster();
  const lease = await target();
  const watch = await holders(lease);
  const replicas = await Promise.all(["a", "b", "c"].map((name) => replica(lease, `replica-${name}`)));
  try {
    const first = await oneLeader(replicas);
    await first.elector.close();
    assert.deepEqual(first.changes, [true, false]);
    const rest = replicas.filter((r) => r !== first);
    const second = await oneLeader(rest);
    assert.deepEqual(second.changes, [true]);
    assert.equal(first.elector.leading, false);
    const record = await eventually("the Lease to name the new leader", async () => {
      const current = await getLease(client, lease);
      return current.spec?.holderIdentity === second.identity ? current : undefined;
    });
    assert.equal(record.spec?.leaseTransitions, 1);
    assert.equal(record.spec?.leaseDurationSeconds, 3);
    // The watch saw every version: the old leader, nobody (the release), the new leader.
    await eventually(
      "the test's watch to see the new leader",
      () => watch.seen.at(-1) === second.identity || undefined,
    );
    assert.deepEqual(watch.seen, [first.identity, "", second.identity]);
  } finally {
    await watch.stop();
    await stopAll(replicas);
  }
});

Deno.test("a crashed leader (aborted, no release) is replaced once its Lease expires", async () => {
  const { client } = await testCluster();
  const lease = await target();
  const watch = await holders(lease);
  const replicas = await Promise.all(["a", "b", "c"].map((name) => replica(lease, `replica-${name}`)));
  try {
    const first = await oneLeader(replicas);
    const before = await getLease(client, lease);
    first.crash.abort();
    await eventually("the crashed replica to stop leading", () => !first.elector.leading || undefined);
    assert.deepEqual(first.changes, [true, false]);
    const writesAfterCrash = writes(first);
    const rest = replicas.filter((r) => r !== first);
    const second = await oneLeader(rest);
    const after = await eventually("the Lease to name the new leader", async () => {
      const current = await getLease(client, lease);
      return current.spec?.holderIdentity === second.identity ? current : undefined;
    });
    assert.ok((after.spec?.leaseTransitions ?? 0) > (before.spec?.leaseTransitions ?? 0), "no transition counted");
    assert.equal(writes(first), writesAfterCrash, "the crashed replica wrote after its abort");
    // No release: the Lease went straight from the old holder to the new one.
    await eventually(
      "the test's watch to see the new leader",
      () => watch.seen.at(-1) === second.identity || undefined,
    );
    assert.deepEqual(watch.seen, [first.identity, second.identity]);
  } finally {
    await watch.stop();
    await stopAll(replicas);
  }
});

Deno.test("a Lease that a foreign holder keeps renewing is never taken; once it stops, it is", async () => {
  const { client } = await testCluster();
  const lease = await target();
  const now = formatMicroTime(new Date());
  let record = await createLease(client, lease, {
    holderIdentity: "foreign",
    leaseDurationSeconds: 3,
    acquireTime: now,
    renewTime: now,
    leaseTransitions: 7,
  });
  const replicas = await Promise.all(["a", "b"].map((name) => replica(lease, `replica-${name}`)));
  try {
    // Renew as the foreign holder for three lease durations.
    const until = Date.now() + 9_000;
    while (Date.now() < until) {
      // Not a wait: the pace of the foreign holder's renewals is the scenario.
      await settle(0.5);
      record = await replaceLease(client, record, { ...record.spec, renewTime: formatMicroTime(new Date()) });
    }
    assert.deepEqual(leaders(replicas), []);
    for (const r of replicas) {
      assert.deepEqual(r.changes, []);
      assert.equal(writes(r), 0, `${r.identity} wrote to a Lease held by a live foreign holder`);
    }
    assert.equal((await getLease(client, lease)).spec?.holderIdentity, "foreign");

    // The foreign holder stops renewing: one of the replicas takes over after the expiry.
    const taker = await oneLeader(replicas);
    const taken = await getLease(client, lease);
    assert.equal(taken.spec?.holderIdentity, taker.identity);
    assert.equal(taken.spec?.leaseTransitions, 8);
  } finally {
    await stopAll(replicas);
  }
});
