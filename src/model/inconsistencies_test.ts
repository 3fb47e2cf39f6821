import assert from "node:assert/strict";
import type { JsonObject } from "./body.ts";
import { patchHeld, patchInconsistencies } from "./inconsistencies.ts";

const body = {
  metadata: { name: "x", labels: { a: "1" } },
  spec: { size: 2 },
  status: { createFn: { message: "hi" } },
};

Deno.test("a patch that the object shows has no inconsistencies", () => {
  assert.deepEqual(
    patchInconsistencies({
      spec: { size: 2 },
      status: { createFn: { message: "hi" } },
      metadata: { labels: { b: null } },
    }, body),
    [],
  );
});

Deno.test("pruned, changed and surviving fields are reported", () => {
  assert.deepEqual(
    patchInconsistencies({ status: { pruned: { x: 1 } }, spec: { size: 3 }, metadata: { labels: { a: null } } }, body),
    [
      ["add", ["status", "pruned", "x"], null, 1],
      ["change", ["spec", "size"], 2, 3],
      ["remove", ["metadata", "labels", "a"], "1", null],
    ],
  );
});

Deno.test("an empty object creates an object where there is none", () => {
  assert.deepEqual(patchInconsistencies({ status: { x: {} } }, body), [["add", ["status", "x"], null, {}]]);
  assert.deepEqual(patchInconsistencies({ metadata: { labels: {} } }, body), []);
});

Deno.test("an object holds a patch exactly when the patch has no inconsistencies with it", () => {
  const patches: JsonObject[] = [
    { spec: { size: 2 }, status: { createFn: { message: "hi" } }, metadata: { labels: { b: null } } },
    { status: { pruned: { x: 1 } }, spec: { size: 3 }, metadata: { labels: { a: null } } },
    { status: { x: {} } },
    { metadata: { labels: {} } },
    { metadata: { finalizers: [] } },
    { spec: { size: 2 }, status: { createFn: { message: "bye" } } },
    {},
  ];
  for (const patch of patches) {
    assert.equal(patchHeld(patch, body), patchInconsistencies(patch, body).length === 0, JSON.stringify(patch));
  }
  assert.equal(patchHeld({ spec: { size: 2 } }, body), true);
  assert.equal(patchHeld({ spec: { size: 2, more: 1 } }, body), false);
});
