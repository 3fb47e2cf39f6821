// Annotation keys against Kopf 1.44.6's own: V2 and V1 keys, hashing, safe characters, the ReplicaSet
// mark, the prefix marker and its detection, prefix validation (feature 10.3).
//
// The expected keys were produced with the real Kopf 1.44.6 (pip install kopf==1.44.6, CPython 3.11):
//   AnnotationsProgressStorage(prefix=P).make_keys(ID)            → KEYS_V1[P][ID]   (v1=True, the default)
//   AnnotationsProgressStorage(v1=False).make_keys(ID)            → KEYS_V2_ONLY[ID]
//   AnnotationsProgressStorage().make_keys(ID, body=Body(RS))     → KEYS_REPLICASET[ID]
// where RS is {"apiVersion": "apps/v1", "kind": "ReplicaSet", "metadata": {"name": "rs",
// "ownerReferences": [{"kind": "Deployment", "name": "d"}]}}.

import assert from "node:assert/strict";
import { configure, type LogRecord, reset } from "@logtape/logtape";
import type { KubernetesObject } from "../model/body.ts";
import { Patch } from "../model/patch.ts";
import {
  checkPrefix,
  detectMarkedPrefixes,
  holdsPrefixed,
  keySuffix,
  markKey,
  safeKey,
  storageKeys,
  storeMarker,
  v1Key,
  v2Key,
} from "./keys.ts";

const KEYS_V1: Record<string, Record<string, string[]>> = {
  "kopf.zalando.org": {
    "create_fn": [
      "kopf.zalando.org/create_fn",
    ],
    "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx": [
      "kopf.zalando.org/xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx",
      "kopf.zalando.org/xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx-GINbRg",
    ],
    "yyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyy": [
      "kopf.zalando.org/yyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyy-0d251g",
      "kopf.zalando.org/yyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyy-0d251g",
    ],
    "a_handler_with_a_very_long_name_for_testing_the_key_hashing_rules_ok70": [
      "kopf.zalando.org/a_handler_with_a_very_long_name_for_testing_the_key_hash-TGbhrw",
      "kopf.zalando.org/a_handler_with_a_very_long_name_for_tes-TGbhrw",
    ],
    "create_fn/item1": [
      "kopf.zalando.org/create_fn.item1",
    ],
    "fn/<lambda>": [
      "kopf.zalando.org/fn._lambda_",
    ],
    "parent_handler_name_which_is_long/child_sub_handler_name_also_long/x": [
      "kopf.zalando.org/parent_handler_name_which_is_long.child_sub_handler_name-OBuJAQ",
      "kopf.zalando.org/parent_handler_name_which_is_long.child-RHdJYg",
    ],
    "touch-dummy": [
      "kopf.zalando.org/touch-dummy",
    ],
    "last-handled-configuration": [
      "kopf.zalando.org/last-handled-configuration",
    ],
    "zzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzz": [
      "kopf.zalando.org/zzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzz",
      "kopf.zalando.org/zzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzz-nKPAog",
    ],
    "über_handler_äääääääääääääääääääääääääääääääääääääääääääääääääääääää": [
      "kopf.zalando.org/über_handler_äääääääääääääääääääääääääääääääääääääääääää-L9s6Lg",
      "kopf.zalando.org/über_handler_ääääääääääääääääääääääääää-L9s6Lg",
    ],
    "emoji_😀_eeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeee": [
      "kopf.zalando.org/emoji_😀_eeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeee-N1oGpA",
      "kopf.zalando.org/emoji_😀_eeeeeeeeeeeeeeeeeeeeeeeeeeeeeee-N1oGpA",
    ],
  },
  "my-op.example.com": {
    "create_fn": [
      "my-op.example.com/create_fn",
    ],
    "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx": [
      "my-op.example.com/xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx",
      "my-op.example.com/xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx-GINbRg",
    ],
    "yyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyy": [
      "my-op.example.com/yyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyy-0d251g",
      "my-op.example.com/yyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyy-0d251g",
    ],
    "a_handler_with_a_very_long_name_for_testing_the_key_hashing_rules_ok70": [
      "my-op.example.com/a_handler_with_a_very_long_name_for_testing_the_key_hash-TGbhrw",
      "my-op.example.com/a_handler_with_a_very_long_name_for_te-TGbhrw",
    ],
    "create_fn/item1": [
      "my-op.example.com/create_fn.item1",
    ],
    "fn/<lambda>": [
      "my-op.example.com/fn._lambda_",
    ],
    "parent_handler_name_which_is_long/child_sub_handler_name_also_long/x": [
      "my-op.example.com/parent_handler_name_which_is_long.child_sub_handler_name-OBuJAQ",
      "my-op.example.com/parent_handler_name_which_is_long.chil-RHdJYg",
    ],
    "touch-dummy": [
      "my-op.example.com/touch-dummy",
    ],
    "last-handled-configuration": [
      "my-op.example.com/last-handled-configuration",
    ],
    "zzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzz": [
      "my-op.example.com/zzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzz",
      "my-op.example.com/zzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzz-nKPAog",
    ],
    "über_handler_äääääääääääääääääääääääääääääääääääääääääääääääääääääää": [
      "my-op.example.com/über_handler_äääääääääääääääääääääääääääääääääääääääääää-L9s6Lg",
      "my-op.example.com/über_handler_äääääääääääääääääääääääää-L9s6Lg",
    ],
    "emoji_😀_eeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeee": [
      "my-op.example.com/emoji_😀_eeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeee-N1oGpA",
      "my-op.example.com/emoji_😀_eeeeeeeeeeeeeeeeeeeeeeeeeeeeee-N1oGpA",
    ],
  },
  "a-rather-long-operator-prefix.for-tests.example.com": {
    "create_fn": [
      "a-rather-long-operator-prefix.for-tests.example.com/create_fn",
    ],
    "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx": [
      "a-rather-long-operator-prefix.for-tests.example.com/xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx",
      "a-rather-long-operator-prefix.for-tests.example.com/xxxx-GINbRg",
    ],
    "yyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyy": [
      "a-rather-long-operator-prefix.for-tests.example.com/yyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyy-0d251g",
      "a-rather-long-operator-prefix.for-tests.example.com/yyyy-0d251g",
    ],
    "a_handler_with_a_very_long_name_for_testing_the_key_hashing_rules_ok70": [
      "a-rather-long-operator-prefix.for-tests.example.com/a_handler_with_a_very_long_name_for_testing_the_key_hash-TGbhrw",
      "a-rather-long-operator-prefix.for-tests.example.com/a_ha-TGbhrw",
    ],
    "create_fn/item1": [
      "a-rather-long-operator-prefix.for-tests.example.com/create_fn.item1",
      "a-rather-long-operator-prefix.for-tests.example.com/crea-BPvuug",
    ],
    "fn/<lambda>": [
      "a-rather-long-operator-prefix.for-tests.example.com/fn._lambda_",
    ],
    "parent_handler_name_which_is_long/child_sub_handler_name_also_long/x": [
      "a-rather-long-operator-prefix.for-tests.example.com/parent_handler_name_which_is_long.child_sub_handler_name-OBuJAQ",
      "a-rather-long-operator-prefix.for-tests.example.com/pare-RHdJYg",
    ],
    "touch-dummy": [
      "a-rather-long-operator-prefix.for-tests.example.com/touch-dummy",
    ],
    "last-handled-configuration": [
      "a-rather-long-operator-prefix.for-tests.example.com/last-handled-configuration",
      "a-rather-long-operator-prefix.for-tests.example.com/last-a.A3qw",
    ],
    "zzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzz": [
      "a-rather-long-operator-prefix.for-tests.example.com/zzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzz",
      "a-rather-long-operator-prefix.for-tests.example.com/zzzz-nKPAog",
    ],
    "über_handler_äääääääääääääääääääääääääääääääääääääääääääääääääääääää": [
      "a-rather-long-operator-prefix.for-tests.example.com/über_handler_äääääääääääääääääääääääääääääääääääääääääää-L9s6Lg",
      "a-rather-long-operator-prefix.for-tests.example.com/über-L9s6Lg",
    ],
    "emoji_😀_eeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeee": [
      "a-rather-long-operator-prefix.for-tests.example.com/emoji_😀_eeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeee-N1oGpA",
      "a-rather-long-operator-prefix.for-tests.example.com/emoj-N1oGpA",
    ],
  },
};

const KEYS_V2_ONLY: Record<string, string[]> = {
  "create_fn": [
    "kopf.zalando.org/create_fn",
  ],
  "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx": [
    "kopf.zalando.org/xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx",
  ],
  "yyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyy": [
    "kopf.zalando.org/yyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyy-0d251g",
  ],
  "a_handler_with_a_very_long_name_for_testing_the_key_hashing_rules_ok70": [
    "kopf.zalando.org/a_handler_with_a_very_long_name_for_testing_the_key_hash-TGbhrw",
  ],
  "create_fn/item1": [
    "kopf.zalando.org/create_fn.item1",
  ],
  "fn/<lambda>": [
    "kopf.zalando.org/fn._lambda_",
  ],
  "parent_handler_name_which_is_long/child_sub_handler_name_also_long/x": [
    "kopf.zalando.org/parent_handler_name_which_is_long.child_sub_handler_name-OBuJAQ",
  ],
  "touch-dummy": [
    "kopf.zalando.org/touch-dummy",
  ],
  "last-handled-configuration": [
    "kopf.zalando.org/last-handled-configuration",
  ],
  "zzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzz": [
    "kopf.zalando.org/zzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzz",
  ],
  "über_handler_äääääääääääääääääääääääääääääääääääääääääääääääääääääää": [
    "kopf.zalando.org/über_handler_äääääääääääääääääääääääääääääääääääääääääää-L9s6Lg",
  ],
  "emoji_😀_eeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeee": [
    "kopf.zalando.org/emoji_😀_eeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeee-N1oGpA",
  ],
};

const KEYS_REPLICASET: Record<string, string[]> = {
  "create_fn": [
    "kopf.zalando.org/create_fn-ofDRS",
  ],
  "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx": [
    "kopf.zalando.org/xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx-FG.0jQ",
    "kopf.zalando.org/xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx-FG.0jQ",
  ],
  "yyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyy": [
    "kopf.zalando.org/yyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyy-uq0f2w",
    "kopf.zalando.org/yyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyy-uq0f2w",
  ],
  "a_handler_with_a_very_long_name_for_testing_the_key_hashing_rules_ok70": [
    "kopf.zalando.org/a_handler_with_a_very_long_name_for_testing_the_key_hash-jKOTSg",
    "kopf.zalando.org/a_handler_with_a_very_long_name_for_tes-jKOTSg",
  ],
};

const REPLICASET: KubernetesObject = {
  apiVersion: "apps/v1",
  kind: "ReplicaSet",
  metadata: { name: "rs", ownerReferences: [{ kind: "Deployment", name: "d" }] },
};

Deno.test("keys: V2 and V1 keys equal Kopf's for short, 58, 63, 64, 68 and 70 characters, with / < > and non-ASCII", () => {
  for (const [prefix, expected] of Object.entries(KEYS_V1)) {
    for (const [id, keys] of Object.entries(expected)) {
      assert.deepEqual(storageKeys(prefix, id, { v1: true }), keys, `${prefix} ${id}`);
    }
  }
  assert.equal(Object.keys(KEYS_V1["kopf.zalando.org"]).length, 12);
});

Deno.test("keys: with v1 off only the V2 key is given", () => {
  for (const [id, keys] of Object.entries(KEYS_V2_ONLY)) {
    assert.deepEqual(storageKeys("kopf.zalando.org", id, { v1: false }), keys, id);
  }
});

Deno.test("keys: ReplicaSets owned by Deployments get -ofDRS before cutting and hashing", () => {
  for (const [id, keys] of Object.entries(KEYS_REPLICASET)) {
    assert.deepEqual(storageKeys("kopf.zalando.org", id, { v1: true, body: REPLICASET }), keys, id);
  }
  // Kopf: make_keys('create_fn', body=<ReplicaSet owned by a StatefulSet>) → ['kopf.zalando.org/create_fn']
  const other = { ...REPLICASET, metadata: { name: "rs", ownerReferences: [{ kind: "StatefulSet", name: "s" }] } };
  assert.deepEqual(storageKeys("kopf.zalando.org", "create_fn", { v1: true, body: other }), [
    "kopf.zalando.org/create_fn",
  ]);
  assert.equal(markKey("x", { kind: "Deployment", metadata: {} }), "x");
  assert.equal(markKey("x", { kind: "ReplicaSet", metadata: {} }), "x");
  assert.equal(markKey("x", REPLICASET), "x-ofDRS");
});

Deno.test("keys: the building blocks", () => {
  assert.equal(safeKey("a/b<c>d"), "a.b_c_d");
  assert.equal(keySuffix("y".repeat(64)), "-0d251g");
  // The V2 suffix hashes the original id, the V1 suffix the safe one: they differ for ids with "/".
  const id = "parent_handler_name_which_is_long/child_sub_handler_name_also_long/x";
  assert.equal(
    v2Key("kopf.zalando.org", id),
    "kopf.zalando.org/parent_handler_name_which_is_long.child_sub_handler_name-OBuJAQ",
  );
  assert.equal(v1Key("kopf.zalando.org", id), "kopf.zalando.org/parent_handler_name_which_is_long.child-RHdJYg");
  assert.equal(v2Key("kopf.zalando.org", "x".repeat(63)).length, "kopf.zalando.org/".length + 63);
});

// Kopf: AnnotationsDiffBaseStorage()._detect_marked_prefixes([...the same keys...])
//   → ['kopf.zalando.org', 'my-op.example.com', 'other.kopf.zalando.org']
Deno.test("keys: Kopf-managed prefixes are detected by marker, by kopf.zalando.org and its subdomains", () => {
  const prefixes = detectMarkedPrefixes([
    "kopf.zalando.org/create_fn",
    "other.kopf.zalando.org/x",
    "my-op.example.com/kopf-managed",
    "my-op.example.com/create_fn",
    "example.com/note",
    "notkopf.zalando.org/x",
    "kopf-managed",
    "plain",
  ]);
  assert.deepEqual([...prefixes].sort(), ["kopf.zalando.org", "my-op.example.com", "other.kopf.zalando.org"]);
});

Deno.test("keys: the kopf-managed marker is added once, and only for prefixes not starting with kopf.", () => {
  const body: KubernetesObject = { metadata: {} };
  const patch = new Patch();
  storeMarker("kopf.zalando.org", patch, body);
  storeMarker("kopf.example.com", patch, body);
  assert.deepEqual(patch.toMergePatch(), {});
  storeMarker("my-op.example.com", patch, body);
  assert.deepEqual(patch.toMergePatch(), { metadata: { annotations: { "my-op.example.com/kopf-managed": "yes" } } });
  const marked = new Patch();
  storeMarker("my-op.example.com", marked, { metadata: { annotations: { "my-op.example.com/kopf-managed": "yes" } } });
  assert.deepEqual(marked.toMergePatch(), {});
});

Deno.test("keys: an empty prefix is refused; a prefix over 189 characters is warned about", async () => {
  // Kopf: AnnotationsProgressStorage(prefix='') → ValueError('Annotations storages must be prefixed.');
  // a 189-character prefix gives no warning, a 190-character one gives one.
  assert.throws(() => checkPrefix(""), /must be prefixed/);
  const records: LogRecord[] = [];
  await configure({
    sinks: { memory: (record: LogRecord) => records.push(record) },
    loggers: [
      { category: ["kopf", "persistence"], lowestLevel: "warning", sinks: ["memory"] },
      { category: ["logtape", "meta"], lowestLevel: "error", sinks: [] },
    ],
    reset: true,
  });
  try {
    checkPrefix("p".repeat(189));
    assert.equal(records.length, 0);
    checkPrefix("p".repeat(190));
    assert.equal(records.length, 1);
    assert.equal(records[0].level, "warning");
  } finally {
    await reset();
  }
});

Deno.test("holdsPrefixed: an annotation under the prefix, not one of a longer prefix or without the slash", () => {
  assert.equal(holdsPrefixed(undefined, "kopf.zalando.org"), false);
  assert.equal(holdsPrefixed({}, "kopf.zalando.org"), false);
  assert.equal(holdsPrefixed({ "kubectl.kubernetes.io/last-applied-configuration": "{}" }, "kopf.zalando.org"), false);
  assert.equal(holdsPrefixed({ "kopf.zalando.org.other/x": "1", "kopf.zalando.org": "1" }, "kopf.zalando.org"), false);
  assert.equal(holdsPrefixed({ "a/b": "1", "kopf.zalando.org/create_fn": "{}" }, "kopf.zalando.org"), true);
});
