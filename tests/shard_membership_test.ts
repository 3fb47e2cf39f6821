/**
 * Shard group membership against a real API server, members in one process: the group converges
 * to an even split of the whole hash space, a joiner and a leaver move about 1/N of it, a member
 * that dies without a word is taken over once its Lease lapses — and at no moment do two members
 * handle the same hash (checked at every change any member applies).
 */

import assert from "node:assert/strict";
import { ShardMembership } from "../src/engines/shard_membership.ts";
import { movedRanges, type ShardRange, shardRangesOverlap, shardRangesShare } from "../src/model/shard_range.ts";
import { WatchingSettings } from "../src/settings/watching.ts";
import { sleep } from "../src/utils/sleep.ts";
import { freshNamespace, testCluster } from "./support/cluster.ts";
import { eventually } from "./support/eventually.ts";

const LEASE_DURATION = 3;

/** What each member handles now, and every overlap ever seen when one started handling more. */
class Handling {
  readonly current = new Map<string, readonly ShardRange[]>();
  readonly overlaps: string[] = [];
  /** Members that gave up some of what they handled, at each change. */
  readonly losses: string[] = [];

  applier(member: string): (ranges: readonly ShardRange[]) => Promise<void> {
    return (ranges) => {
      for (const [other, theirs] of this.current) {
        if (other !== member && shardRangesOverlap(theirs, ranges)) this.overlaps.push(`${member} and ${other}`);
      }
      if (movedRanges(this.current.get(member) ?? [], ranges).lost.length) this.losses.push(member);
      this.current.set(member, ranges);
      return Promise.resolve();
    };
  }

  /** The members' shares when every hash is handled by exactly one of `members`, else `undefined`. */
  settled(members: readonly string[]): Map<string, number> | undefined {
    const shares = new Map(members.map((member) => [member, shardRangesShare(this.current.get(member) ?? [])]));
    const total = [...shares.values()].reduce((sum, share) => sum + share, 0);
    const others = [...this.current].filter(([member, ranges]) => !members.includes(member) && ranges.length);
    return Math.abs(total - 1) < 1e-9 && others.length === 0 ? shares : undefined;
  }
}

Deno.test("a shard group splits the hash space evenly, hands over on join, leave and death, never overlapping", async () => {
  const { client } = await testCluster();
  const namespace = await freshNamespace(client, "shards");
  const handling = new Handling();
  const crashes = new Map<string, AbortController>();
  const join = (identity: string) => {
    const crash = new AbortController();
    crashes.set(identity, crash);
    return ShardMembership.start({
      client,
      group: "test",
      namespace,
      identity,
      leaseDuration: LEASE_DURATION,
      watching: new WatchingSettings(),
      apply: handling.applier(identity),
      signal: crash.signal,
    });
  };
  const converged = (members: string[]) =>
    eventually(`the split among ${members}`, () => handling.settled(members), { seconds: 60 });
  const assertEven = (shares: Map<string, number>) => {
    for (const [member, share] of shares) {
      assert.ok(Math.abs(share - 1 / shares.size) <= 0.1, `${member}: ${share} of ${shares.size}`);
    }
  };

  // Started a moment apart, as the pods of a new Deployment are.
  const first = join("replica-a");
  await sleep(0.2);
  const [a, b] = await Promise.all([first, join("replica-b"), join("replica-c")]);
  assertEven(await converged(["replica-a", "replica-b", "replica-c"]));
  assert.deepEqual([...a.members], ["replica-a", "replica-b", "replica-c"]);
  assert.deepEqual(handling.losses, [], "members started together split the space from the start: no handover");

  const d = await join("replica-d");
  assertEven(await converged(["replica-a", "replica-b", "replica-c", "replica-d"]));

  await b.close();
  assertEven(await converged(["replica-a", "replica-c", "replica-d"]));

  // A death: the member stops renewing and handling at once, and its Lease stays behind.
  crashes.get("replica-c")!.abort();
  handling.current.set("replica-c", []);
  const died = Date.now();
  assertEven(await converged(["replica-a", "replica-d"]));
  const takeover = (Date.now() - died) / 1000;
  assert.ok(takeover >= LEASE_DURATION * 0.9, `its ranges were taken after ${takeover} s, before its Lease lapsed`);

  assert.deepEqual(handling.overlaps, []);
  await Promise.all([a.close(), d.close()]);
  const leases = await client.request<{ items: unknown[] }>({
    path: `/apis/coordination.k8s.io/v1/namespaces/${namespace}/leases`,
  });
  assert.equal(leases.items.length, 1, "the closed members removed their Leases; the dead one's stays");
});
