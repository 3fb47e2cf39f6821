// Unit tests of diffs (features 12.2, 12.3, 33.3): the diff format and order, absent values,
// deep equality, field parsing and resolution, and field-scoped diff reduction.

import assert from "node:assert/strict";
import type { DiffItem as ContextDiffItem } from "../handling/context.ts";
import {
  deepEqual,
  type Diff,
  diff,
  type DiffItem,
  DiffOperation,
  parseField,
  reduceDiff,
  resolveField,
} from "./diff.ts";

Deno.test("diff: equal values give an empty diff", () => {
  assert.deepEqual(diff({ spec: { a: [1, { b: 2 }] } }, { spec: { a: [1, { b: 2 }] } }), []);
  assert.deepEqual(diff(null, null), []);
  assert.deepEqual(diff(undefined, null), []);
  assert.deepEqual(diff("x", "x"), []);
});

Deno.test("diff: creation is one add at the root with the whole essence", () => {
  const essence = { spec: { size: 1 }, metadata: { labels: { a: "b" } } };
  assert.deepEqual(diff(null, essence), [["add", [], null, essence]]);
  assert.deepEqual(diff(undefined, essence), [["add", [], null, essence]]);
});

Deno.test("diff: deletion of everything is one remove at the root", () => {
  assert.deepEqual(diff({ spec: {} }, null), [["remove", [], { spec: {} }, null]]);
});

Deno.test("diff: a changed label and a removed label (12.2 check)", () => {
  const old = { metadata: { labels: { l1: "same", l2: "old", l3: "x" } } };
  const now = { metadata: { labels: { l1: "same", l2: "new" } } };
  const d = diff(old, now);
  assert.deepEqual(d, [
    ["remove", ["metadata", "labels", "l3"], "x", null],
    ["change", ["metadata", "labels", "l2"], "old", "new"],
  ]);
  assert.ok(d.some((item) => deepEqual(item, ["change", ["metadata", "labels", "l2"], "old", "new"])));
  assert.ok(d.some((item) => deepEqual(item, ["remove", ["metadata", "labels", "l3"], "x", null])));
});

Deno.test("diff: scalars are changed as whole values", () => {
  assert.deepEqual(diff({ spec: { x: 1 } }, { spec: { x: 2 } }), [["change", ["spec", "x"], 1, 2]]);
  assert.deepEqual(diff(1, "1"), [["change", [], 1, "1"]]);
  assert.deepEqual(diff(true, 1), [["change", [], true, 1]]);
});

Deno.test("diff: arrays are compared as whole values, never recursed into", () => {
  assert.deepEqual(diff({ spec: { items: [1, 2, 3] } }, { spec: { items: [1, 2, 4] } }), [
    ["change", ["spec", "items"], [1, 2, 3], [1, 2, 4]],
  ]);
  assert.deepEqual(diff({ l: [{ a: 1 }] }, { l: [{ a: 2 }] }), [["change", ["l"], [{ a: 1 }], [{ a: 2 }]]]);
  assert.deepEqual(diff({ l: [1, 2] }, { l: [2, 1] }), [["change", ["l"], [1, 2], [2, 1]]]);
});

Deno.test("diff: an added key is reported once with its whole new subtree", () => {
  assert.deepEqual(diff({ spec: {} }, { spec: { deep: { a: 1, b: [2] } } }), [
    ["add", ["spec", "deep"], null, { a: 1, b: [2] }],
  ]);
});

Deno.test("diff: a removed key is reported once with its whole old subtree", () => {
  assert.deepEqual(diff({ spec: { deep: { a: 1 } }, x: 1 }, { x: 1 }), [[
    "remove",
    ["spec"],
    { deep: { a: 1 } },
    null,
  ]]);
});

Deno.test("diff: objects replaced by non-objects (and back) are changes, not recursed", () => {
  assert.deepEqual(diff({ spec: { a: 1 } }, { spec: [1] }), [["change", ["spec"], { a: 1 }, [1]]]);
  assert.deepEqual(diff({ spec: "s" }, { spec: { a: 1 } }), [["change", ["spec"], "s", { a: 1 }]]);
});

Deno.test("diff: null and undefined both mean absent", () => {
  assert.deepEqual(diff({ a: null }, {}), []);
  assert.deepEqual(diff({}, { a: undefined }), []);
  assert.deepEqual(diff({ a: 1 }, { a: null }), [["remove", ["a"], 1, null]]);
  assert.deepEqual(diff({ a: null }, { a: 1 }), [["add", ["a"], null, 1]]);
  assert.deepEqual(diff({ a: {} }, {}), [["remove", ["a"], {}, null]]);
});

Deno.test("diff: order per level is added keys, then removed keys, then common keys", () => {
  const d = diff({ z: 1, removed: 2, y: { a: 1 } }, { added2: 1, z: 2, y: { a: 2 }, added1: 1 });
  assert.deepEqual(d.map(([op, path]) => [op, path.join(".")]), [
    ["add", "added2"],
    ["add", "added1"],
    ["remove", "removed"],
    ["change", "z"],
    ["change", "y.a"],
  ]);
});

Deno.test("diff: items are [op, path, old, new] tuples with the Kopf operation names", () => {
  const [item] = diff({ a: 1 }, { a: 2 });
  const [op, path, old, now] = item;
  assert.equal(op, DiffOperation.CHANGE);
  assert.deepEqual([DiffOperation.ADD, DiffOperation.CHANGE, DiffOperation.REMOVE], ["add", "change", "remove"]);
  assert.deepEqual(path, ["a"]);
  assert.equal(old, 1);
  assert.equal(now, 2);
  // The context's DiffItem is the same type.
  const typed: ContextDiffItem = item satisfies DiffItem;
  const all: readonly ContextDiffItem[] = diff(null, {}) satisfies Diff;
  assert.ok(typed && all);
});

Deno.test("deepEqual: objects by own keys in any order, arrays in order, null differs from undefined", () => {
  assert.ok(deepEqual({ a: 1, b: { c: [1, 2] } }, { b: { c: [1, 2] }, a: 1 }));
  assert.ok(!deepEqual([1, 2], [2, 1]));
  assert.ok(!deepEqual({ a: 1 }, { a: 1, b: 2 }));
  assert.ok(!deepEqual({ a: 1 }, { b: 1 }));
  assert.ok(!deepEqual({ a: undefined }, { b: undefined }));
  assert.ok(!deepEqual(null, undefined));
  assert.ok(!deepEqual([], {}));
  assert.ok(!deepEqual(1, "1"));
  assert.ok(deepEqual(Number.NaN, Number.NaN));
  assert.ok(deepEqual(0, -0));
});

Deno.test("parseField: dotted strings and arrays", () => {
  assert.deepEqual(parseField("spec.size"), ["spec", "size"]);
  assert.deepEqual(parseField("spec"), ["spec"]);
  assert.deepEqual(parseField(["metadata", "labels", "app.kubernetes.io/name"]), [
    "metadata",
    "labels",
    "app.kubernetes.io/name",
  ]);
  assert.deepEqual(parseField(""), []);
  assert.deepEqual(parseField([]), []);
  const source = ["a"];
  assert.notEqual(parseField(source), source);
});

Deno.test("parseField: anything else is a TypeError", () => {
  assert.throws(() => parseField(5 as unknown as string), TypeError);
  assert.throws(() => parseField(null as unknown as string), TypeError);
  assert.throws(() => parseField([1] as unknown as string[]), TypeError);
});

Deno.test("resolveField: the value at a path, undefined when absent anywhere", () => {
  const value = { spec: { size: 3, nested: { flag: false, nothing: null }, list: [10, 20] }, text: "abc" };
  assert.equal(resolveField(value, "spec.size"), 3);
  assert.equal(resolveField(value, ["spec", "nested", "flag"]), false);
  assert.equal(resolveField(value, "spec.nested.nothing"), null);
  assert.deepEqual(resolveField(value, "spec.nested"), { flag: false, nothing: null });
  assert.equal(resolveField(value, "spec.absent"), undefined);
  assert.equal(resolveField(value, "spec.absent.deeper"), undefined);
  assert.equal(resolveField(value, "text.length"), undefined);
  assert.equal(resolveField(value, "spec.list.0"), undefined);
  assert.equal(resolveField(value, "spec.nested.nothing.x"), undefined);
  assert.equal(resolveField(null, "spec"), undefined);
  assert.equal(resolveField(undefined, "spec"), undefined);
  assert.equal(resolveField(value, []), value);
});

Deno.test("resolveField: only own keys are followed, never the prototype", () => {
  assert.equal(resolveField({}, "constructor"), undefined);
  assert.equal(resolveField({ spec: {} }, "spec.toString"), undefined);
  assert.equal(resolveField({ spec: {} }, "spec.__proto__"), undefined);
});

Deno.test("reduceDiff: items inside the field are re-rooted (12.3 check: one-element paths)", () => {
  const d = diff(
    { spec: { a: 1 }, metadata: { labels: { label1: "x", label2: "y" } } },
    { spec: { a: 2 }, metadata: { labels: { label1: "z", label3: "v" } } },
  );
  assert.deepEqual(reduceDiff(d, "metadata.labels"), [
    ["add", ["label3"], null, "v"],
    ["remove", ["label2"], "y", null],
    ["change", ["label1"], "x", "z"],
  ]);
  assert.ok(reduceDiff(d, "metadata.labels").every(([, path]) => path.length === 1));
  assert.deepEqual(reduceDiff([["add", ["metadata", "labels", "label1"], null, "v"]], ["metadata", "labels"]), [
    ["add", ["label1"], null, "v"],
  ]);
});

Deno.test("reduceDiff: an item exactly at the field becomes a root item", () => {
  assert.deepEqual(reduceDiff([["change", ["spec", "size"], 1, 2]], "spec.size"), [["change", [], 1, 2]]);
});

Deno.test("reduceDiff: items on a parent of the field are re-diffed at the field level", () => {
  const creation: Diff = [["add", [], null, { spec: { size: 1, other: 2 } }]];
  assert.deepEqual(reduceDiff(creation, "spec.size"), [["add", [], null, 1]]);
  assert.deepEqual(reduceDiff(creation, "spec"), [["add", [], null, { size: 1, other: 2 }]]);
  const removal: Diff = [["remove", ["spec"], { size: 1 }, null]];
  assert.deepEqual(reduceDiff(removal, "spec.size"), [["remove", [], 1, null]]);
  const replaced: Diff = [["change", ["spec"], { size: { a: 1, b: 1 } }, "text"]];
  assert.deepEqual(reduceDiff(replaced, "spec.size"), [["remove", [], { a: 1, b: 1 }, null]]);
  const deeper: Diff = [["add", ["spec"], null, { size: { a: 1 } }]];
  assert.deepEqual(reduceDiff(deeper, "spec.size"), [["add", [], null, { a: 1 }]]);
});

Deno.test("reduceDiff: a parent item that does not touch the field gives nothing", () => {
  assert.deepEqual(reduceDiff([["add", ["spec"], null, { other: 1 }]], "spec.size"), []);
  assert.deepEqual(
    reduceDiff([["change", [], { spec: { size: 1, a: 1 } }, { spec: { size: 1, a: 2 } }]], "spec.size"),
    [],
  );
});

Deno.test("reduceDiff: unrelated items are dropped", () => {
  const d: Diff = [
    ["change", ["spec", "sizes"], 1, 2],
    ["change", ["spec", "other"], 1, 2],
    ["add", ["status"], null, {}],
  ];
  assert.deepEqual(reduceDiff(d, "spec.size"), []);
});

Deno.test("reduceDiff: an empty path keeps the diff as it is", () => {
  const d = diff({ a: 1 }, { a: 2, b: 1 });
  assert.deepEqual(reduceDiff(d, []), d);
  assert.deepEqual(reduceDiff(d, ""), d);
});
