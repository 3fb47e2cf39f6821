/**
 * The diff-base in an annotation, Kopf's default: `kopf.zalando.org/last-handled-configuration`
 * holds the essence as compact JSON plus a newline (V2 and, while `v1` is on, V1 keys).
 *
 * @module
 */

import type { JsonObject, KubernetesObject } from "../model/body.ts";
import type { Patch } from "../model/patch.ts";
import { decodeEssence, type DiffBaseStorage, reduceEssence } from "./diffbase_storage.ts";
import { buildEssence, removeAnnotations, removeEmptyStanzas } from "./essence.ts";
import { ANNOTATIONS_SIZE_LIMIT, annotationsSize, digestEssence } from "./essence_digest.ts";
import { type FieldSpec, parseField, removeField } from "./fields.ts";
import { checkPrefix, holdsPrefixed, sharedStorageKeys, storeMarker } from "./keys.ts";
import { dumpPythonJson } from "./python_json.ts";

/** Options of {@linkcode AnnotationsDiffBaseStorage}. */
export interface AnnotationsDiffBaseStorageOptions {
  /** The annotation prefix; `kopf.zalando.org` by default. Other prefixes also get a `<prefix>/kopf-managed` marker. */
  prefix?: string;
  /** The annotation name; `last-handled-configuration` by default. */
  key?: string;
  /** Fields left out of the essence, e.g. `spec.replicas` when an autoscaler changes it. */
  ignoredFields?: Iterable<FieldSpec>;
  /** Also write (and read) the V1 key of old Kopf versions where it differs; on by default. */
  v1?: boolean;
}

/**
 * Keeps the essence in an annotation, as Kopf does by default.
 *
 * @example
 * ```ts
 * import { AnnotationsDiffBaseStorage } from "./annotations_diffbase.ts";
 * const storage = new AnnotationsDiffBaseStorage({ prefix: "my-op.example.com", ignoredFields: ["spec.replicas"] });
 * ```
 */
export class AnnotationsDiffBaseStorage implements DiffBaseStorage {
  /** The annotation prefix. */
  readonly prefix: string;
  /** The annotation name. */
  readonly key: string;
  /** Whether the V1 key is written and read. */
  readonly v1: boolean;
  /** Fields left out of the essence. */
  readonly ignoredFields: readonly FieldSpec[];

  /** Creates the storage; throws for an empty prefix, warns for a prefix longer than 189 characters. */
  constructor(options: AnnotationsDiffBaseStorageOptions = {}) {
    this.prefix = options.prefix ?? "kopf.zalando.org";
    this.key = options.key ?? "last-handled-configuration";
    this.v1 = options.v1 ?? true;
    this.ignoredFields = [...(options.ignoredFields ?? [])];
    checkPrefix(this.prefix);
  }

  /** The annotation keys on this object (V2, then V1 if different). */
  keys(body?: KubernetesObject): string[] {
    return [...this.#keys(body)];
  }

  #keys(body?: KubernetesObject): readonly string[] {
    return sharedStorageKeys(this.prefix, this.key, { v1: this.v1, body });
  }

  /** The essence without this storage's own annotations. */
  build(body: KubernetesObject, extraFields?: Iterable<FieldSpec>): JsonObject {
    return this[reduceEssence](buildEssence(body, { extraFields }), body);
  }

  /** The ignored fields and the storage's own annotations taken out of an essence (see `reduceEssence`). */
  [reduceEssence](essence: JsonObject, body: KubernetesObject): JsonObject {
    for (const field of this.ignoredFields) removeField(essence, parseField(field));
    const metadata = essence.metadata as { annotations?: Record<string, unknown> } | undefined;
    if (holdsPrefixed(metadata?.annotations, this.prefix)) removeAnnotations(essence, this.#keys(body));
    removeEmptyStanzas(essence);
    return essence;
  }

  /** The essence under the first key that holds one (V2 before V1). */
  fetch(body: KubernetesObject): JsonObject | null {
    const annotations = body.metadata?.annotations;
    if (!holdsPrefixed(annotations, this.prefix)) return null;
    for (const fullKey of this.#keys(body)) {
      const encoded = annotations![fullKey];
      if (encoded === undefined || encoded === null) continue;
      const decoded = decodeEssence(encoded, `The annotation ${fullKey}`);
      if (decoded !== null) return decoded;
    }
    return null;
  }

  /**
   * Writes the essence as compact JSON plus a newline under all keys (plus the prefix marker) --
   * or, when that would take the object's annotations over the API server's 256 KiB limit, a
   * digest of it (see `essence_digest.ts`): the patch would be refused otherwise.
   */
  store(body: KubernetesObject, patch: Patch, essence: JsonObject): void {
    storeMarker(this.prefix, patch, body);
    const keys = this.#keys(body);
    const encoded = `${dumpPythonJson(essence)}\n`;
    // UTF-8 takes at most three bytes per UTF-16 unit: where three times the units fit, so do the bytes,
    // and the exact count (a pass over every character of every annotation) is not needed -- nearly always.
    let units = 0;
    for (const key of keys) units += key.length + encoded.length;
    const annotations = body.metadata?.annotations;
    if (annotations) { for (const key in annotations) units += key.length + String(annotations[key]).length; }
    const changed = patch.metadata.annotations;
    for (const key in changed) units += key.length + (changed[key]?.length ?? 0);
    const fits = units * 3 <= ANNOTATIONS_SIZE_LIMIT ||
      annotationsSize(body, patch, Object.fromEntries(keys.map((key) => [key, encoded]))) <= ANNOTATIONS_SIZE_LIMIT;
    const value = fits ? encoded : `${dumpPythonJson(digestEssence(essence))}\n`;
    for (const fullKey of keys) patch.metadata.annotations[fullKey] = value;
  }
}

/**
 * An annotations diff-base that is read but never written: the lean preset's
 * (`settings.persistence.useLeanStorage()`) treatment of Kopf's `last-handled-configuration`, so
 * that objects that Kopf handled are diffed against it until the first cycle stores the essence
 * elsewhere (which is then read first). Its annotations are still kept out of the essence.
 */
export class ReadOnlyAnnotationsDiffBaseStorage extends AnnotationsDiffBaseStorage {
  /** Writes nothing. */
  override store(_body: KubernetesObject, _patch: Patch, _essence: JsonObject): void {}
}
