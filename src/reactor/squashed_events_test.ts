import assert from "node:assert/strict";
import type { KubernetesObject } from "../model/body.ts";
import type { ObjectWork } from "./cycle.ts";
import { REPLACED_KEPT, squashChanges } from "./squashed_events.ts";

function at(version: string): KubernetesObject {
  return { apiVersion: "v1", kind: "ConfigMap", metadata: { uid: "u1", name: "one", resourceVersion: version } };
}

function modified(version: string): ObjectWork {
  return { kind: "event", type: "MODIFIED", object: at(version) };
}

Deno.test("a change replaces the change waiting and keeps its resourceVersion", () => {
  const once = squashChanges(modified("5"), modified("6"));
  assert.deepEqual(once, { kind: "event", type: "MODIFIED", object: at("6"), replaced: ["5"] });
  assert.deepEqual(squashChanges(once!, modified("7")), { ...modified("7"), replaced: ["5", "6"] });
});

Deno.test("only the latest replaced resourceVersions are kept", () => {
  let work = modified("0");
  for (let version = 1; version <= REPLACED_KEPT + 10; version++) work = squashChanges(work, modified(`${version}`))!;
  assert.equal(work.object.metadata.resourceVersion, `${REPLACED_KEPT + 10}`);
  const replaced = work.kind === "event" ? work.replaced ?? [] : [];
  assert.equal(replaced.length, REPLACED_KEPT);
  assert.equal(replaced.at(-1), `${REPLACED_KEPT + 9}`);
});

Deno.test("first sights, deletions, leaving the selection and wake-ups are never merged", () => {
  const cases: [ObjectWork, ObjectWork][] = [
    [{ kind: "event", type: "ADDED", object: at("1") }, modified("2")],
    [{ kind: "event", type: null, object: at("1") }, modified("2")],
    [modified("1"), { kind: "event", type: "DELETED", object: at("2") }],
    [modified("1"), { kind: "event", type: "MODIFIED", object: at("2"), left: true }],
    [{ kind: "event", type: "MODIFIED", object: at("1"), left: true }, modified("2")],
    [{ kind: "wakeup", object: at("1") }, modified("2")],
    [modified("1"), { kind: "wakeup", object: at("2") }],
  ];
  for (const [waiting, next] of cases) {
    assert.equal(squashChanges(waiting, next), undefined, JSON.stringify([waiting, next]));
  }
});

Deno.test("a change found by a relisting marks the event that stands for it (its echoes are not known)", () => {
  const relisted: ObjectWork = { kind: "event", type: "MODIFIED", object: at("1"), relisted: true };
  const merged = squashChanges(relisted, modified("2"));
  assert.equal(merged?.kind === "event" && merged.relisted, true);
  const plain = squashChanges(modified("1"), modified("2"));
  assert.equal(plain?.kind === "event" && plain.relisted, undefined);
});
