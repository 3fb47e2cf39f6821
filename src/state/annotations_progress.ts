/**
 * Progress records in annotations, Kopf's default: `kopf.zalando.org/<id>` holds the compact JSON
 * record of handler `<id>` (V2 and, while `v1` is on, V1 keys), `kopf.zalando.org/touch-dummy` the
 * touch timestamp.
 *
 * @module
 */

import type { JsonObject, KubernetesObject } from "../model/body.ts";
import type { Patch } from "../model/patch.ts";
import { hasEmptyStanzas, removeAnnotations, removeEmptyStanzas } from "./essence.ts";
import { cloneJson } from "./fields.ts";
import { checkPrefix, holdsPrefixed, sharedStorageKeys, storeMarker } from "./keys.ts";
import { decodeProgressRecord, encodeProgressRecord, type ProgressRecord, sameProgressRecord } from "./progress.ts";
import type { ProgressStorage } from "./progress_storage.ts";

/** Options of {@linkcode AnnotationsProgressStorage}. */
export interface AnnotationsProgressStorageOptions {
  /** The annotation prefix; `kopf.zalando.org` by default. Other prefixes also get a `<prefix>/kopf-managed` marker. */
  prefix?: string;
  /** Write `null` fields into the records too; off by default. */
  verbose?: boolean;
  /** The name of the touch-dummy annotation; `touch-dummy` by default. */
  touchKey?: string;
  /** Also write (and read) the V1 keys of old Kopf versions where they differ; on by default. */
  v1?: boolean;
}

/**
 * Keeps progress records in the object's annotations, one per handler, as Kopf does by default.
 *
 * @example
 * ```ts
 * import { AnnotationsProgressStorage } from "./annotations_progress.ts";
 * import { Patch } from "../model/patch.ts";
 * const storage = new AnnotationsProgressStorage({ prefix: "my-op.example.com" });
 * const body = { metadata: { name: "x" } };
 * const patch = new Patch();
 * storage.store("create_fn", { purpose: "create", retries: 0, success: false, failure: false }, body, patch);
 * // patch.metadata.annotations: {
 * //   "my-op.example.com/create_fn": '{"purpose":"create","retries":0,"success":false,"failure":false}',
 * //   "my-op.example.com/kopf-managed": "yes" }
 * ```
 */
export class AnnotationsProgressStorage implements ProgressStorage {
  /** The annotation prefix. */
  readonly prefix: string;
  /** Whether `null` fields are written. */
  readonly verbose: boolean;
  /** The name of the touch-dummy annotation. */
  readonly touchKey: string;
  /** Whether V1 keys are written and read. */
  readonly v1: boolean;

  /** Creates the storage; throws for an empty prefix, warns for a prefix longer than 189 characters. */
  constructor(options: AnnotationsProgressStorageOptions = {}) {
    this.prefix = options.prefix ?? "kopf.zalando.org";
    this.verbose = options.verbose ?? false;
    this.touchKey = options.touchKey ?? "touch-dummy";
    this.v1 = options.v1 ?? true;
    checkPrefix(this.prefix);
  }

  /** The annotation keys of a handler's record on this object (V2, then V1 if different). */
  keys(key: string, body?: KubernetesObject): string[] {
    return [...this.#keys(key, body)];
  }

  #keys(key: string, body?: KubernetesObject): readonly string[] {
    return sharedStorageKeys(this.prefix, key, { v1: this.v1, body });
  }

  /** The record under the first of the keys that holds one (V2 before V1). */
  fetch(key: string, body: KubernetesObject): ProgressRecord | null {
    const annotations = body.metadata?.annotations;
    if (!holdsPrefixed(annotations, this.prefix)) return null;
    for (const fullKey of this.#keys(key, body)) {
      const encoded = annotations![fullKey];
      if (encoded === undefined || encoded === null) continue;
      const decoded = decodeProgressRecord(encoded, `The annotation ${fullKey}`);
      if (decoded !== null) return decoded;
    }
    return null;
  }

  /** Writes the record under all its keys (plus the prefix marker), unless the object holds it already. */
  store(key: string, record: ProgressRecord, body: KubernetesObject, patch: Patch): void {
    if (sameProgressRecord(record, this.fetch(key, body))) return;
    const encoded = encodeProgressRecord(record, { verbose: this.verbose });
    for (const fullKey of this.#keys(key, body)) patch.metadata.annotations[fullKey] = encoded;
    storeMarker(this.prefix, patch, body);
  }

  /** Deletes the record's annotations that the object has; drops those only the patch has. */
  purge(key: string, body: KubernetesObject, patch: Patch): void {
    const annotations = body.metadata?.annotations ?? {};
    if (!holdsPrefixed(annotations, this.prefix) && !holdsPrefixed(patch.metadata.annotations, this.prefix)) return;
    for (const fullKey of this.#keys(key, body)) {
      if (Object.hasOwn(annotations, fullKey)) {
        patch.metadata.annotations[fullKey] = null;
      } else if (Object.hasOwn(patch.metadata.annotations, fullKey)) {
        delete patch.metadata.annotations[fullKey];
      }
    }
  }

  /** Sets or clears the touch-dummy annotation where the object's value differs. */
  touch(body: KubernetesObject, patch: Patch, value: string | null): void {
    const annotations = body.metadata?.annotations ?? {};
    for (const fullKey of this.#keys(this.touchKey, body)) {
      if ((annotations[fullKey] ?? null) !== value) {
        patch.metadata.annotations[fullKey] = value;
        storeMarker(this.prefix, patch, body);
      }
    }
  }

  /**
   * The essence without any annotation of this storage's prefix: a copy if there is any (or an
   * empty stanza to remove), else the essence itself -- cleared in every cycle of every object,
   * where the essence just built has none.
   */
  clear(essence: JsonObject): JsonObject {
    // Mappings tested inline, not by `isMapping()`: this runs for every object.
    const annotations = (essence.metadata as JsonObject | undefined)?.annotations;
    const own = `${this.prefix}/`;
    const keys: string[] = [];
    if (annotations !== null && typeof annotations === "object" && !Array.isArray(annotations)) {
      for (const key in annotations) if (key.startsWith(own)) keys.push(key);
    }
    if (!keys.length && !hasEmptyStanzas(essence)) return essence;
    const copy = cloneJson(essence);
    removeAnnotations(copy, keys);
    removeEmptyStanzas(copy);
    return copy;
  }
}

/**
 * An annotations storage that reads and purges records but writes none: the lean preset's
 * (`settings.persistence.useLeanStorage()`) treatment of Kopf's annotations, so that objects that
 * Kopf handled are taken over while new records go where the status PATCH carries them.
 */
export class ReadOnlyAnnotationsProgressStorage extends AnnotationsProgressStorage {
  /** Writes nothing. */
  override store(_key: string, _record: ProgressRecord, _body: KubernetesObject, _patch: Patch): void {}

  /** Writes nothing. */
  override touch(_body: KubernetesObject, _patch: Patch, _value: string | null): void {}
}
