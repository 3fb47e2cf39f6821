/**
 * Leader election end to end: three `kopf run --leader-elect` processes against the shared
 * cluster. Only the holder of the Lease handles objects; when it is killed (SIGKILL, no release)
 * another replica takes over once the Lease expires, and when the next leader stops gracefully it
 * releases the Lease and the last replica takes over. Every object created during the test is
 * handled exactly once, by the replica that led when it was created.
 *
 * With the peering CRDs present (not standalone), the replicas share one peering record, the
 * Lease's: a new leader never pauses in favour of its dead predecessor's record (issue 11,
 * defect 9).
 *
 * How fast the hand-overs are is measured by bench/leader_failover.ts, not asserted here.
 */

import assert from "node:assert/strict";
import { resourcePath } from "../src/api/paths.ts";
import type { KubernetesObject } from "../src/model/body.ts";
import { createExample, freshNamespace, testCluster, waitForStatus } from "./support/cluster.ts";
import { eventually } from "./support/eventually.ts";
import { KopfProcess } from "./support/kopf_process.ts";
import { createPeering, peeringStatus } from "./support/peering.ts";

const HANDLERS = "tests/fixtures/replicas/handlers.ts";
const LEASES = { group: "coordination.k8s.io", version: "v1", plural: "leases", namespaced: true };

/** The holder of a Lease now ("" when released or absent). */
async function holderOf(namespace: string, name: string): Promise<string> {
  const { client } = await testCluster();
  try {
    const lease = await client.request<KubernetesObject>({ path: resourcePath(LEASES, { namespace, name }) });
    return ((lease.spec as { holderIdentity?: string } | undefined)?.holderIdentity) ?? "";
  } catch {
    return "";
  }
}

/** How many times a process has logged the success of the creation handler for an object. */
function successes(process: KopfProcess, name: string): number {
  return process.lines.filter((line) => line.includes(`/${name}] Handler 'createFn' succeeded.`)).length;
}

Deno.test("three replicas with --leader-elect: each object is handled exactly once, by the leader, across a SIGKILL and a graceful stop", async () => {
  const { client } = await testCluster();
  const namespace = await freshNamespace(client, "leader");
  const lease = `lease-${crypto.randomUUID().slice(0, 8)}`;
  // Short durations keep the test quick; the bench measures the defaults.
  const args = [
    "run",
    "-n",
    namespace,
    "--leader-elect",
    "--leader-elect-resource-name",
    lease,
    "--leader-elect-resource-namespace",
    namespace,
    "--leader-elect-lease-duration",
    "4",
    "--leader-elect-renew-deadline",
    "3",
    "--leader-elect-retry-period",
    "0.5",
    HANDLERS,
  ];
  const replicas = new Map<string, KopfProcess>();
  for (const identity of ["replica-1", "replica-2", "replica-3"]) {
    replicas.set(identity, await KopfProcess.command(args, { POD_ID: identity }));
  }
  try {
    const batches: { leader: string; objects: string[] }[] = [];
    const createBatch = async (prefix: string, leader: string) => {
      const objects = [1, 2, 3, 4, 5].map((i) => `${prefix}-${i}`);
      for (const name of objects) await createExample(client, namespace, name);
      batches.push({ leader, objects });
      for (const name of objects) await waitForStatus(namespace, name, "createFn");
    };

    const first = await eventually("a leader", async () => (await holderOf(namespace, lease)) || undefined);
    assert.ok(replicas.has(first), first);
    await createBatch("first", first);

    // A crash: no release; another replica takes the Lease once it expires.
    await replicas.get(first)!.stop("SIGKILL");
    await createBatch("second", "");
    const second = await eventually("a new leader", async () => {
      const holder = await holderOf(namespace, lease);
      return holder && holder !== first ? holder : undefined;
    });
    assert.ok(replicas.has(second), second);
    batches[1].leader = second;

    // A graceful stop: the leader releases the Lease; the last replica takes it.
    const stopped = await replicas.get(second)!.stop("SIGTERM");
    assert.equal(stopped.code, 0, replicas.get(second)!.output);
    const third = [...replicas.keys()].find((identity) => identity !== first && identity !== second)!;
    await createBatch("third", third);
    assert.equal(await holderOf(namespace, lease), third);
    await replicas.get(third)!.stop("SIGTERM");

    for (const { leader, objects } of batches) {
      for (const name of objects) {
        const counts = [...replicas].map(([identity, process]) => [identity, successes(process, name)] as const);
        const total = counts.reduce((sum, [, count]) => sum + count, 0);
        assert.equal(total, 1, `${name} is handled ${total} times: ${JSON.stringify(counts)}`);
        assert.equal(
          successes(replicas.get(leader)!, name),
          1,
          `${name} is handled by ${leader}: ${JSON.stringify(counts)}`,
        );
      }
    }
  } finally {
    for (const process of replicas.values()) await process.stop("SIGKILL");
  }
});

Deno.test("three --leader-elect replicas with peering: after a SIGKILL of the leader, the new one takes over the group's peering record and never pauses for its predecessor", async () => {
  const { client } = await testCluster();
  const namespace = await freshNamespace(client, "leader-peer");
  // Kopf's default peering name, so that peering is on without any peering option (not mandatory).
  await createPeering(namespace, { name: "default" });
  const lease = `lease-${crypto.randomUUID().slice(0, 8)}`;
  const args = [
    "run",
    "-n",
    namespace,
    "--leader-elect",
    "--leader-elect-resource-name",
    lease,
    "--leader-elect-resource-namespace",
    namespace,
    "--leader-elect-lease-duration",
    "4",
    "--leader-elect-renew-deadline",
    "3",
    "--leader-elect-retry-period",
    "0.5",
    HANDLERS,
  ];
  const replicas = new Map<string, KopfProcess>();
  for (const identity of ["replica-1", "replica-2", "replica-3"]) {
    replicas.set(identity, await KopfProcess.command(args, { POD_ID: identity }));
  }
  const paused = () =>
    [...replicas].flatMap(([identity, process]) =>
      process.lines.filter((line) => /Pausing/.test(line)).map((line) => `${identity}: ${line}`)
    );
  try {
    const first = await eventually("a leader", async () => (await holderOf(namespace, lease)) || undefined);
    await createExample(client, namespace, "before");
    await waitForStatus(namespace, "before", "createFn");
    const records = await eventually("the leader's peering record", async () => {
      const keys = Object.keys(await peeringStatus(namespace, "default"));
      return keys.length ? keys : undefined;
    });
    assert.equal(records.length, 1, `one record for the group: ${records}`);

    // A crash: the dead leader's record stays fresh for the peering lifetime (60 s).
    await replicas.get(first)!.stop("SIGKILL");
    await createExample(client, namespace, "after");
    const second = await eventually("a new leader", async () => {
      const holder = await holderOf(namespace, lease);
      return holder && holder !== first ? holder : undefined;
    });
    // The object is handled, or a replica pauses (for its dead predecessor's record): whichever comes first.
    const pausing = new AbortController();
    await Promise.race([
      waitForStatus(namespace, "after", "createFn"),
      eventually(
        "a replica to pause",
        () => pausing.signal.aborted ? true : paused().length ? paused() : undefined,
        { seconds: 120 },
      )
        .then((lines) => lines === true || assert.fail(`a replica pauses for its group:\n${lines.join("\n")}`)),
    ]).finally(() => pausing.abort());
    // The operator writes its log in batches (within 50 ms): the line may follow the status by a moment.
    await eventually("the new leader's success line", () => successes(replicas.get(second)!, "after") > 0 || undefined);
    assert.equal(successes(replicas.get(second)!, "after"), 1, replicas.get(second)!.output);
    assert.deepEqual(paused(), [], "no replica pauses for another one of its group");
    assert.deepEqual(
      Object.keys(await peeringStatus(namespace, "default")),
      [`lease:${namespace}/${lease}`],
      "the group's record is the Lease's",
    );

    // A graceful stop of the last leader of the group removes the group's record.
    const rest = [...replicas.keys()].filter((identity) => identity !== first);
    for (const identity of rest) {
      const status = await replicas.get(identity)!.stop("SIGTERM");
      assert.equal(status.code, 0, replicas.get(identity)!.output);
    }
    assert.deepEqual(paused(), [], "no replica pauses for another one of its group");
    assert.deepEqual(await peeringStatus(namespace, "default"), {});
  } finally {
    for (const process of replicas.values()) await process.stop("SIGKILL");
  }
});

Deno.test("leader-election durations out of order stop the operator with a message naming them, exit code 1", async () => {
  const { client } = await testCluster();
  const namespace = await freshNamespace(client, "leader-bad");
  const args = [
    "-n",
    namespace,
    "--leader-elect",
    "--leader-elect-lease-duration",
    "2",
    "--leader-elect-renew-deadline",
    "5",
  ];
  await using kopf = await KopfProcess.command(["run", ...args, HANDLERS]);
  const status = await kopf.exited;
  assert.equal(status.code, 1, kopf.output);
  assert.match(kopf.output, /leaseDuration > renewDeadline > retryPeriod > 0 \(seconds\), but they are 2 > 5 > 2/);
});
