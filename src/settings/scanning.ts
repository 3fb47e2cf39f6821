/**
 * Settings of the runtime observation of the cluster: namespaces and CRDs.
 *
 * @module
 */

/**
 * Whether the operator watches the cluster for namespaces and CRDs that come and go.
 *
 * @example
 * ```ts
 * import * as kopf from "@kopf/kopf";
 * kopf.on.startup(function configure({ settings }) {
 *   settings.scanning.disabled = true; // only what exists at start, and only exact namespaces
 * });
 * ```
 */
export class ScanningSettings {
  /**
   * Turns off the runtime observation of CRDs and namespaces: the resources are discovered once
   * at start, and in namespaced mode only the exact namespace names are served (patterns with
   * `*`, `?`, `!` or `,` are ignored, as namespaces are not listed). No namespace or CRD is listed
   * or watched. Read when the operator starts serving (after the startup handlers). Kopf's
   * default: `false`.
   */
  disabled = false;
}
