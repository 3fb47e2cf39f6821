import assert from "node:assert/strict";
import { parsePeers } from "./peering.ts";
import { findConflicts } from "./peering_conflicts.ts";

const NOW = new Date("2024-05-01T12:00:30Z");
const ids = (peers: { identity: string }[]) => peers.map((peer) => peer.identity).sort();

Deno.test("conflicts: no peers but self → not paused, nothing to remove, no recheck", () => {
  const peers = parsePeers({ me: { priority: 0, lifetime: 60, lastseen: "2024-05-01T12:00:00Z" } }, NOW);
  const verdict = findConflicts({ peers, identity: "me", priority: 0, now: NOW });
  assert.deepEqual(verdict, { dead: [], higher: [], same: [], paused: false, recheckAt: undefined });
});

Deno.test("conflicts: own record is never dead nor conflicting, even when expired", () => {
  const peers = parsePeers({ me: { priority: 5, lifetime: 10, lastseen: "2024-05-01T11:00:00Z" } }, NOW);
  const verdict = findConflicts({ peers, identity: "me", priority: 0, now: NOW });
  assert.equal(verdict.dead.length, 0);
  assert.equal(verdict.higher.length, 0);
  assert.equal(verdict.paused, false);
});

Deno.test("conflicts: expired peers are dead whatever their priority, and do not pause", () => {
  const peers = parsePeers({
    old: { priority: 100, lifetime: 10, lastseen: "2024-05-01T12:00:00Z" },
    older: { priority: 0, lifetime: 60, lastseen: "2024-05-01T11:00:00Z" },
    // The deadline is exactly now: expired.
    edge: { priority: 100, lifetime: 30, lastseen: "2024-05-01T12:00:00Z" },
  }, NOW);
  const verdict = findConflicts({ peers, identity: "me", priority: 0, now: NOW });
  assert.deepEqual(ids(verdict.dead), ["edge", "old", "older"]);
  assert.equal(verdict.paused, false);
  assert.equal(verdict.recheckAt, undefined);
});

Deno.test("conflicts: a live higher-priority peer pauses; lower ones do not", () => {
  const peers = parsePeers({
    boss: { priority: 10, lifetime: 60, lastseen: "2024-05-01T12:00:00Z" },
    minion: { priority: -1, lifetime: 60, lastseen: "2024-05-01T12:00:00Z" },
  }, NOW);
  const verdict = findConflicts({ peers, identity: "me", priority: 0, now: NOW });
  assert.deepEqual(ids(verdict.higher), ["boss"]);
  assert.deepEqual(verdict.same, []);
  assert.deepEqual(verdict.dead, []);
  assert.equal(verdict.paused, true);
  assert.equal(verdict.recheckAt?.toISOString(), "2024-05-01T12:01:00.000Z");
});

Deno.test("conflicts: a live peer of the same priority pauses too", () => {
  const peers = parsePeers({ twin: { priority: 3, lifetime: 60, lastseen: "2024-05-01T12:00:10Z" } }, NOW);
  const verdict = findConflicts({ peers, identity: "me", priority: 3, now: NOW });
  assert.deepEqual(ids(verdict.same), ["twin"]);
  assert.deepEqual(verdict.higher, []);
  assert.equal(verdict.paused, true);
  assert.equal(verdict.recheckAt?.toISOString(), "2024-05-01T12:01:10.000Z");
});

Deno.test("conflicts: recheckAt is the earliest deadline among the blocking peers only", () => {
  const peers = parsePeers({
    late: { priority: 10, lifetime: 600, lastseen: "2024-05-01T12:00:00Z" },
    soon: { priority: 0, lifetime: 20, lastseen: "2024-05-01T12:00:20Z" }, // same priority: 12:00:40
    lower: { priority: -5, lifetime: 1, lastseen: "2024-05-01T12:00:29.5Z" }, // not blocking
  }, NOW);
  const verdict = findConflicts({ peers, identity: "me", priority: 0, now: NOW });
  assert.equal(verdict.recheckAt?.toISOString(), "2024-05-01T12:00:40.000Z");
});

Deno.test("conflicts: a record without a lifetime lives 60 s; without a priority it has 0", () => {
  const peers = parsePeers({ bare: { lastseen: "2024-05-01T12:00:00Z" } }, NOW);
  const verdict = findConflicts({ peers, identity: "me", priority: 0, now: NOW });
  assert.deepEqual(ids(verdict.same), ["bare"]);
  assert.equal(verdict.recheckAt?.toISOString(), "2024-05-01T12:01:00.000Z");
  const later = new Date("2024-05-01T12:01:00Z");
  assert.deepEqual(ids(findConflicts({ peers, identity: "me", priority: 0, now: later }).dead), ["bare"]);
});
