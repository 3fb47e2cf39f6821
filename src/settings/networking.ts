/**
 * Settings of the API client: timeouts and how failed requests are retried.
 *
 * @module
 */

/** How requests to the Kubernetes API are timed and retried. */
export class NetworkingSettings {
  /** Seconds for a whole request (not for watch streams); `null` for no limit. Kopf's default: 300. */
  requestTimeout: number | null = 300;
  /** Seconds until the response headers arrive (for watches too); `null`: no separate limit. */
  connectTimeout: number | null = 30;
  /**
   * Seconds to wait before each retry of a request that failed with a connection error, a 5xx or
   * a 429; its length is the number of retries. Kopf's default: 1, 1, 2, 3, 5, 8, 13, 21.
   */
  errorBackoffs: number[] = [1, 1, 2, 3, 5, 8, 13, 21];
  /** Always wait as long as the server's `Retry-After` says, even when the backoff is longer. */
  enforceRetryAfter = false;
}
