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
  /**
   * How many requests (not watch streams) are under way at once; the others wait, in order, before
   * their timeouts start -- the status part of a patch whose main part is sent ahead of the writes
   * that begin new work, so that a begun cycle ends before more start. `null`: no limit (as Kopf).
   * With no limit, 1,000 objects found at start are 1,000 PATCHes in flight at once, whose buffers
   * stay in the process's memory afterwards (~20 MiB of the malloc heap, measured); the API server
   * answers no sooner when more requests queue inside it than in the operator.
   */
  concurrentRequests: number | null = 32;
}
