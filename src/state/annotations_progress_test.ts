// The annotations progress storage against Kopf 1.44.6's AnnotationsProgressStorage: store (V1 and V2 keys, the
// marker, the ReplicaSet mark, verbose), purge, touch, clear and fetch. Each expected patch is Kopf's patch for the
// same call, as produced in reference_test.ts's venv: STORAGE.<method>(...) and then dict(patch).

import assert from "node:assert/strict";
import type { KubernetesObject } from "../model/body.ts";
import { Patch } from "../model/patch.ts";
import { AnnotationsProgressStorage } from "./annotations_progress.ts";
import type { ProgressRecord } from "./progress.ts";
import {
  ESSENCE,
  LONG_ID,
  LONG_V1,
  LONG_V2,
  R1,
  R1_ENCODED,
  R1_VERBOSE,
  R2,
  R2_ENCODED,
  REPLICASET,
  STORED,
} from "./reference_test.ts";

const TS = "2024-01-02T03:04:05.123456+00:00";

function stored(
  storage: AnnotationsProgressStorage,
  key: string,
  record: ProgressRecord,
  body: KubernetesObject = { metadata: {} },
): unknown {
  const patch = new Patch();
  storage.store(key, record, body, patch);
  return patch.toMergePatch();
}

function annotations(values: Record<string, string | null>): unknown {
  return { metadata: { annotations: values } };
}

Deno.test("annotations progress: store writes Kopf's record under Kopf's keys", () => {
  // Kopf: AnnotationsProgressStorage().store(key='create_fn', record=R1, body=Body({'metadata': {}}), patch=P)
  assert.deepEqual(
    stored(new AnnotationsProgressStorage(), "create_fn", R1),
    annotations({ "kopf.zalando.org/create_fn": R1_ENCODED }),
  );
  assert.deepEqual(
    stored(new AnnotationsProgressStorage(), "update_fn", R2),
    annotations({ "kopf.zalando.org/update_fn": R2_ENCODED }),
  );
  // verbose=True
  assert.deepEqual(
    stored(new AnnotationsProgressStorage({ verbose: true }), "create_fn", R1),
    annotations({ "kopf.zalando.org/create_fn": R1_VERBOSE }),
  );
  // A 70-character id: both the V2 and the V1 key.
  assert.deepEqual(
    stored(new AnnotationsProgressStorage(), LONG_ID, R1),
    annotations({ [LONG_V2]: R1_ENCODED, [LONG_V1]: R1_ENCODED }),
  );
  // A ReplicaSet owned by a Deployment.
  assert.deepEqual(
    stored(new AnnotationsProgressStorage(), "create_fn", R1, REPLICASET),
    annotations({ "kopf.zalando.org/create_fn-ofDRS": R1_ENCODED }),
  );
});

Deno.test("annotations progress: a custom prefix gets the kopf-managed marker unless the object has it", () => {
  // Kopf: AnnotationsProgressStorage(prefix='my-op.example.com').store(key='create_fn', record=R1, ...)
  const storage = new AnnotationsProgressStorage({ prefix: "my-op.example.com" });
  assert.deepEqual(
    stored(storage, "create_fn", R1),
    annotations({ "my-op.example.com/create_fn": R1_ENCODED, "my-op.example.com/kopf-managed": "yes" }),
  );
  const marked = { metadata: { annotations: { "my-op.example.com/kopf-managed": "yes" } } };
  assert.deepEqual(
    stored(storage, "create_fn", R1, marked),
    annotations({ "my-op.example.com/create_fn": R1_ENCODED }),
  );
});

Deno.test("annotations progress: store writes nothing if the object holds the same record", () => {
  const storage = new AnnotationsProgressStorage();
  const body = { metadata: { annotations: { "kopf.zalando.org/create_fn": R1_ENCODED } } };
  assert.deepEqual(stored(storage, "create_fn", R1, body), {});
  // The same values in another shape (verbose, other order) are the same record.
  const verbose = { metadata: { annotations: { "kopf.zalando.org/create_fn": R1_VERBOSE } } };
  assert.deepEqual(stored(storage, "create_fn", R1, verbose), {});
  // Found under the V1 key only: the same record, nothing written (Kopf compares with what it read).
  const v1Only = { metadata: { annotations: { [LONG_V1]: R1_ENCODED } } };
  assert.deepEqual(stored(storage, LONG_ID, R1, v1Only), {});
  // A changed record is written under both keys.
  assert.deepEqual(
    stored(storage, LONG_ID, { ...R1, retries: 2 }, v1Only),
    annotations({
      [LONG_V2]: R1_ENCODED.replace('"retries":1', '"retries":2'),
      [LONG_V1]: R1_ENCODED.replace('"retries":1', '"retries":2'),
    }),
  );
});

Deno.test("annotations progress: purge nulls what the object has and drops what only the patch has", () => {
  // Kopf: AnnotationsProgressStorage().purge(key=LONG_ID, body=Body(<V2, V1 and kopf.zalando.org/other>),
  //       patch=Patch({'metadata': {'annotations': {'kopf.zalando.org/create_fn': '{}'}}}))
  const storage = new AnnotationsProgressStorage();
  const body = { metadata: { annotations: { [LONG_V2]: "{}", [LONG_V1]: "{}", "kopf.zalando.org/other": "{}" } } };
  const patch = new Patch();
  patch.metadata.annotations["kopf.zalando.org/create_fn"] = "{}";
  storage.purge(LONG_ID, body, patch);
  assert.deepEqual(
    patch.toMergePatch(),
    annotations({ "kopf.zalando.org/create_fn": "{}", [LONG_V2]: null, [LONG_V1]: null }),
  );

  // Kopf: ....purge(key='create_fn', body=Body({'metadata': {}}),
  //       patch=Patch({'metadata': {'annotations': {'kopf.zalando.org/create_fn': '{}', 'x': 'y'}}}))
  const only = new Patch();
  only.metadata.annotations["kopf.zalando.org/create_fn"] = "{}";
  only.metadata.annotations.x = "y";
  storage.purge("create_fn", { metadata: {} }, only);
  assert.deepEqual(only.toMergePatch(), annotations({ x: "y" }));
});

Deno.test("annotations progress: touch sets or clears the dummy only where it differs", () => {
  const touched = (storage: AnnotationsProgressStorage, body: KubernetesObject, value: string | null): unknown => {
    const patch = new Patch();
    storage.touch(body, patch, value);
    return patch.toMergePatch();
  };
  const storage = new AnnotationsProgressStorage();
  const withDummy = { metadata: { annotations: { "kopf.zalando.org/touch-dummy": TS } } };
  assert.deepEqual(touched(storage, { metadata: {} }, TS), annotations({ "kopf.zalando.org/touch-dummy": TS }));
  assert.deepEqual(touched(storage, withDummy, TS), {});
  assert.deepEqual(touched(storage, withDummy, null), annotations({ "kopf.zalando.org/touch-dummy": null }));
  assert.deepEqual(touched(storage, { metadata: {} }, null), {});
  assert.deepEqual(
    touched(new AnnotationsProgressStorage({ prefix: "my-op.example.com" }), { metadata: {} }, TS),
    annotations({ "my-op.example.com/touch-dummy": TS, "my-op.example.com/kopf-managed": "yes" }),
  );
});

Deno.test("annotations progress: clear removes the prefix's annotations from a copy of the essence", () => {
  const essence = structuredClone(ESSENCE);
  assert.deepEqual(new AnnotationsProgressStorage().clear(essence), {
    spec: { a: 1 },
    metadata: { labels: { l: "v" }, annotations: { "my-op.example.com/y": "2", keep: "3" } },
    status: { kopf: { progress: { fn: {} }, dummy: "x" }, phase: "Running" },
  });
  assert.deepEqual(new AnnotationsProgressStorage({ prefix: "my-op.example.com" }).clear(essence), {
    spec: { a: 1 },
    metadata: { labels: { l: "v" }, annotations: { "kopf.zalando.org/x": "1", keep: "3" } },
    status: { kopf: { progress: { fn: {} }, dummy: "x" }, phase: "Running" },
  });
  assert.deepEqual(essence, ESSENCE); // untouched
  assert.deepEqual(
    new AnnotationsProgressStorage().clear({ metadata: { annotations: { "kopf.zalando.org/x": "1" } } }),
    {},
  );
});

Deno.test("annotations progress: fetch reads the V2 key, then the V1 key", () => {
  assert.deepEqual(new AnnotationsProgressStorage().fetch("create_fn", STORED), { started: "x", retries: 1 });
  assert.deepEqual(new AnnotationsProgressStorage().fetch(LONG_ID, STORED), { retries: 7 });
  assert.equal(new AnnotationsProgressStorage({ v1: false }).fetch(LONG_ID, STORED), null);
  assert.equal(new AnnotationsProgressStorage().fetch("delete_fn", STORED), null);
  const corrupt = { metadata: { annotations: { "kopf.zalando.org/create_fn": "{oops" } } };
  assert.throws(() => new AnnotationsProgressStorage().fetch("create_fn", corrupt), /kopf.zalando.org\/create_fn/);
});

Deno.test("annotations progress: the options and their defaults", () => {
  const storage = new AnnotationsProgressStorage();
  assert.deepEqual([storage.prefix, storage.verbose, storage.touchKey, storage.v1], [
    "kopf.zalando.org",
    false,
    "touch-dummy",
    true,
  ]);
  assert.throws(() => new AnnotationsProgressStorage({ prefix: "" }), /must be prefixed/);
  assert.deepEqual(new AnnotationsProgressStorage({ touchKey: "poke" }).keys("poke"), ["kopf.zalando.org/poke"]);
});
