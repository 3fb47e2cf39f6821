/**
 * Settings of the state kept on objects.
 *
 * @module
 */

/** Where and how handling state lives on the objects (Kopf-compatible by default). */
export class PersistenceSettings {
  /** The finalizer the operator puts on objects that need deletion handling. */
  finalizer = "kopf.zalando.org/KopfFinalizerMarker";
  /** The annotation prefix of progress records and the diff-base. */
  prefix = "kopf.zalando.org";
  /**
   * Seconds to wait for the watch to deliver the operator's own last patch before handlers that
   * depend on the stored state run anyway; 0 disables the wait.
   */
  consistencyTimeout = 5;
}
