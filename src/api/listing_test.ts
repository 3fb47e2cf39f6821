import assert from "node:assert/strict";
import type { KubernetesObject } from "../model/body.ts";
import { Listing } from "./listing.ts";
import { identityOf, type ObjectIdentity, type WatchEvent } from "./watch_state.ts";

function obj(name: string, rv: string): KubernetesObject {
  return { metadata: { name, namespace: "ns", uid: `uid-${name}`, resourceVersion: rv } };
}

function describe(event: WatchEvent | undefined): string {
  if (!event) return "nothing";
  if (event.type === "LISTED") return "LISTED";
  const relisted = "relisted" in event && event.relisted ? " relisted" : "";
  return `${event.type} ${event.object.metadata.name} ${event.object.metadata.resourceVersion}${relisted}`;
}

function knowing(...objects: KubernetesObject[]): Map<string, ObjectIdentity> {
  return new Map(objects.map((object) => [object.metadata.uid!, identityOf(object)]));
}

Deno.test("a first listing overtaken by its watch: a change not yet listed comes as first seen, its listed state never", () => {
  const known = knowing();
  const listing = new Listing({ known, fresh: true });
  assert.equal(describe(listing.offer(obj("a", "1"))), "null a 1");
  // The watch (from the listing's resourceVersion) brings b's change before the listing reaches b.
  assert.equal(describe(listing.overtake("uid-b", "MODIFIED", obj("b", "12"))), "null b 12");
  known.set("uid-b", identityOf(obj("b", "12")));
  // ... and a's change after the listing brought a: an ordinary change.
  assert.equal(describe(listing.overtake("uid-a", "MODIFIED", obj("a", "13"))), "MODIFIED a 13");
  // Objects created or deleted after the listing's moment come as they are.
  assert.equal(describe(listing.overtake("uid-n", "ADDED", obj("n", "14"))), "ADDED n 14");
  assert.equal(describe(listing.overtake("uid-c", "DELETED", obj("c", "15"))), "DELETED c 15");
  // The listing's older states of b and c are dropped when they come; nothing counts as deleted.
  assert.equal(describe(listing.offer(obj("b", "2"))), "nothing");
  assert.equal(describe(listing.offer(obj("c", "3"))), "nothing");
  assert.equal(describe(listing.offer(obj("d", "4"))), "null d 4");
  assert.deepEqual([...listing.deletions()].map(describe), []);
  assert.equal(known.get("uid-b")?.metadata.resourceVersion, "12", "the watch's state stays known, not the listed one");
});

Deno.test("a relisting overtaken by its watch: changes come as they are, and what the watch brought is no deletion", () => {
  const known = knowing(obj("a", "1"), obj("b", "2"), obj("c", "3"));
  const listing = new Listing({ known, fresh: false });
  assert.equal(describe(listing.overtake("uid-a", "MODIFIED", obj("a", "20"))), "MODIFIED a 20");
  known.set("uid-a", identityOf(obj("a", "20")));
  assert.equal(describe(listing.overtake("uid-b", "DELETED", obj("b", "21"))), "DELETED b 21");
  known.delete("uid-b");
  assert.equal(describe(listing.offer(obj("a", "10"))), "nothing");
  assert.equal(describe(listing.offer(obj("b", "11"))), "nothing");
  assert.equal(describe(listing.offer(obj("d", "12"))), "ADDED d 12 relisted");
  // Not listed and not seen by the watch: deleted while nobody watched.
  assert.deepEqual([...listing.deletions()].map(describe), ["DELETED c 3 relisted"]);
  assert.deepEqual([...known.keys()].sort(), ["uid-a", "uid-d"]);
});

Deno.test("a known object to revisit that the watch overtakes comes as first seen", () => {
  const known = knowing(obj("a", "1"), obj("b", "2"));
  const listing = new Listing({ known, fresh: true, revisit: (uid) => uid === "uid-a" });
  assert.equal(describe(listing.overtake("uid-a", "MODIFIED", obj("a", "5"))), "null a 5");
  assert.equal(describe(listing.overtake("uid-b", "MODIFIED", obj("b", "6"))), "MODIFIED b 6");
});
