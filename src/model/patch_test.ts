import assert from "node:assert/strict";
import { Patch } from "./patch.ts";

/** Patches built in different ways, and whether their rendering is empty. */
const cases: [string, (patch: Patch) => void][] = [
  ["nothing written", () => {}],
  ["only undefined values", (patch) => {
    patch.spec.a = undefined;
    patch.metadata.labels = {};
    (patch.metadata as Record<string, unknown>).owner = undefined;
    patch.other.data = undefined;
  }],
  ["a status field", (patch) => patch.status.done = { ok: true }],
  ["a deletion (null)", (patch) => patch.spec.replicas = null],
  ["an empty object inside", (patch) => patch.status.created = {}],
  ["a nested undefined (rendered as an empty object)", (patch) => patch.spec.a = { b: undefined }],
  ["a label", (patch) => patch.metadata.labels.app = "x"],
  ["an annotation removed", (patch) => patch.metadata.annotations.note = null],
  ["another metadata field", (patch) => patch.metadata.finalizers = []],
  ["another top-level field", (patch) => patch.other.data = { key: "value" }],
];

for (const [name, write] of cases) {
  Deno.test(`Patch.empty agrees with the rendered merge-patch: ${name}`, () => {
    const patch = new Patch();
    write(patch);
    assert.equal(patch.empty, Object.keys(patch.toMergePatch()).length === 0);
  });
}

Deno.test("Patch.empty: only the writes that render make a patch non-empty", () => {
  const empty = cases.filter(([, write]) => {
    const patch = new Patch();
    write(patch);
    return patch.empty;
  }).map(([name]) => name);
  assert.deepEqual(empty, ["nothing written", "only undefined values"]);
});

Deno.test("Patch.toMergePatch: the stanzas made up front are left out while empty; empty objects written are kept", () => {
  const patch = new Patch();
  patch.spec.a = undefined;
  patch.status.created = {};
  patch.metadata.labels.app = "x";
  delete patch.metadata.labels.app;
  patch.metadata.annotations.note = null;
  assert.deepEqual(patch.toMergePatch(), { metadata: { annotations: { note: null } }, status: { created: {} } });
});
