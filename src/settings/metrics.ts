/**
 * Settings of the metrics endpoint.
 *
 * @module
 */

/**
 * Where the operator serves its Prometheus metrics.
 *
 * @example
 * ```ts
 * import * as kopf from "@kopf/kopf";
 * const settings = new kopf.Settings();
 * settings.metrics.endpoint = "http://0.0.0.0:9090/metrics";
 * ```
 */
export class MetricsSettings {
  /**
   * The URL to serve the metrics at, e.g. `http://0.0.0.0:9090/metrics` (only `http`; port 0 picks
   * a free one); on the liveness server when it has the same host and port. `null`: not served.
   * `kopf run --metrics URL` sets it; read once, when the operator connects.
   */
  endpoint: string | null = null;
}
