import assert from "node:assert/strict";
import type { Diff } from "../model/diff.ts";
import { maskDiff, maskSensitive, maskValue, sensitiveFieldsOf } from "./sensitive.ts";

const SECRETS = { group: "", plural: "secrets" };
const DIGEST = /^sha256:[0-9a-f]{64}$/;

Deno.test("a core Secret's data and stringData are sensitive; other resources only have the marked fields", () => {
  assert.deepEqual(sensitiveFieldsOf(SECRETS), [["data"], ["stringData"]]);
  assert.deepEqual(sensitiveFieldsOf({ group: "kopf.dev", plural: "secrets" }), []);
  assert.deepEqual(sensitiveFieldsOf({ group: "", plural: "configmaps" }, ["spec.token", ["a", "b.c"]]), [
    ["spec", "token"],
    ["a", "b.c"],
  ]);
});

Deno.test("each key of a mapping field gets its own salted digest; the rest of the object is kept", () => {
  const essence = { data: { a: "YQ==", b: "Yg==" }, type: "Opaque", metadata: { labels: { x: "y" } } };
  const masked = maskSensitive(essence, sensitiveFieldsOf(SECRETS), "uid-1");
  assert.match(masked.data.a, DIGEST);
  assert.match(masked.data.b, DIGEST);
  assert.notEqual(masked.data.a, masked.data.b);
  assert.equal(masked.type, "Opaque");
  assert.equal(masked.metadata, essence.metadata, "untouched parts are shared, not copied");
  assert.deepEqual(essence.data, { a: "YQ==", b: "Yg==" }, "the input is not changed");
  // The same value of another object has another digest; the same object and value, the same one.
  assert.notEqual(maskValue("YQ==", "uid-2"), masked.data.a);
  assert.equal(maskValue("YQ==", "uid-1"), masked.data.a);
});

Deno.test("masking is idempotent and returns the input itself when there is nothing to mask", () => {
  const fields = sensitiveFieldsOf(SECRETS);
  const once = maskSensitive({ data: { a: "YQ==" } }, fields, "u");
  assert.equal(maskSensitive(once, fields, "u"), once);
  const plain = { spec: { a: 1 } };
  assert.equal(maskSensitive(plain, fields, "u"), plain);
  assert.equal(maskSensitive(null, fields, "u"), null);
  // A merge-patch's removal of a key says nothing about the value: it stays null.
  assert.deepEqual(maskSensitive({ data: { a: null } }, fields, "u"), { data: { a: null } });
});

Deno.test("a marked field that is not a mapping is masked as a whole, nested values too", () => {
  const fields = sensitiveFieldsOf({ group: "kopf.dev", plural: "kopfexamples" }, ["spec.token", "spec.list"]);
  const masked = maskSensitive({ spec: { token: "t", list: [1, 2], size: 3 } }, fields, "u");
  assert.match(masked.spec.token, DIGEST);
  assert.match(masked.spec.list as unknown as string, DIGEST);
  assert.equal(masked.spec.size, 3);
});

Deno.test("diff items at, below or above a sensitive field have its values masked", () => {
  const fields = sensitiveFieldsOf(SECRETS);
  const diff: Diff = [
    ["change", ["data", "a"], "b2xk", "bmV3"],
    ["add", ["data"], null, { b: "Yg==" }],
    ["add", [], null, { data: { c: "Yw==" }, type: "Opaque" }],
    ["change", ["type"], "Opaque", "other"],
  ];
  const masked = maskDiff(diff, fields, "u");
  assert.match(masked[0][2] as string, DIGEST);
  assert.match(masked[0][3] as string, DIGEST);
  assert.equal(masked[1][2], null);
  assert.match((masked[1][3] as Record<string, string>).b, DIGEST);
  assert.match((masked[2][3] as { data: Record<string, string> }).data.c, DIGEST);
  assert.equal((masked[2][3] as { type: string }).type, "Opaque");
  assert.equal(masked[3], diff[3], "other items are kept as they are");
  assert.equal(maskDiff(diff, [], "u"), diff);
});
