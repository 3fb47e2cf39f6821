/**
 * Settings of the state kept on objects.
 *
 * @module
 */

import { AnnotationsDiffBaseStorage } from "../state/annotations_diffbase.ts";
import type { DiffBaseStorage } from "../state/diffbase_storage.ts";
import type { ProgressStorage } from "../state/progress_storage.ts";
import { SmartProgressStorage } from "../state/smart_progress.ts";

/** Where and how handling state lives on the objects (Kopf-compatible by default). */
export class PersistenceSettings {
  /** The finalizer the operator puts on objects that need deletion handling. */
  finalizer = "kopf.zalando.org/KopfFinalizerMarker";
  /** Where handlers' progress is kept: annotations, also reading `status.kopf.progress` (Kopf 1.44). */
  progressStorage: ProgressStorage = new SmartProgressStorage();
  /** Where the last handled essence is kept: the `kopf.zalando.org/last-handled-configuration` annotation. */
  diffbaseStorage: DiffBaseStorage = new AnnotationsDiffBaseStorage();
  /**
   * Seconds to wait for the watch to deliver the operator's own last patch before handlers that
   * depend on the stored state run anyway; 0 disables the wait.
   */
  consistencyTimeout = 5;
  /**
   * Seconds into a cycle after which, while a handler is still running, the outcomes of the
   * handlers finished so far are written (so that a crash does not re-run them); `null`: only at
   * the end of the cycle. Cycles faster than this write once, at their end.
   */
  checkpointDelay: number | null = 1;
}
