// The multi and smart progress storages against Kopf 1.44.6's MultiProgressStorage and SmartProgressStorage:
// annotations read-write, status.kopf.progress read and purged only. Expected patches are Kopf's for the same
// calls (STORAGE.<method>(...), then dict(patch)); see reference_test.ts.

import assert from "node:assert/strict";
import type { JsonObject, KubernetesObject } from "../model/body.ts";
import { Patch } from "../model/patch.ts";
import { AnnotationsProgressStorage } from "./annotations_progress.ts";
import { MultiProgressStorage } from "./multi_progress.ts";
import type { ProgressRecord } from "./progress.ts";
import type { ProgressStorage } from "./progress_storage.ts";
import { ESSENCE, ESSENCE2, LONG_ID, LONG_V2, R1, R1_ENCODED, STORED } from "./reference_test.ts";
import { SmartProgressStorage } from "./smart_progress.ts";
import { StatusProgressStorage } from "./status_progress.ts";

const TS = "2024-01-02T03:04:05.123456+00:00";

Deno.test("smart progress: store writes annotations only (Kopf 1.44 stopped writing status.kopf.progress)", () => {
  // Kopf: SmartProgressStorage().store(key='create_fn', record=R1, body=Body({'metadata': {}}), patch=P)
  const patch = new Patch();
  new SmartProgressStorage().store("create_fn", R1, { metadata: {} }, patch);
  assert.deepEqual(patch.toMergePatch(), { metadata: { annotations: { "kopf.zalando.org/create_fn": R1_ENCODED } } });
  // Kopf: SmartProgressStorage(prefix='my-op.example.com', v1=False).store(key=LONG_ID, record=R1, ...)
  const custom = new Patch();
  new SmartProgressStorage({ prefix: "my-op.example.com", v1: false }).store(LONG_ID, R1, { metadata: {} }, custom);
  assert.deepEqual(custom.toMergePatch(), {
    metadata: {
      annotations: {
        [LONG_V2.replace("kopf.zalando.org", "my-op.example.com")]: R1_ENCODED,
        "my-op.example.com/kopf-managed": "yes",
      },
    },
  });
});

Deno.test("smart progress: a record of an old Kopf in the status is taken over; rewritten only when it changes", () => {
  const old: KubernetesObject = { metadata: {}, status: { kopf: { progress: { create_fn: JSON.parse(R1_ENCODED) } } } };
  const storage = new SmartProgressStorage();
  assert.deepEqual(storage.fetch("create_fn", old), JSON.parse(R1_ENCODED));
  const same = new Patch();
  storage.store("create_fn", R1, old, same);
  assert.deepEqual(same.toMergePatch(), {});
  const changed = new Patch();
  storage.store("create_fn", { ...R1, retries: 2 }, old, changed);
  assert.deepEqual(Object.keys(changed.metadata.annotations), ["kopf.zalando.org/create_fn"]);
  assert.deepEqual(changed.status, {});
});

Deno.test("smart progress: purge nulls the record in both places", () => {
  // Kopf: SmartProgressStorage().purge(key='create_fn', body=Body(<annotation and status record>), patch=Patch())
  const patch = new Patch();
  const body = {
    metadata: { annotations: { "kopf.zalando.org/create_fn": "{}" } },
    status: { kopf: { progress: { create_fn: { retries: 1 } } } },
  };
  new SmartProgressStorage().purge("create_fn", body, patch);
  assert.deepEqual(patch.toMergePatch(), {
    metadata: { annotations: { "kopf.zalando.org/create_fn": null } },
    status: { kopf: { progress: { create_fn: null } } },
  });
});

Deno.test("smart progress: touch sets and clears the annotation only, never status.kopf.dummy", () => {
  const set = new Patch();
  new SmartProgressStorage().touch({ metadata: {} }, set, TS);
  assert.deepEqual(set.toMergePatch(), { metadata: { annotations: { "kopf.zalando.org/touch-dummy": TS } } });
  const clear = new Patch();
  const body = {
    metadata: { annotations: { "kopf.zalando.org/touch-dummy": TS } },
    status: { kopf: { dummy: TS } },
  };
  new SmartProgressStorage().touch(body, clear, null);
  assert.deepEqual(clear.toMergePatch(), { metadata: { annotations: { "kopf.zalando.org/touch-dummy": null } } });
});

Deno.test("smart progress: clear removes Kopf's annotations and status.kopf.progress", () => {
  // Kopf: SmartProgressStorage().clear(essence=ESSENCE), SmartProgressStorage().clear(essence=ESSENCE2) → {}
  assert.deepEqual(new SmartProgressStorage().clear(ESSENCE), {
    spec: { a: 1 },
    metadata: { labels: { l: "v" }, annotations: { "my-op.example.com/y": "2", keep: "3" } },
    status: { kopf: { dummy: "x" }, phase: "Running" },
  });
  assert.deepEqual(new SmartProgressStorage().clear(ESSENCE2), {});
});

Deno.test("smart progress: clear gives back an essence with nothing of Kopf's as it is, and changes none in place", () => {
  const clean = { spec: { a: 1 }, metadata: { labels: { l: "v" }, annotations: { keep: "3" } } };
  assert.equal(new SmartProgressStorage().clear(clean), clean);
  const withEmpty = { spec: { a: 1 }, metadata: { annotations: {} } };
  assert.deepEqual(new SmartProgressStorage().clear(withEmpty), { spec: { a: 1 } });
  assert.deepEqual(withEmpty, { spec: { a: 1 }, metadata: { annotations: {} } });
  const essence = structuredClone(ESSENCE);
  new SmartProgressStorage().clear(essence);
  assert.deepEqual(essence, ESSENCE);
});

Deno.test("smart progress: fetch reads annotations first, then the status", () => {
  const storage = new SmartProgressStorage();
  assert.deepEqual(storage.fetch("create_fn", STORED), { started: "x", retries: 1 });
  assert.deepEqual(storage.fetch("update_fn", STORED), { retries: 3 });
  assert.equal(storage.fetch("delete_fn", STORED), null);
});

Deno.test("multi progress: clear by every storage in turn", () => {
  // Kopf: MultiProgressStorage([AnnotationsProgressStorage(prefix='my-op.example.com'),
  //                             StatusProgressStorage(field='status.x')]).clear(essence=ESSENCE)
  const storage = new MultiProgressStorage([
    new AnnotationsProgressStorage({ prefix: "my-op.example.com" }),
    new StatusProgressStorage({ field: "status.x" }),
  ]);
  assert.deepEqual(storage.clear(ESSENCE), {
    spec: { a: 1 },
    metadata: { labels: { l: "v" }, annotations: { "kopf.zalando.org/x": "1", keep: "3" } },
    status: { kopf: { progress: { fn: {} }, dummy: "x" }, phase: "Running" },
  });
});

Deno.test("multi progress: writes to all storages, reads the first found, flushes all", () => {
  const flushed: string[] = [];
  let stores = 0;
  class Recording implements ProgressStorage {
    constructor(readonly name: string, readonly records: Map<string, ProgressRecord> = new Map()) {}
    fetch(key: string): ProgressRecord | null {
      return this.records.get(key) ?? null;
    }
    store(key: string, record: ProgressRecord): void {
      stores++;
      this.records.set(key, record);
    }
    purge(key: string): void {
      this.records.delete(key);
    }
    touch(): void {}
    clear(essence: JsonObject): JsonObject {
      return essence;
    }
    flush(): void {
      flushed.push(this.name);
    }
  }
  const first = new Recording("first");
  const second = new Recording("second", new Map([["fn", { retries: 5 }]]));
  const multi = new MultiProgressStorage([first, second]);
  const body = { metadata: {} };
  assert.deepEqual(multi.fetch("fn", body), { retries: 5 });
  multi.store("fn", { retries: 6 }, body, new Patch());
  assert.deepEqual([first.fetch("fn"), second.fetch("fn")], [{ retries: 6 }, { retries: 6 }]);
  assert.equal(stores, 2);
  // The same as the first found: nothing is written anywhere.
  multi.store("fn", { retries: 6, message: null }, body, new Patch());
  assert.equal(stores, 2);
  multi.purge("fn", body, new Patch());
  assert.deepEqual([first.fetch("fn"), second.fetch("fn")], [null, null]);
  multi.flush();
  assert.deepEqual(flushed, ["first", "second"]);
});
