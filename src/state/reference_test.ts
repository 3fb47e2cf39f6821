// Reference outputs of the real Kopf 1.44.6 (pip install kopf==1.44.6 into a venv, CPython 3.11), shared by
// the tests of this folder. How each was produced is said beside it; the inputs are repeated here in TypeScript.
// This file holds no tests.

import type { KubernetesObject } from "../model/body.ts";
import type { ProgressRecord } from "./progress.ts";

/** Three records as HandlerState.for_storage() gives them (all nine fields, None where absent). */
export const R1: ProgressRecord = {
  started: "2024-01-02T03:04:05.123456+00:00",
  stopped: null,
  delayed: "2024-01-02T03:04:35.123456+00:00",
  purpose: "create",
  retries: 1,
  success: false,
  failure: false,
  message: "later",
  subrefs: null,
};
export const R2: ProgressRecord = {
  started: "2024-01-02T03:04:05.123456+00:00",
  stopped: "2024-01-02T03:04:06.000001+00:00",
  delayed: null,
  purpose: "update",
  retries: 2,
  success: true,
  failure: false,
  message: null,
  subrefs: ["fn/sub1", "fn/sub2"],
};
export const R3: ProgressRecord = {
  started: "2024-01-02T03:04:05.123456+00:00",
  stopped: "2024-01-02T03:04:06.000001+00:00",
  delayed: null,
  purpose: "delete",
  retries: 3,
  success: false,
  failure: true,
  message: 'Ошибка: "x"\n\t✓ 😀 \\ / \x7f \x01',
  subrefs: null,
};

// AnnotationsProgressStorage(verbose=V).store(key=ID, record=R, body=Body({"metadata": {}}), patch=P)
// → P["metadata"]["annotations"]["kopf.zalando.org/" + ID]:

/** R1 stored (create_fn). */
export const R1_ENCODED: string = String
  .raw`{"started":"2024-01-02T03:04:05.123456+00:00","delayed":"2024-01-02T03:04:35.123456+00:00","purpose":"create","retries":1,"success":false,"failure":false,"message":"later"}`;
/** R2 stored (update_fn). */
export const R2_ENCODED: string = String
  .raw`{"started":"2024-01-02T03:04:05.123456+00:00","stopped":"2024-01-02T03:04:06.000001+00:00","purpose":"update","retries":2,"success":true,"failure":false,"subrefs":["fn/sub1","fn/sub2"]}`;
/** R3 stored (delete_fn): non-ASCII, quotes, controls, an astral character. */
export const R3_ENCODED: string = String
  .raw`{"started":"2024-01-02T03:04:05.123456+00:00","stopped":"2024-01-02T03:04:06.000001+00:00","purpose":"delete","retries":3,"success":false,"failure":true,"message":"\u041e\u0448\u0438\u0431\u043a\u0430: \"x\"\n\t\u2713 \ud83d\ude00 \\ / \u007f \u0001"}`;
/** R1 stored with verbose=True. */
export const R1_VERBOSE: string = String
  .raw`{"started":"2024-01-02T03:04:05.123456+00:00","stopped":null,"delayed":"2024-01-02T03:04:35.123456+00:00","purpose":"create","retries":1,"success":false,"failure":false,"message":"later","subrefs":null}`;

/** A KopfExample as the API server sends it, with annotations of Kopf, of another Kopf operator, of kubectl and of users. */
export const KEX: KubernetesObject = {
  apiVersion: "kopf.dev/v1",
  kind: "KopfExample",
  metadata: {
    annotations: {
      "example.com/note": "keep me",
      "kopf.zalando.org/create_fn": "{}",
      "kopf.zalando.org/last-handled-configuration": "{}\n",
      "kubectl.kubernetes.io/last-applied-configuration": "{}\n",
      "my-op.example.com/kopf-managed": "yes",
      "my-op.example.com/state": "x",
      "other.kopf.zalando.org/y": "z",
      "plain": "ünïcødé ☃ 😀",
    },
    creationTimestamp: "2024-01-02T03:04:05Z",
    finalizers: ["kopf.zalando.org/KopfFinalizerMarker"],
    generation: 3,
    labels: { a: "b", app: "demo" },
    name: "kex1",
    namespace: "default",
    resourceVersion: "123",
    uid: "u-1",
  },
  spec: { field: "value", items: [1, 2.5, 0.00001, "ü", null, true], nested: { deep: { x: [] } }, empty: {} },
  status: { phase: "Running", kopf: { progress: {} }, create_fn: { message: "hello" } },
};

/** The simplest object with a spec and a label. */
export const SIMPLE: KubernetesObject = {
  apiVersion: "kopf.dev/v1",
  kind: "KopfExample",
  metadata: { labels: { a: "b" }, name: "kex", namespace: "default" },
  spec: { field: "value" },
};

/** A ConfigMap: a top-level field other than spec, integer-like keys, empty labels, only Kopf's annotations. */
export const CONFIGMAP: KubernetesObject = {
  apiVersion: "v1",
  kind: "ConfigMap",
  data: { "10": "x", "9": "y", a: "1", b: "2" },
  metadata: { name: "cm", labels: {}, annotations: { "kopf.zalando.org/last-handled-configuration": "{}" } },
};

/** An object with nothing but metadata and status. */
export const BARE: KubernetesObject = {
  apiVersion: "v1",
  kind: "Thing",
  metadata: { name: "t" },
  status: { phase: "P" },
};

/** A ReplicaSet owned by a Deployment. */
export const REPLICASET: KubernetesObject = {
  apiVersion: "apps/v1",
  kind: "ReplicaSet",
  metadata: { name: "rs", ownerReferences: [{ kind: "Deployment", name: "d" }] },
  spec: { replicas: 1 },
};

/**
 * For each case: STORAGE.build(body=Body(BODY), extra_fields=EXTRA) → essence, json.dumps(essence, separators=(',', ':'))
 * → json, and STORAGE.store(body=Body(BODY), patch=P, essence=SmartProgressStorage().clear(essence=essence)) → P
 * (as Kopf's processing stores cause.new); the patch given as its merge-patch.
 */
export interface DiffBaseCase {
  /** The Kopf storage (as Python source) and the body, for the record. */
  storage: string;
  body: KubernetesObject;
  extra?: string[];
  json: string;
  patch: Record<string, unknown>;
}

/** Kopf's diff-bases for the bodies above. */
export const DIFFBASE_CASES: Record<string, DiffBaseCase> = {
  simple: {
    storage: "AnnotationsDiffBaseStorage()",
    body: SIMPLE,
    json: String.raw`{"spec":{"field":"value"},"metadata":{"labels":{"a":"b"}}}`,
    patch: {
      "metadata": {
        "annotations": {
          "kopf.zalando.org/last-handled-configuration":
            String.raw`{"spec":{"field":"value"},"metadata":{"labels":{"a":"b"}}}` + "\n",
        },
      },
    },
  },
  kex: {
    storage: "AnnotationsDiffBaseStorage()",
    body: KEX,
    json: String
      .raw`{"spec":{"field":"value","items":[1,2.5,1e-05,"\u00fc",null,true],"nested":{"deep":{"x":[]}},"empty":{}},"metadata":{"labels":{"a":"b","app":"demo"},"annotations":{"example.com/note":"keep me","plain":"\u00fcn\u00efc\u00f8d\u00e9 \u2603 \ud83d\ude00"}}}`,
    patch: {
      "metadata": {
        "annotations": {
          "kopf.zalando.org/last-handled-configuration": String
            .raw`{"spec":{"field":"value","items":[1,2.5,1e-05,"\u00fc",null,true],"nested":{"deep":{"x":[]}},"empty":{}},"metadata":{"labels":{"a":"b","app":"demo"},"annotations":{"example.com/note":"keep me","plain":"\u00fcn\u00efc\u00f8d\u00e9 \u2603 \ud83d\ude00"}}}` +
            "\n",
        },
      },
    },
  },
  kex_extra: {
    storage: "AnnotationsDiffBaseStorage()",
    body: KEX,
    extra: ["status.phase", "status.missing", "metadata.name", "spec.field"],
    json: String
      .raw`{"spec":{"field":"value","items":[1,2.5,1e-05,"\u00fc",null,true],"nested":{"deep":{"x":[]}},"empty":{}},"metadata":{"labels":{"a":"b","app":"demo"},"annotations":{"example.com/note":"keep me","plain":"\u00fcn\u00efc\u00f8d\u00e9 \u2603 \ud83d\ude00"},"name":"kex1"},"status":{"phase":"Running"}}`,
    patch: {
      "metadata": {
        "annotations": {
          "kopf.zalando.org/last-handled-configuration": String
            .raw`{"spec":{"field":"value","items":[1,2.5,1e-05,"\u00fc",null,true],"nested":{"deep":{"x":[]}},"empty":{}},"metadata":{"labels":{"a":"b","app":"demo"},"annotations":{"example.com/note":"keep me","plain":"\u00fcn\u00efc\u00f8d\u00e9 \u2603 \ud83d\ude00"},"name":"kex1"},"status":{"phase":"Running"}}` +
            "\n",
        },
      },
    },
  },
  kex_ignored: {
    storage: "AnnotationsDiffBaseStorage(ignored_fields=['spec.nested.deep.x', 'spec.items'])",
    body: KEX,
    json: String
      .raw`{"spec":{"field":"value","empty":{}},"metadata":{"labels":{"a":"b","app":"demo"},"annotations":{"example.com/note":"keep me","plain":"\u00fcn\u00efc\u00f8d\u00e9 \u2603 \ud83d\ude00"}}}`,
    patch: {
      "metadata": {
        "annotations": {
          "kopf.zalando.org/last-handled-configuration": String
            .raw`{"spec":{"field":"value","empty":{}},"metadata":{"labels":{"a":"b","app":"demo"},"annotations":{"example.com/note":"keep me","plain":"\u00fcn\u00efc\u00f8d\u00e9 \u2603 \ud83d\ude00"}}}` +
            "\n",
        },
      },
    },
  },
  cm: {
    storage: "AnnotationsDiffBaseStorage()",
    body: CONFIGMAP,
    json: String.raw`{"data":{"10":"x","9":"y","a":"1","b":"2"}}`,
    patch: {
      "metadata": {
        "annotations": {
          "kopf.zalando.org/last-handled-configuration": String.raw`{"data":{"10":"x","9":"y","a":"1","b":"2"}}` + "\n",
        },
      },
    },
  },
  bare: {
    storage: "AnnotationsDiffBaseStorage()",
    body: BARE,
    json: String.raw`{}`,
    patch: {
      "metadata": {
        "annotations": {
          "kopf.zalando.org/last-handled-configuration": String.raw`{}` + "\n",
        },
      },
    },
  },
  bare_extra: {
    storage: "AnnotationsDiffBaseStorage()",
    body: BARE,
    extra: ["status.phase"],
    json: String.raw`{"status":{"phase":"P"}}`,
    patch: {
      "metadata": {
        "annotations": {
          "kopf.zalando.org/last-handled-configuration": String.raw`{"status":{"phase":"P"}}` + "\n",
        },
      },
    },
  },
  custom_prefix: {
    storage: "AnnotationsDiffBaseStorage(prefix='my-op.example.com')",
    body: SIMPLE,
    json: String.raw`{"spec":{"field":"value"},"metadata":{"labels":{"a":"b"}}}`,
    patch: {
      "metadata": {
        "annotations": {
          "my-op.example.com/last-handled-configuration":
            String.raw`{"spec":{"field":"value"},"metadata":{"labels":{"a":"b"}}}` + "\n",
          "my-op.example.com/kopf-managed": String.raw`yes`,
        },
      },
    },
  },
  kex_status: {
    storage: "StatusDiffBaseStorage()",
    body: KEX,
    extra: ["status.kopf"],
    json: String
      .raw`{"spec":{"field":"value","items":[1,2.5,1e-05,"\u00fc",null,true],"nested":{"deep":{"x":[]}},"empty":{}},"metadata":{"labels":{"a":"b","app":"demo"},"annotations":{"example.com/note":"keep me","plain":"\u00fcn\u00efc\u00f8d\u00e9 \u2603 \ud83d\ude00"}},"status":{"kopf":{"progress":{}}}}`,
    patch: {
      "status": {
        "kopf": {
          "last-handled-configuration": String
            .raw`{"spec":{"field":"value","items":[1,2.5,1e-05,"\u00fc",null,true],"nested":{"deep":{"x":[]}},"empty":{}},"metadata":{"labels":{"a":"b","app":"demo"},"annotations":{"example.com/note":"keep me","plain":"\u00fcn\u00efc\u00f8d\u00e9 \u2603 \ud83d\ude00"}}}`,
        },
      },
    },
  },
  kex_status_custom: {
    storage: "StatusDiffBaseStorage(field='status.diff-base')",
    body: KEX,
    extra: ["status"],
    json: String
      .raw`{"spec":{"field":"value","items":[1,2.5,1e-05,"\u00fc",null,true],"nested":{"deep":{"x":[]}},"empty":{}},"metadata":{"labels":{"a":"b","app":"demo"},"annotations":{"example.com/note":"keep me","plain":"\u00fcn\u00efc\u00f8d\u00e9 \u2603 \ud83d\ude00"}},"status":{"phase":"Running","kopf":{"progress":{}},"create_fn":{"message":"hello"}}}`,
    patch: {
      "status": {
        "diff-base": String
          .raw`{"spec":{"field":"value","items":[1,2.5,1e-05,"\u00fc",null,true],"nested":{"deep":{"x":[]}},"empty":{}},"metadata":{"labels":{"a":"b","app":"demo"},"annotations":{"example.com/note":"keep me","plain":"\u00fcn\u00efc\u00f8d\u00e9 \u2603 \ud83d\ude00"}},"status":{"phase":"Running","create_fn":{"message":"hello"}}}`,
      },
    },
  },
  kex_multi: {
    storage: "MultiDiffBaseStorage([StatusDiffBaseStorage(field='status.diff-base'), AnnotationsDiffBaseStorage()])",
    body: KEX,
    extra: ["status.phase"],
    json: String
      .raw`{"spec":{"field":"value","items":[1,2.5,1e-05,"\u00fc",null,true],"nested":{"deep":{"x":[]}},"empty":{}},"metadata":{"labels":{"a":"b","app":"demo"},"annotations":{"example.com/note":"keep me","plain":"\u00fcn\u00efc\u00f8d\u00e9 \u2603 \ud83d\ude00"}},"status":{"phase":"Running"}}`,
    patch: {
      "status": {
        "diff-base": String
          .raw`{"spec":{"field":"value","items":[1,2.5,1e-05,"\u00fc",null,true],"nested":{"deep":{"x":[]}},"empty":{}},"metadata":{"labels":{"a":"b","app":"demo"},"annotations":{"example.com/note":"keep me","plain":"\u00fcn\u00efc\u00f8d\u00e9 \u2603 \ud83d\ude00"}},"status":{"phase":"Running"}}`,
      },
      "metadata": {
        "annotations": {
          "kopf.zalando.org/last-handled-configuration": String
            .raw`{"spec":{"field":"value","items":[1,2.5,1e-05,"\u00fc",null,true],"nested":{"deep":{"x":[]}},"empty":{}},"metadata":{"labels":{"a":"b","app":"demo"},"annotations":{"example.com/note":"keep me","plain":"\u00fcn\u00efc\u00f8d\u00e9 \u2603 \ud83d\ude00"}},"status":{"phase":"Running"}}` +
            "\n",
        },
      },
    },
  },
  rs: {
    storage: "AnnotationsDiffBaseStorage()",
    body: REPLICASET,
    json: String.raw`{"spec":{"replicas":1}}`,
    patch: {
      "metadata": {
        "annotations": {
          "kopf.zalando.org/last-handled-configuration-ofDRS": String.raw`{"spec":{"replicas":1}}` + "\n",
        },
      },
    },
  },
};

/** The 70-character handler id, and its V2 and V1 keys as Kopf makes them (see keys_test.ts). */
export const LONG_ID = "a_handler_with_a_very_long_name_for_testing_the_key_hashing_rules_ok70";
/** The V2 key of {@linkcode LONG_ID}. */
export const LONG_V2 = "kopf.zalando.org/a_handler_with_a_very_long_name_for_testing_the_key_hash-TGbhrw";
/** The V1 key of {@linkcode LONG_ID}. */
export const LONG_V1 = "kopf.zalando.org/a_handler_with_a_very_long_name_for_tes-TGbhrw";

/**
 * A body holding records and diff-bases in all places. Kopf 1.44.6 reads from it:
 *   AnnotationsProgressStorage().fetch(key='create_fn')        → {'started': 'x', 'retries': 1}
 *   AnnotationsProgressStorage().fetch(key=LONG_ID)            → {'retries': 7}   (from the V1 key)
 *   AnnotationsProgressStorage(v1=False).fetch(key=LONG_ID)    → None
 *   StatusProgressStorage().fetch(key='create_fn')             → {'retries': 2}
 *   SmartProgressStorage().fetch(key='create_fn')              → {'started': 'x', 'retries': 1}
 *   SmartProgressStorage().fetch(key='update_fn')              → {'retries': 3}   (from the status)
 *   SmartProgressStorage().fetch(key='delete_fn')              → None
 *   AnnotationsDiffBaseStorage().fetch()                       → {'spec': {'a': 1}}
 *   StatusDiffBaseStorage().fetch()                            → {'spec': {'b': 2}}
 *   MultiDiffBaseStorage([StatusDiffBaseStorage(field='status.nothing'), AnnotationsDiffBaseStorage()]).fetch()
 *                                                              → {'spec': {'a': 1}}
 */
export const STORED: KubernetesObject = {
  metadata: {
    annotations: {
      "kopf.zalando.org/create_fn": '{"started":"x","retries":1}',
      [LONG_V1]: '{"retries":7}',
      "kopf.zalando.org/last-handled-configuration": '{"spec":{"a":1}}\n',
    },
  },
  status: {
    kopf: {
      progress: { create_fn: { retries: 2 }, update_fn: { retries: 3 } },
      "last-handled-configuration": '{"spec":{"b":2}}',
    },
  },
};

/**
 * An essence with Kopf's, another operator's and a user's annotations, and a status with Kopf's old records. Kopf 1.44.6:
 *   AnnotationsProgressStorage().clear(essence=ESSENCE)                       → ESSENCE without kopf.zalando.org/x
 *   AnnotationsProgressStorage(prefix='my-op.example.com').clear(...)        → ESSENCE without my-op.example.com/y
 *   StatusProgressStorage().clear(...)                                        → ESSENCE without status.kopf.progress
 *   SmartProgressStorage().clear(...)                                         → without kopf.zalando.org/x and status.kopf.progress
 *   SmartProgressStorage().clear(essence=ESSENCE2)                            → {}
 */
export const ESSENCE = {
  spec: { a: 1 },
  metadata: { labels: { l: "v" }, annotations: { "kopf.zalando.org/x": "1", "my-op.example.com/y": "2", keep: "3" } },
  status: { kopf: { progress: { fn: {} }, dummy: "x" }, phase: "Running" },
};
/** An essence that holds nothing but Kopf's state. */
export const ESSENCE2 = {
  metadata: { annotations: { "kopf.zalando.org/x": "1" } },
  status: { kopf: { progress: { fn: {} } } },
};
