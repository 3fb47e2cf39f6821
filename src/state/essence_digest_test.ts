import assert from "node:assert/strict";
import type { KubernetesObject } from "../model/body.ts";
import { Patch } from "../model/patch.ts";
import { AnnotationsDiffBaseStorage } from "./annotations_diffbase.ts";
import {
  ANNOTATIONS_SIZE_LIMIT,
  annotationsSize,
  digestEssence,
  isDigest,
  resolveDiffBase,
  utf8Length,
} from "./essence_digest.ts";

const KEY = "kopf.zalando.org/last-handled-configuration";

function bigBody(bytes: number): KubernetesObject {
  return { metadata: { name: "big", annotations: { other: "x" } }, spec: { blob: "a".repeat(bytes) } };
}

Deno.test("essence digest: an essence that fits is stored as Kopf stores it", () => {
  const storage = new AnnotationsDiffBaseStorage();
  const body = bigBody(1000);
  const patch = new Patch();
  storage.store(body, patch, storage.build(body));
  const stored = storage.fetch({ metadata: { annotations: patch.metadata.annotations as Record<string, string> } });
  assert.deepEqual(stored, { spec: { blob: "a".repeat(1000) }, metadata: { annotations: { other: "x" } } });
});

Deno.test("essence digest: an essence over the 256 KiB annotations limit is stored as a digest that fits", () => {
  const storage = new AnnotationsDiffBaseStorage();
  const body = bigBody(300 * 1024);
  const patch = new Patch();
  const essence = storage.build(body);
  storage.store(body, patch, essence);
  const text = patch.metadata.annotations[KEY] as string;
  assert.ok(text.length < 200, text);
  assert.ok(annotationsSize(body, patch, {}) <= ANNOTATIONS_SIZE_LIMIT);
  const stored = storage.fetch({ metadata: { annotations: { [KEY]: text } } });
  assert.ok(isDigest(stored));
  assert.deepEqual(stored, digestEssence(essence));
});

Deno.test("essence digest: the limit counts keys and values of all annotations after the patch, in bytes", () => {
  const body: KubernetesObject = { metadata: { annotations: { a: "12", gone: "xxxx" } } };
  const patch = new Patch();
  patch.metadata.annotations.gone = null;
  patch.metadata.annotations.b = "é";
  assert.equal(annotationsSize(body, patch, { c: "" }), 3 + 3 + 1);
  // At the limit exactly, the essence is stored; one byte more, and it is the digest.
  const storage = new AnnotationsDiffBaseStorage();
  const room = ANNOTATIONS_SIZE_LIMIT - "o".length - KEY.length - "{}\n".length;
  const stored = (filler: number) => {
    const patch = new Patch();
    storage.store({ metadata: { annotations: { o: "x".repeat(filler) } } }, patch, {});
    return patch.metadata.annotations[KEY];
  };
  assert.equal(stored(room), "{}\n");
  assert.match(String(stored(room + 1)), /^\{"kopf:essence-sha256":"[0-9a-f]{64}"\}\n$/);
});

Deno.test("essence digest: a matching digest means no change; another means a change with unknown old values", () => {
  const now = { spec: { blob: "b" } };
  assert.deepEqual(resolveDiffBase(digestEssence(now), now), now);
  assert.deepEqual(resolveDiffBase(digestEssence({ spec: { blob: "a" } }), now), {});
  assert.deepEqual(resolveDiffBase({ spec: { blob: "a" } }, now), { spec: { blob: "a" } });
  assert.equal(resolveDiffBase(null, now), null);
  assert.equal(isDigest({ "kopf:essence-sha256": "ab", spec: {} }), false);
});

Deno.test("utf8Length counts the bytes that TextEncoder makes, surrogates included", () => {
  const encoder = new TextEncoder();
  for (
    const text of [
      "",
      "plain",
      "ünïcödé",
      "€ and ∑",
      "emoji 😀 pair",
      "lone \ud800 high",
      "lone \udc00 low",
      "end \ud83d",
    ]
  ) {
    assert.equal(utf8Length(text), encoder.encode(text).length, JSON.stringify(text));
  }
});
