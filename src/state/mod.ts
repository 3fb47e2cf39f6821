/**
 * How handler state lives on objects, exactly as Kopf 1.44 keeps it: progress records, the
 * diff-base (essence), annotation keys, and their JSON encoding.
 *
 * @module
 */

export { type ProgressStorage } from "./progress_storage.ts";
export {
  AnnotationsProgressStorage,
  type AnnotationsProgressStorageOptions,
  ReadOnlyAnnotationsProgressStorage,
} from "./annotations_progress.ts";
export {
  ReadOnlyStatusProgressStorage,
  StatusProgressStorage,
  type StatusProgressStorageOptions,
} from "./status_progress.ts";
export { MultiProgressStorage } from "./multi_progress.ts";
export { SmartProgressStorage, type SmartProgressStorageOptions } from "./smart_progress.ts";
export {
  completeProgressRecord,
  decodeProgressRecord,
  type EncodeProgressOptions,
  encodeProgressRecord,
  PROGRESS_RECORD_FIELDS,
  type ProgressRecord,
  sameProgressRecord,
} from "./progress.ts";
export { formatTimestamp, normalizeTimestamp, parseTimestamp } from "./timestamps.ts";
export { decodeEssence, type DiffBaseStorage } from "./diffbase_storage.ts";
export {
  AnnotationsDiffBaseStorage,
  type AnnotationsDiffBaseStorageOptions,
  ReadOnlyAnnotationsDiffBaseStorage,
} from "./annotations_diffbase.ts";
export { StatusDiffBaseStorage, type StatusDiffBaseStorageOptions } from "./status_diffbase.ts";
export { MultiDiffBaseStorage } from "./multi_diffbase.ts";
export {
  buildEssence,
  type EssenceOptions,
  KUBECTL_LAST_APPLIED,
  removeAnnotations,
  removeEmptyStanzas,
} from "./essence.ts";
export {
  checkPrefix,
  detectMarkedPrefixes,
  keySuffix,
  MANAGED_MARKER,
  markKey,
  MAX_NAME_LENGTH,
  MAX_PREFIX_LENGTH,
  safeKey,
  storageKeys,
  type StorageKeysOptions,
  storeMarker,
  v1Key,
  v2Key,
} from "./keys.ts";
export { type FieldSpec } from "./fields.ts";
export { dumpPythonJson, type LooseJsonValue } from "./python_json.ts";
