/**
 * The start of `kopf run`, made shorter by one step of Deno's that can be done on the side.
 *
 * The first HTTPS request of a Deno process pays a one-time set-up of its crypto library: about
 * 20 ms on the main thread, inside that request, during which nothing else runs (the first request
 * to a LocalCluster took ~25 ms, the next one 1, a second client's first 2; bench/first_request.ts).
 * A WebCrypto key generation does the same set-up on one of Deno's worker threads. Started before
 * the framework's modules load, it is done by the time the operator sends its first request (which
 * then took ~4 ms), and the main thread never waits for it longer than it would have. An HMAC key
 * warms as well as an elliptic-curve one (the set-up is the random generator's, not the curve's),
 * and runs less of Deno's code, whose pages stay in an idle operator's RSS (~0.7 MiB fewer than
 * with ECDSA: docs/performance.md).
 *
 * @module
 */

/**
 * Starts the crypto library's set-up on a worker thread and returns at once. The key it generates
 * is dropped; a failure (a runtime without WebCrypto's HMAC) changes nothing but the time of the
 * first request.
 */
export function warmUpTls(): void {
  crypto.subtle.generateKey({ name: "HMAC", hash: "SHA-256" }, false, ["sign"]).catch(() => {});
}
