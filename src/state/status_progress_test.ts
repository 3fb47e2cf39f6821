// The status progress storage against Kopf 1.44.6's StatusProgressStorage: store (the record as an object, with
// nulls), purge, touch, clear, fetch, custom names and fields; and the read-only variant that Kopf 1.44 uses.
// Expected patches are Kopf's for the same calls (STORAGE.<method>(...), then dict(patch)); see reference_test.ts.

import assert from "node:assert/strict";
import type { KubernetesObject } from "../model/body.ts";
import { Patch } from "../model/patch.ts";
import { R1, R1_ENCODED, STORED } from "./reference_test.ts";
import { ESSENCE } from "./reference_test.ts";
import { ReadOnlyStatusProgressStorage, StatusProgressStorage } from "./status_progress.ts";

const TS = "2024-01-02T03:04:05.123456+00:00";

Deno.test("status progress: store writes the whole record, nulls included, as Kopf does", () => {
  // Kopf: StatusProgressStorage().store(key='create_fn/sub', record=R1, body=Body({'metadata': {}}), patch=P)
  const patch = new Patch();
  new StatusProgressStorage().store("create_fn/sub", R1, { metadata: {} }, patch);
  assert.equal(
    JSON.stringify(patch.status),
    JSON.stringify({
      kopf: {
        progress: {
          "create_fn/sub": {
            started: "2024-01-02T03:04:05.123456+00:00",
            stopped: null,
            delayed: "2024-01-02T03:04:35.123456+00:00",
            purpose: "create",
            retries: 1,
            success: false,
            failure: false,
            message: "later",
            subrefs: null,
          },
        },
      },
    }),
  );
  // Nothing is written if the object holds the same record (as the server keeps it: without nulls).
  const body = { metadata: {}, status: { kopf: { progress: { "create_fn/sub": JSON.parse(R1_ENCODED) } } } };
  const same = new Patch();
  new StatusProgressStorage().store("create_fn/sub", R1, body, same);
  assert.deepEqual(same.toMergePatch(), {});
});

Deno.test("status progress: purge nulls what the object has and drops what only the patch has", () => {
  const storage = new StatusProgressStorage();
  // Kopf: purge(key='create_fn', body=Body({'status': {'kopf': {'progress': {'create_fn': {'retries': 1}}}}}), patch=Patch())
  const patch = new Patch();
  storage.purge("create_fn", { metadata: {}, status: { kopf: { progress: { create_fn: { retries: 1 } } } } }, patch);
  assert.deepEqual(patch.toMergePatch(), { status: { kopf: { progress: { create_fn: null } } } });
  // Kopf: purge(key='create_fn', body=Body({}),
  //             patch=Patch({'status': {'kopf': {'progress': {'create_fn': {'retries': 1}}, 'x': 1}}}))
  //       → {'status': {'kopf': {'x': 1}}}  (the emptied parent "progress" is dropped too)
  const only = new Patch();
  only.status.kopf = { progress: { create_fn: { retries: 1 } }, x: 1 };
  storage.purge("create_fn", { metadata: {} }, only);
  assert.deepEqual(only.status, { kopf: { x: 1 } });
  // Nothing anywhere: nothing happens.
  const none = new Patch();
  storage.purge("create_fn", { metadata: {} }, none);
  assert.deepEqual(none.toMergePatch(), {});
});

Deno.test("status progress: touch sets or clears status.kopf.dummy where it differs", () => {
  const touched = (body: KubernetesObject, value: string | null): unknown => {
    const patch = new Patch();
    new StatusProgressStorage().touch(body, patch, value);
    return patch.toMergePatch();
  };
  assert.deepEqual(touched({ metadata: {} }, TS), { status: { kopf: { dummy: TS } } });
  assert.deepEqual(touched({ metadata: {}, status: { kopf: { dummy: TS } } }, TS), {});
  assert.deepEqual(touched({ metadata: {}, status: { kopf: { dummy: TS } } }, null), {
    status: { kopf: { dummy: null } },
  });
  assert.deepEqual(touched({ metadata: {} }, null), {});
});

Deno.test("status progress: clear removes the records' container and the parents it empties", () => {
  // Kopf: StatusProgressStorage().clear(essence=ESSENCE)
  assert.deepEqual(new StatusProgressStorage().clear(ESSENCE), {
    spec: { a: 1 },
    metadata: {
      labels: { l: "v" },
      annotations: { "kopf.zalando.org/x": "1", "my-op.example.com/y": "2", keep: "3" },
    },
    status: { kopf: { dummy: "x" }, phase: "Running" },
  });
  assert.deepEqual(new StatusProgressStorage().clear({ status: { kopf: { progress: {} } } }), {});
});

Deno.test("status progress: fetch reads the record under the id; junk there counts as none", () => {
  assert.deepEqual(new StatusProgressStorage().fetch("create_fn", STORED), { retries: 2 });
  assert.equal(new StatusProgressStorage().fetch("delete_fn", STORED), null);
  assert.equal(new StatusProgressStorage().fetch("x", { metadata: {}, status: { kopf: { progress: "junk" } } }), null);
  assert.equal(
    new StatusProgressStorage().fetch("x", { metadata: {}, status: { kopf: { progress: { x: 5 } } } }),
    null,
  );
});

Deno.test("status progress: {name} in the fields, and fields given as lists", () => {
  const named = new StatusProgressStorage({ name: "my-op" });
  assert.deepEqual([named.field, named.touchField], [["status", "my-op", "progress"], ["status", "my-op", "dummy"]]);
  const custom = new StatusProgressStorage({ field: ["status", "a.b"], touchField: "status.{name}.poke" });
  assert.deepEqual([custom.field, custom.touchField], [["status", "a.b"], ["status", "kopf", "poke"]]);
  const patch = new Patch();
  custom.store("fn", { retries: 0 }, { metadata: {} }, patch);
  assert.deepEqual(Object.keys(patch.status), ["a.b"]);
});

Deno.test("status progress: the read-only variant reads and purges but never writes", () => {
  const storage = new ReadOnlyStatusProgressStorage();
  const patch = new Patch();
  storage.store("create_fn", R1, { metadata: {} }, patch);
  storage.touch({ metadata: {} }, patch, TS);
  assert.deepEqual(patch.toMergePatch(), {});
  assert.deepEqual(storage.fetch("create_fn", STORED), { retries: 2 });
  storage.purge("create_fn", STORED, patch);
  assert.deepEqual(patch.toMergePatch(), { status: { kopf: { progress: { create_fn: null } } } });
});
