// Diff-base storages against Kopf 1.44.6's AnnotationsDiffBaseStorage, StatusDiffBaseStorage and
// MultiDiffBaseStorage: the essence (its key order and JSON), the stored text, the keys, fetching.
// DIFFBASE_CASES in reference_test.ts holds Kopf's outputs and how they were produced.

import assert from "node:assert/strict";
import type { KubernetesObject } from "../model/body.ts";
import { Patch } from "../model/patch.ts";
import { AnnotationsDiffBaseStorage } from "./annotations_diffbase.ts";
import type { DiffBaseStorage } from "./diffbase_storage.ts";
import { buildEssence } from "./essence.ts";
import { leavesStatusOut, MultiDiffBaseStorage } from "./multi_diffbase.ts";
import { dumpPythonJson } from "./python_json.ts";
import { DIFFBASE_CASES, STORED } from "./reference_test.ts";
import { SmartProgressStorage } from "./smart_progress.ts";
import { StatusDiffBaseStorage } from "./status_diffbase.ts";

const STORAGES: Record<string, () => DiffBaseStorage> = {
  "AnnotationsDiffBaseStorage()": () => new AnnotationsDiffBaseStorage(),
  "AnnotationsDiffBaseStorage(ignored_fields=['spec.nested.deep.x', 'spec.items'])": () =>
    new AnnotationsDiffBaseStorage({ ignoredFields: ["spec.nested.deep.x", "spec.items"] }),
  "AnnotationsDiffBaseStorage(prefix='my-op.example.com')": () =>
    new AnnotationsDiffBaseStorage({ prefix: "my-op.example.com" }),
  "StatusDiffBaseStorage()": () => new StatusDiffBaseStorage(),
  "StatusDiffBaseStorage(field='status.diff-base')": () => new StatusDiffBaseStorage({ field: "status.diff-base" }),
  "MultiDiffBaseStorage([StatusDiffBaseStorage(field='status.diff-base'), AnnotationsDiffBaseStorage()])": () =>
    new MultiDiffBaseStorage([
      new StatusDiffBaseStorage({ field: "status.diff-base" }),
      new AnnotationsDiffBaseStorage(),
    ]),
};

for (const [name, reference] of Object.entries(DIFFBASE_CASES)) {
  Deno.test(`diffbase: ${name}: the essence and the stored text are Kopf's, byte for byte`, () => {
    const storage = STORAGES[reference.storage]();
    const before = structuredClone(reference.body);
    const essence = storage.build(reference.body, reference.extra);
    assert.equal(dumpPythonJson(essence), reference.json);
    const patch = new Patch();
    storage.store(reference.body, patch, new SmartProgressStorage().clear(essence));
    assert.deepEqual(patch.toMergePatch(), reference.patch);
    assert.deepEqual(reference.body, before); // the body is not modified
  });
}

Deno.test("diffbase: the documented example: spec.field=value and label a=b", () => {
  const storage = new AnnotationsDiffBaseStorage();
  const body: KubernetesObject = { metadata: { name: "x", labels: { a: "b" } }, spec: { field: "value" } };
  const patch = new Patch();
  storage.store(body, patch, storage.build(body));
  assert.equal(
    patch.metadata.annotations["kopf.zalando.org/last-handled-configuration"],
    '{"spec":{"field":"value"},"metadata":{"labels":{"a":"b"}}}\n',
  );
});

Deno.test("diffbase: fetch reads the stored essence; the multi storage the first one found", () => {
  assert.deepEqual(new AnnotationsDiffBaseStorage().fetch(STORED), { spec: { a: 1 } });
  assert.deepEqual(new StatusDiffBaseStorage().fetch(STORED), { spec: { b: 2 } });
  const multi = new MultiDiffBaseStorage([
    new StatusDiffBaseStorage({ field: "status.nothing" }),
    new AnnotationsDiffBaseStorage(),
  ]);
  assert.deepEqual(multi.fetch(STORED), { spec: { a: 1 } });
  assert.equal(new AnnotationsDiffBaseStorage().fetch({ metadata: {} }), null);
  assert.equal(new StatusDiffBaseStorage().fetch({ metadata: {} }), null);
  assert.equal(new MultiDiffBaseStorage([]).fetch(STORED), null);
});

Deno.test("diffbase: the V1 key is read when the V2 key is absent, and both are written", () => {
  const storage = new AnnotationsDiffBaseStorage({ prefix: "a-rather-long-operator-prefix.for-tests.example.com" });
  // Kopf: make_keys('last-handled-configuration') for this prefix (see keys_test.ts)
  const [v2, v1] = [
    "a-rather-long-operator-prefix.for-tests.example.com/last-handled-configuration",
    "a-rather-long-operator-prefix.for-tests.example.com/last-a.A3qw",
  ];
  assert.deepEqual(storage.keys(), [v2, v1]);
  assert.deepEqual(storage.fetch({ metadata: { annotations: { [v1]: '{"spec":{}}\n' } } }), { spec: {} });
  const patch = new Patch();
  storage.store({ metadata: {} }, patch, { spec: {} });
  assert.deepEqual(patch.metadata.annotations, {
    [v2]: '{"spec":{}}\n',
    [v1]: '{"spec":{}}\n',
    "a-rather-long-operator-prefix.for-tests.example.com/kopf-managed": "yes",
  });
  // The storage's own keys never enter the essence, even under an unmarked prefix.
  const body = { metadata: { annotations: { [v1]: "{}", [v2]: "{}", other: "x" } } };
  assert.deepEqual(storage.build(body), { metadata: { annotations: { other: "x" } } });
});

Deno.test("diffbase: corrupt stored essences are errors that name the place, not a reason to re-create", () => {
  assert.throws(
    () =>
      new AnnotationsDiffBaseStorage().fetch({
        metadata: { annotations: { "kopf.zalando.org/last-handled-configuration": "{" } },
      }),
    /kopf.zalando.org\/last-handled-configuration holds no valid JSON/,
  );
  assert.throws(
    () =>
      new StatusDiffBaseStorage().fetch({ metadata: {}, status: { kopf: { "last-handled-configuration": { a: 1 } } } }),
    /status.kopf.last-handled-configuration holds no JSON string/,
  );
  assert.throws(
    () => new StatusDiffBaseStorage().fetch({ metadata: {}, status: { kopf: { "last-handled-configuration": "[]" } } }),
    /not an essence/,
  );
  assert.equal(
    new AnnotationsDiffBaseStorage().fetch({
      metadata: { annotations: { "kopf.zalando.org/last-handled-configuration": "null" } },
    }),
    null,
  );
});

Deno.test("diffbase: the options and their defaults", () => {
  const annotations = new AnnotationsDiffBaseStorage();
  assert.deepEqual([annotations.prefix, annotations.key, annotations.v1], [
    "kopf.zalando.org",
    "last-handled-configuration",
    true,
  ]);
  assert.throws(() => new AnnotationsDiffBaseStorage({ prefix: "" }), /must be prefixed/);
  assert.deepEqual(new StatusDiffBaseStorage().field, ["status", "kopf", "last-handled-configuration"]);
  assert.deepEqual(new StatusDiffBaseStorage({ name: "my-op" }).field, [
    "status",
    "my-op",
    "last-handled-configuration",
  ]);
});

Deno.test("diffbase: the multi storage's essence is each storage's build() in turn, built once for the built-in ones", () => {
  const body: KubernetesObject = {
    apiVersion: "kopf.dev/v1",
    kind: "KopfExample",
    metadata: {
      name: "x",
      labels: { app: "a" },
      annotations: {
        "kopf.zalando.org/last-handled-configuration": '{"spec":{}}\n',
        "my-op.example.com/kopf-managed": "yes",
        "my-op.example.com/last-handled-configuration": '{"spec":{}}\n',
        "kubectl.kubernetes.io/last-applied-configuration": "{}",
        "other.example.com/note": "kept",
      },
    },
    spec: { a: 1, b: {}, nested: { x: 1 }, items: [1, 2] },
    status: { phase: "Running", "diff-base": '{"spec":{}}', other: 1 },
  };
  const storages = () => [
    new StatusDiffBaseStorage({ field: "status.diff-base", ignoredFields: ["spec.a"] }),
    new AnnotationsDiffBaseStorage({ prefix: "my-op.example.com", ignoredFields: ["spec.nested.x"] }),
  ];
  const extra = ["status.phase", "metadata.annotations.other.example.com/note"];
  // What the multi storage gave when it asked every storage to build() from what the one before left.
  let expected = buildEssence(body, { extraFields: extra });
  for (const storage of storages()) expected = storage.build({ metadata: {}, ...expected }, extra);
  const before = structuredClone(body);
  assert.deepEqual(new MultiDiffBaseStorage(storages()).build(body, extra), expected);
  assert.deepEqual(body, before);
  assert.equal(
    dumpPythonJson(expected),
    '{"spec":{"b":{},"items":[1,2]},"metadata":{"labels":{"app":"a"},"annotations":{"other.example.com/note":"kept"}},' +
      '"status":{"phase":"Running"}}',
  );

  // A storage whose build() is its own is asked to build, also when it extends a built-in one.
  class Stamped extends StatusDiffBaseStorage {
    override build(body: KubernetesObject, extraFields?: Iterable<string>) {
      return { ...super.build(body, extraFields), stamped: true };
    }
  }
  const stamped = new MultiDiffBaseStorage([new Stamped(), new AnnotationsDiffBaseStorage()]).build(body);
  assert.equal(stamped.stamped, true);
});

Deno.test("diffbase: the built-in storages leave status out of an essence; a storage of its own may not", () => {
  const statusOnly: KubernetesObject = { metadata: {}, status: { done: { ok: true }, kopf: { progress: {} } } };
  class Stamped extends StatusDiffBaseStorage {
    override build(body: KubernetesObject, extraFields?: Iterable<string>) {
      return { ...super.build(body, extraFields), status: "kept" };
    }
  }
  const own: DiffBaseStorage = { build: () => ({ status: "kept" }), fetch: () => null, store: () => {} };
  const builtIn = [
    new StatusDiffBaseStorage(),
    new AnnotationsDiffBaseStorage(),
    new MultiDiffBaseStorage([new StatusDiffBaseStorage(), new AnnotationsDiffBaseStorage()]),
  ];
  for (const storage of builtIn) {
    assert.equal(leavesStatusOut(storage), true, storage.constructor.name);
    // What the shortcut stands for: the essence of an object of status alone is empty.
    assert.deepEqual(storage.build(statusOnly), {});
  }
  for (const storage of [new Stamped(), own, new MultiDiffBaseStorage([new AnnotationsDiffBaseStorage(), own])]) {
    assert.equal(leavesStatusOut(storage), false);
    assert.notDeepEqual(storage.build(statusOnly), {});
  }
});
