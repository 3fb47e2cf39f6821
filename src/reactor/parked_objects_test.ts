import assert from "node:assert/strict";
import type { KubernetesObject } from "../model/body.ts";
import { Gate } from "../utils/gate.ts";
import { ParkedObjects } from "./parked_objects.ts";

function object(name: string, version: string): KubernetesObject {
  return { apiVersion: "v1", kind: "ConfigMap", metadata: { uid: name, name, resourceVersion: version } };
}

function released(): { release: (uid: string, object: KubernetesObject) => void; seen: string[] } {
  const seen: string[] = [];
  return { seen, release: (uid, body) => seen.push(`${uid}@${body.metadata.resourceVersion}`) };
}

Deno.test("behind a closed gate the latest state of each object waits; all are released when it opens", () => {
  const gate = new Gate(false);
  const { release, seen } = released();
  using parked = new ParkedObjects(gate, release);
  assert.equal(parked.closed, true);
  parked.park("a", null, object("a", "1"));
  parked.park("b", "ADDED", object("b", "1"));
  parked.park("a", "MODIFIED", object("a", "2"));
  parked.park("c", "ADDED", object("c", "1"));
  parked.park("c", "DELETED", object("c", "2"));
  assert.equal(parked.size, 2);
  assert.deepEqual(seen, []);
  gate.set(true);
  assert.deepEqual(seen, ["a@2", "b@1"]);
  assert.equal(parked.closed, false);
  assert.equal(parked.size, 0);
  gate.set(false);
  gate.set(true);
  assert.deepEqual(seen, ["a@2", "b@1"], "nothing is released twice");
});

Deno.test("without a gate nothing is ever parked; once disposed, an opening releases nothing", () => {
  assert.equal(new ParkedObjects(undefined, () => {}).closed, false);
  const gate = new Gate(false);
  const { release, seen } = released();
  const parked = new ParkedObjects(gate, release);
  parked.park("a", "ADDED", object("a", "1"));
  parked[Symbol.dispose]();
  gate.set(true);
  assert.deepEqual(seen, []);
  assert.equal(parked.size, 0);
});
