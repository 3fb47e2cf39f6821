/**
 * The peering engine alone against the shared cluster: its keep-alive record and its removal,
 * pausing for peers of a higher or the same priority and resuming when they go, dead records
 * removed, mandatory peering waiting for its object, namespaced peering in several namespaces,
 * and stealthy keep-alives. Every test uses its own peering name and deletes what it creates.
 */

import assert from "node:assert/strict";
import { resourcePath } from "../src/api/paths.ts";
import type { KubernetesObject } from "../src/model/body.ts";
import { formatLastseen, parseLastseen } from "../src/model/peering.ts";
import { Peering, type PeeringOptions } from "../src/engines/peering.ts";
import {
  CLUSTER_PEERING_RESOURCE,
  NAMESPACED_PEERING_RESOURCE,
  type PeeringTarget,
  removePeer,
  writePeers,
} from "../src/engines/peering_records.ts";
import { PeeringSettings } from "../src/settings/peering.ts";
import { WatchingSettings } from "../src/settings/watching.ts";
import { applyCrds, freshNamespace, testCluster } from "./support/cluster.ts";
import { eventually } from "./support/eventually.ts";
import { captureLogs } from "./support/logs.ts";

let applied: Promise<void> | undefined;

function applyPeeringCrds(): Promise<void> {
  applied ??= testCluster().then(({ client }) => applyCrds(client, new URL("../peering.yaml", import.meta.url)));
  return applied;
}

function uniqueName(): string {
  return `peer-${crypto.randomUUID().slice(0, 8)}`;
}

function resourceOf(target: PeeringTarget) {
  return target.namespace === null ? CLUSTER_PEERING_RESOURCE : NAMESPACED_PEERING_RESOURCE;
}

async function createPeering(target: PeeringTarget): Promise<void> {
  await applyPeeringCrds();
  const { client } = await testCluster();
  const resource = resourceOf(target);
  const body = {
    apiVersion: "kopf.dev/v1",
    kind: resource.kind,
    metadata: { name: target.name, ...(target.namespace === null ? {} : { namespace: target.namespace }) },
  };
  await eventually(`${resource.kind} ${target.name} to be created`, async () => {
    await client.request({ method: "POST", path: resourcePath(resource, { namespace: target.namespace }), body });
    return true;
  });
}

async function deletePeering(target: PeeringTarget): Promise<void> {
  const { client } = await testCluster();
  const path = resourcePath(resourceOf(target), { namespace: target.namespace, name: target.name });
  await client.request({ method: "DELETE", path }).catch(() => {});
}

async function peeringStatus(target: PeeringTarget): Promise<Record<string, Record<string, unknown>>> {
  const { client } = await testCluster();
  const path = resourcePath(resourceOf(target), { namespace: target.namespace, name: target.name });
  const body = await client.request<KubernetesObject>({ path });
  return (body.status as Record<string, Record<string, unknown>> | undefined) ?? {};
}

/** Starts a peering engine with the test cluster's client; the settings are cluster-wide unless told. */
async function startPeering(
  name: string,
  fields: Partial<PeeringSettings> = {},
  options: Partial<PeeringOptions> = {},
): Promise<{ peering: Peering; changes: boolean[]; identity: string }> {
  await applyPeeringCrds();
  const { client } = await testCluster();
  const identity = `engine-${crypto.randomUUID().slice(0, 8)}`;
  const changes: boolean[] = [];
  const settings = Object.assign(new PeeringSettings(), { name, clusterwide: true }, fields);
  const peering = await Peering.start({
    client,
    settings,
    watching: new WatchingSettings(),
    identity,
    namespaces: [],
    onChange: (paused) => changes.push(paused),
    ...options,
  });
  return { peering, changes, identity };
}

function other(priority: number, lifetime = 60, ageSeconds = 0) {
  return { priority, lifetime, lastseen: formatLastseen(new Date(Date.now() - ageSeconds * 1000)) };
}

Deno.test("peering engine: the keep-alive record appears with priority, lifetime, lastseen; close() removes it", async () => {
  const target: PeeringTarget = { name: uniqueName(), namespace: null };
  await createPeering(target);
  const { peering, identity } = await startPeering(target.name, { priority: 7, lifetime: 30 });
  try {
    assert.equal(peering.active, true);
    assert.equal(peering.paused, false);
    const record = await eventually("the keep-alive record", async () => (await peeringStatus(target))[identity]);
    assert.equal(record.priority, 7);
    assert.equal(record.lifetime, 30);
    const lastseen = parseLastseen(record.lastseen);
    assert.ok(lastseen && Math.abs(lastseen.getTime() - Date.now()) < 60_000, String(record.lastseen));
    await peering.close();
    assert.equal(identity in await peeringStatus(target), false);
  } finally {
    await peering.close();
    await deletePeering(target);
  }
});

Deno.test("peering engine: a live higher-priority peer pauses; its removal resumes", async () => {
  const { client } = await testCluster();
  const target: PeeringTarget = { name: uniqueName(), namespace: null };
  await createPeering(target);
  const { peering, changes } = await startPeering(target.name);
  try {
    assert.equal(peering.paused, false);
    await writePeers(client, target, { "boss@elsewhere": other(100) });
    await eventually("the pause", () => changes.length >= 1 || undefined);
    assert.deepEqual(changes, [true]);
    assert.equal(peering.paused, true);
    await removePeer(client, target, "boss@elsewhere");
    await eventually("the resumption", () => changes.length >= 2 || undefined);
    assert.deepEqual(changes, [true, false]);
    assert.equal(peering.paused, false);
  } finally {
    await peering.close();
    await deletePeering(target);
  }
});

Deno.test("peering engine: a live peer of the same priority pauses (all of them, self included)", async () => {
  const { client } = await testCluster();
  const target: PeeringTarget = { name: uniqueName(), namespace: null };
  await createPeering(target);
  await writePeers(client, target, { "twin@elsewhere": other(3) });
  const lines = await captureLogs();
  const { peering } = await startPeering(target.name, { priority: 3 });
  try {
    assert.equal(peering.paused, true);
    assert.ok(lines.some((line) => line.startsWith("Pausing all operators, including self: [twin@elsewhere]")));
  } finally {
    await peering.close();
    await deletePeering(target);
  }
});

Deno.test("peering engine: an expired record is removed from the status", async () => {
  const { client } = await testCluster();
  const target: PeeringTarget = { name: uniqueName(), namespace: null };
  await createPeering(target);
  await writePeers(client, target, { "dead@elsewhere": other(100, 10, 120), "live@elsewhere": other(-1) });
  const { peering, identity } = await startPeering(target.name);
  try {
    assert.equal(peering.paused, false);
    await eventually("the removal of the dead record", async () => {
      const status = await peeringStatus(target);
      return !("dead@elsewhere" in status) || undefined;
    });
    const status = await peeringStatus(target);
    assert.ok("live@elsewhere" in status);
    await eventually("own record", async () => identity in await peeringStatus(target) || undefined);
  } finally {
    await peering.close();
    await deletePeering(target);
  }
});

Deno.test("peering engine: mandatory peering without its object pauses until the object is created", async () => {
  const target: PeeringTarget = { name: uniqueName(), namespace: null };
  const lines = await captureLogs();
  const { peering, changes } = await startPeering(target.name, { mandatory: true });
  try {
    assert.equal(peering.paused, true);
    assert.equal(peering.active, true);
    assert.ok(lines.some((line) => line.includes(`ClusterKopfPeering "${target.name}" does not exist`)));
    await createPeering(target);
    await eventually("the resumption", () => changes.length >= 1 || undefined);
    assert.deepEqual(changes, [false]);
    assert.equal(peering.paused, false);
  } finally {
    await peering.close();
    await deletePeering(target);
  }
});

Deno.test("peering engine: namespaced peering keeps records in the KopfPeering of each namespace", async () => {
  const { client } = await testCluster();
  const name = uniqueName();
  const namespaces = [await freshNamespace(client, "peer"), await freshNamespace(client, "peer")];
  const targets: PeeringTarget[] = namespaces.map((namespace) => ({ name, namespace }));
  for (const target of targets) await createPeering(target);
  const { peering, identity } = await startPeering(name, { clusterwide: false }, { namespaces });
  try {
    for (const target of targets) {
      const record = await eventually(
        `the record in ${target.namespace}`,
        async () => (await peeringStatus(target))[identity],
      );
      assert.equal(record.priority, 0);
    }
    // A higher peer in one namespace pauses the whole operator.
    await writePeers(client, targets[1], { "boss@elsewhere": other(10) });
    await eventually("the pause", () => peering.paused || undefined);
    // A namespace no longer served: its record is removed, and its peers no longer count.
    peering.updateNamespaces([namespaces[0]]);
    await eventually("the resumption", () => !peering.paused || undefined);
    await eventually(
      "the removal in the old namespace",
      async () => !(identity in await peeringStatus(targets[1])) || undefined,
    );
    await peering.close();
    for (const target of targets) assert.equal(identity in await peeringStatus(target), false);
  } finally {
    await peering.close();
    for (const target of targets) await deletePeering(target);
  }
});

Deno.test("peering engine: stealth suppresses the keep-alive log lines, not the keep-alives", async () => {
  const target: PeeringTarget = { name: uniqueName(), namespace: null };
  await createPeering(target);
  const lines = await captureLogs();
  // lifetime 7 → a keep-alive every 1–2 s.
  const { peering, identity } = await startPeering(target.name, { stealth: true, lifetime: 7 });
  try {
    const first = await eventually("the first keep-alive", async () => (await peeringStatus(target))[identity]);
    const refreshed = await eventually("a refreshed keep-alive", async () => {
      const record = (await peeringStatus(target))[identity];
      return record && record.lastseen !== first.lastseen ? record : undefined;
    });
    assert.equal(refreshed.lifetime, 7);
    assert.deepEqual(lines.filter((line) => line.includes("Keep-alive in")), []);
  } finally {
    await peering.close();
    await deletePeering(target);
  }
});

Deno.test("peering engine: without stealth, each keep-alive is logged", async () => {
  const target: PeeringTarget = { name: uniqueName(), namespace: null };
  await createPeering(target);
  const lines = await captureLogs();
  const { peering } = await startPeering(target.name, { lifetime: 7 });
  try {
    await eventually(
      "a keep-alive line",
      () => lines.includes(`Keep-alive in '${target.name}' cluster-wide: ok.`) || undefined,
    );
  } finally {
    await peering.close();
    await deletePeering(target);
  }
});
