import assert from "node:assert/strict";
import type { ObjectBackground } from "../engines/background.ts";
import type { StopCause } from "../handling/stopping.ts";
import type { KubernetesObject } from "../model/body.ts";
import { ObjectMemories } from "./object_memories.ts";
import type { ObjectWork } from "./processing.ts";

const object: KubernetesObject = { apiVersion: "v1", kind: "ConfigMap", metadata: { uid: "u1", name: "one" } };
const listed: ObjectWork = { kind: "event", type: null, object };
const added: ObjectWork = { kind: "event", type: "ADDED", object };

Deno.test("an object's memory is made once, with a copy of the memo, marked when first seen by the listing", () => {
  const memo = { team: "a" };
  const memories = new ObjectMemories(memo);
  const memory = memories.recall("u1", listed);
  assert.equal(memory.noticedByListing, true);
  assert.deepEqual(memory.memo, memo);
  assert.notEqual(memory.memo, memo, "each object's memo is its own");
  assert.equal(memories.recall("u1", added), memory);
  assert.equal(memories.get("u1"), memory);
  assert.equal(memories.recall("u2", added).noticedByListing, false);
  assert.equal(memories.recall("u3", { kind: "wakeup", object }).noticedByListing, false);
  assert.equal(memory.background, undefined, "no daemons or timers without a starter");
});

Deno.test("a stale memory does not forget the newer one; forgetting without a memory always does", () => {
  const memories = new ObjectMemories({});
  const first = memories.recall("u1", added);
  memories.forget("u1", first);
  assert.equal(memories.get("u1"), undefined);
  const second = memories.recall("u1", added);
  assert.notEqual(second, first);
  assert.equal(memories.holds("u1", first), false);
  memories.forget("u1", first);
  assert.equal(memories.get("u1"), second);
  memories.forget("u1");
  assert.equal(memories.get("u1"), undefined);
});

Deno.test("new memories get their daemons and timers; shutdown reaches all of them with the cause and grace", async () => {
  const shutdowns: string[] = [];
  const started: string[] = [];
  const memories = new ObjectMemories({}, (uid, memory, body) => {
    started.push(`${uid}:${body.metadata.name}:${memory.noticedByListing}`);
    const fake = { shutdown: (cause: StopCause, grace: number) => shutdowns.push(`${uid}:${cause}:${grace}`) };
    return fake as unknown as ObjectBackground;
  });
  const memory = memories.recall("u1", listed);
  memories.recall("u1", added);
  memories.recall("u2", added);
  assert.deepEqual(started, ["u1:one:true", "u2:one:false"]);
  assert.ok(memory.background);
  await memories.shutdown("operatorExiting", 5);
  assert.deepEqual(shutdowns, ["u1:operatorExiting:5", "u2:operatorExiting:5"]);
  memories.clear();
  assert.equal(memories.get("u1"), undefined);
  assert.equal(memories.get("u2"), undefined);
});
