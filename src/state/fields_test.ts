// Field paths in bodies and patches: Kopf's dicts.resolve/ensure/remove semantics, and the fixed stanzas of a Patch.

import assert from "node:assert/strict";
import { Patch } from "../model/patch.ts";
import {
  cherrypick,
  ensureField,
  ensureInPatch,
  formatField,
  parseField,
  removeField,
  removeFromPatch,
  resolveField,
  resolveInPatch,
} from "./fields.ts";

Deno.test("fields: parsing and {name}", () => {
  assert.deepEqual(parseField("status.kopf.progress"), ["status", "kopf", "progress"]);
  assert.deepEqual(parseField(["status", "a.b"]), ["status", "a.b"]);
  assert.deepEqual(formatField("status.{name}.dummy", "op"), ["status", "op", "dummy"]);
  assert.deepEqual(formatField(["status", "{name}"], "op"), ["status", "{name}"]);
});

Deno.test("fields: resolve, ensure, remove with emptied parents", () => {
  const value: Record<string, unknown> = { a: { b: { c: 1 }, n: null }, s: "str" };
  assert.equal(resolveField(value, ["a", "b", "c"]), 1);
  assert.equal(resolveField(value, ["a", "n"]), null);
  assert.equal(resolveField(value, ["a", "x"]), undefined);
  assert.equal(resolveField(value, ["s", "x"]), undefined);
  ensureField(value, ["x", "y"], 2);
  assert.deepEqual(value.x, { y: 2 });
  assert.throws(() => ensureField(value, ["s", "y"], 1), TypeError);
  removeField(value, ["a", "b", "c"]);
  assert.deepEqual(value.a, { n: null });
  removeField(value, ["x", "y"]);
  removeField(value, ["s", "y"]);
  removeField(value, ["nothing", "here"]);
  assert.deepEqual(value, { a: { n: null }, s: "str" });
  const deep = { a: { b: { c: 1, d: 2 }, e: { f: { g: 3 } } } };
  removeField(deep, ["a", "b", "c"]);
  removeField(deep, ["a", "e", "f", "g"], 1);
  assert.deepEqual(deep, { a: { b: { d: 2 } } }, "emptied parents go up to the first one kept or still holding more");
  removeField(deep, ["a", "b", "d"], 1);
  assert.deepEqual(deep, { a: {} }, "the levels kept stay, emptied");
  const dst = {};
  cherrypick(value, dst, ["a.n", "a.missing", "s"]);
  assert.deepEqual(dst, { a: { n: null }, s: "str" });
});

Deno.test("fields: patches keep their stanzas when emptied; other top-level fields go to patch.other", () => {
  const patch = new Patch();
  ensureInPatch(patch, ["status", "kopf", "progress", "fn"], { retries: 1 });
  ensureInPatch(patch, ["metadata", "annotations", "a/b"], null);
  ensureInPatch(patch, ["data", "key"], "value");
  assert.deepEqual(resolveInPatch(patch, ["status", "kopf", "progress", "fn"]), { retries: 1 });
  assert.equal(resolveInPatch(patch, ["metadata", "annotations", "a/b"]), null);
  assert.deepEqual(patch.toMergePatch(), {
    data: { key: "value" },
    metadata: { annotations: { "a/b": null } },
    status: { kopf: { progress: { fn: { retries: 1 } } } },
  });
  removeFromPatch(patch, ["status", "kopf", "progress", "fn"]);
  removeFromPatch(patch, ["metadata", "annotations", "a/b"]);
  removeFromPatch(patch, ["data", "key"]);
  assert.deepEqual([patch.status, patch.metadata, patch.other], [{}, { labels: {}, annotations: {} }, {}]);
});
