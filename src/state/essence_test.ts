// The essence (feature 10.6) against Kopf 1.44.6's DiffBaseStorage.build(): what is left out, what is kept, extra
// and ignored fields, empty stanzas, and the key order. Each expected JSON is
//   json.dumps(AnnotationsDiffBaseStorage(...).build(body=Body(BODY), extra_fields=EXTRA), separators=(',', ':'))
// from the real Kopf 1.44.6 for the same BODY and EXTRA. More whole-object cases are in diffbase_test.ts.

import assert from "node:assert/strict";
import type { JsonObject, KubernetesObject } from "../model/body.ts";
import { buildEssence, holdsEssentialAnnotations, removeAnnotations, removeEmptyStanzas } from "./essence.ts";
import { dumpPythonJson } from "./python_json.ts";

function essence(body: KubernetesObject | JsonObject, extraFields?: string[], ignoredFields?: string[]): string {
  return dumpPythonJson(buildEssence(body, { extraFields, ignoredFields }));
}

Deno.test("essence: system fields out; other top-level fields kept in the body's order; metadata appended", () => {
  const body = {
    z: 1,
    spec: { a: 1 },
    apiVersion: "v1",
    a: [],
    metadata: {
      annotations: {
        "x.kopf.zalando.org/a": "1",
        "kopf.zalando.org": "no-slash",
        "b/kopf-managed": "yes",
        "b/c": "2",
        "bb/c": "3",
      },
    },
  };
  assert.equal(
    essence(body),
    '{"z":1,"spec":{"a":1},"a":[],"metadata":{"annotations":{"kopf.zalando.org":"no-slash","bb/c":"3"}}}',
  );
  assert.equal(essence({ spec: { a: 1 } }), '{"spec":{"a":1}}');
});

Deno.test("essence: extra fields are added back, nulls included; the whole status only if not empty", () => {
  const body = { metadata: { name: "x" }, spec: { a: null }, status: { phase: null } };
  assert.equal(essence(body, ["status.phase", "spec.a"]), '{"spec":{"a":null},"status":{"phase":null}}');
  assert.equal(essence({ spec: { a: 1 }, status: { x: 1 } }, ["status"]), '{"spec":{"a":1},"status":{"x":1}}');
  assert.equal(essence({ spec: { a: 1 }, status: {} }, ["status"]), '{"spec":{"a":1}}');
  assert.equal(essence({ spec: { a: 1 }, status: 0 }, ["status"]), '{"spec":{"a":1}}');
});

Deno.test("essence: ignored fields are removed with the parents they empty; lists are not dived into", () => {
  const body = { spec: { a: { b: 1 }, list: [1] }, metadata: { labels: { l: "1" }, annotations: { n: "1" } } };
  assert.equal(
    essence(body, [], ["spec.a.b", "spec.list.x", "nothing.here", "metadata.labels"]),
    '{"spec":{"list":[1]},"metadata":{"annotations":{"n":"1"}}}',
  );
});

Deno.test("essence: an extra field under a non-object parent is skipped (Kopf fails with a TypeError there)", () => {
  assert.equal(essence({ spec: "str", status: { x: 1 } }, ["spec.a.b"]), '{"spec":"str"}');
});

Deno.test("essence: the body is deep-copied, never shared or modified", () => {
  const body: KubernetesObject = { metadata: { labels: { a: "b" } }, spec: { list: [{ x: 1 }] } };
  const result = buildEssence(body);
  (result.spec as { list: { x: number }[] }).list[0].x = 2;
  (result.metadata as { labels: Record<string, string> }).labels.a = "c";
  assert.deepEqual(body, { metadata: { labels: { a: "b" } }, spec: { list: [{ x: 1 }] } });
});

Deno.test("essence: helpers remove annotations (keeping order) and empty stanzas only", () => {
  const value: JsonObject = { spec: {}, metadata: { annotations: { a: "1", b: "2", c: "3" }, labels: {} }, status: {} };
  removeAnnotations(value, ["b", "zzz"]);
  assert.deepEqual(Object.keys((value.metadata as JsonObject).annotations as JsonObject), ["a", "c"]);
  removeAnnotations(value, ["a", "c"]);
  removeEmptyStanzas(value);
  assert.deepEqual(value, { spec: {} });
});

Deno.test("essence: whether annotations hold any essence is what the essence keeps of them", () => {
  const cases: [Record<string, string | null>, boolean][] = [
    [{}, false],
    [{ "kopf.zalando.org/created": "{}", "kopf.zalando.org/last-handled-configuration": "{}\n" }, false],
    [{ "operator.kopf.zalando.org/created": null }, false],
    [{ "example.com/kopf-managed": "yes", "example.com/created": "{}" }, false],
    [{ "kubectl.kubernetes.io/last-applied-configuration": "{}" }, false],
    [{ "example.com/created": "{}" }, true],
    [{ "kopf.zalando.org/created": "{}", "example.com/seen": "yes" }, true],
    [{ plain: "yes" }, true],
  ];
  for (const [annotations, essential] of cases) {
    const essence = buildEssence({ metadata: { annotations } } as JsonObject);
    assert.equal(essence.metadata !== undefined, essential, JSON.stringify(annotations));
    assert.equal(holdsEssentialAnnotations(annotations), essential, JSON.stringify(annotations));
  }
});
