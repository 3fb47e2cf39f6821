/**
 * The default progress storage, as in Kopf 1.44: records in annotations (read and written), and
 * the records that Kopf versions before 1.44 also kept in `status.kopf.progress` read and purged
 * but no longer written, so that objects handled by those versions are taken over seamlessly.
 *
 * @module
 */

import type { FieldSpec } from "./fields.ts";
import { AnnotationsProgressStorage } from "./annotations_progress.ts";
import { MultiProgressStorage } from "./multi_progress.ts";
import { ReadOnlyStatusProgressStorage } from "./status_progress.ts";

/** Options of {@linkcode SmartProgressStorage}: those of the annotations and status storages it combines. */
export interface SmartProgressStorageOptions {
  /** Replaces `{name}` in the status fields; `kopf` by default. */
  name?: string;
  /** Where old Kopf versions kept records in the status; `status.{name}.progress` by default. */
  field?: FieldSpec;
  /** The name of the touch-dummy annotation; `touch-dummy` by default. */
  touchKey?: string;
  /** Where old Kopf versions kept the touch dummy in the status; `status.{name}.dummy` by default. */
  touchField?: FieldSpec;
  /** The annotation prefix; `kopf.zalando.org` by default. */
  prefix?: string;
  /** Also write (and read) the V1 annotation keys; on by default. */
  v1?: boolean;
  /** Write `null` fields into the records too; off by default. */
  verbose?: boolean;
}

/**
 * Annotations first (read-write), then the status stanza (read and purge only): Kopf 1.44's default.
 *
 * @example
 * ```ts
 * import { SmartProgressStorage } from "./smart_progress.ts";
 * const storage = new SmartProgressStorage(); // kopf.zalando.org/<id>, and status.kopf.progress.<id> read-only
 * ```
 */
export class SmartProgressStorage extends MultiProgressStorage {
  /** Creates the annotations storage and the read-only status storage it combines. */
  constructor(options: SmartProgressStorageOptions = {}) {
    super([
      new AnnotationsProgressStorage({
        prefix: options.prefix,
        v1: options.v1,
        verbose: options.verbose,
        touchKey: options.touchKey,
      }),
      new ReadOnlyStatusProgressStorage({ name: options.name, field: options.field, touchField: options.touchField }),
    ]);
  }
}
