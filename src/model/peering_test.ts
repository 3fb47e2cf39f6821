import assert from "node:assert/strict";
import {
  buildPeerRecord,
  commandIdentity,
  formatLastseen,
  isExpired,
  operatorIdentity,
  parseLastseen,
  parsePeer,
  parsePeers,
} from "./peering.ts";

const NOW = new Date("2024-05-01T12:34:56.789Z");

Deno.test("an operator's identity is <user>@<host>/<YYYYmmddHHMMSS>/<3 random chars> without POD_ID", () => {
  const identity = operatorIdentity({ podId: "", user: "ann", host: "box", now: NOW, random: () => 0.5 });
  assert.equal(identity, "ann@box/20240501123456/sss");
  const random = operatorIdentity({ podId: "", user: "ann", host: "box", now: NOW });
  assert.match(random, /^ann@box\/20240501123456\/[a-z0-9]{3}$/);
});

Deno.test("POD_ID is the identity of operators and of freeze/resume when set", () => {
  assert.equal(operatorIdentity({ podId: "pod-1", user: "ann", host: "box", now: NOW }), "pod-1");
  assert.equal(commandIdentity({ podId: "pod-1", user: "ann", host: "box" }), "pod-1");
});

Deno.test("freeze/resume's identity is <user>@<host> without POD_ID", () => {
  assert.equal(commandIdentity({ podId: "", user: "ann", host: "box" }), "ann@box");
  assert.match(commandIdentity({ podId: "" }), /^[^@/]+@[^@/]+$/);
});

Deno.test("lastseen is written as ISO UTC with microseconds and +00:00, and read back", () => {
  assert.equal(formatLastseen(NOW), "2024-05-01T12:34:56.789000+00:00");
  assert.deepEqual(parseLastseen(formatLastseen(NOW)), NOW);
  assert.deepEqual(parseLastseen("2024-05-01T12:34:56.789Z"), NOW);
  assert.deepEqual(parseLastseen("2024-05-01T12:34:56.789123"), NOW); // naive = UTC, as Kopf writes
  assert.deepEqual(parseLastseen("2024-05-01T14:34:56.789+02:00"), NOW);
  assert.deepEqual(parseLastseen("2024-05-01T12:34:56"), new Date("2024-05-01T12:34:56Z"));
  assert.equal(parseLastseen("yesterday"), undefined);
  assert.equal(parseLastseen(12), undefined);
});

Deno.test("a record has priority, lifetime and lastseen", () => {
  assert.deepEqual(buildPeerRecord({ priority: 100, lifetime: 60, now: NOW }), {
    priority: 100,
    lifetime: 60,
    lastseen: "2024-05-01T12:34:56.789000+00:00",
  });
});

Deno.test("records are parsed with Kopf's defaults; the deadline is lastseen + lifetime", () => {
  const peer = parsePeer("a", { priority: 5, lifetime: 10, lastseen: "2024-05-01T12:34:56.789Z" })!;
  assert.equal(peer.priority, 5);
  assert.equal(peer.lifetime, 10);
  assert.deepEqual(peer.deadline, new Date("2024-05-01T12:35:06.789Z"));
  assert.equal(isExpired(peer, new Date("2024-05-01T12:35:06.788Z")), false);
  assert.equal(isExpired(peer, new Date("2024-05-01T12:35:06.789Z")), true);

  const bare = parsePeer("b", {}, NOW)!;
  assert.equal(bare.priority, 0);
  assert.equal(bare.lifetime, 60);
  assert.deepEqual(bare.lastseen, NOW);

  assert.equal(parsePeer("c", null), undefined);
  assert.equal(parsePeer("c", "text"), undefined);
  assert.equal(parsePeer("c", [1]), undefined);
});

Deno.test("all records of a status are parsed; other values are left out", () => {
  const peers = parsePeers({ a: { priority: 1 }, b: "junk", c: { priority: "2", lifetime: 0 } }, NOW);
  assert.deepEqual(peers.map((peer) => [peer.identity, peer.priority, peer.lifetime]), [["a", 1, 60], ["c", 2, 0]]);
  assert.deepEqual(parsePeers(undefined), []);
  assert.deepEqual(parsePeers(null), []);
});
