/**
 * The start of `kopf run`, made shorter by doing one step of Deno's ahead, where it costs less.
 *
 * The first HTTPS request of a Deno process pays a one-time set-up of its crypto library: about
 * 20-45 ms inside that request (the first request to a LocalCluster took ~45 ms, the next one 1, a
 * second client's first 2; bench/first_request.ts). Generating a WebCrypto HMAC key does the
 * random generator's part of that set-up at once, on the main thread (27-44 ms measured with Deno
 * 2.9; an ECDSA key would do it on a worker thread, but runs curve code that stays in an idle
 * operator's RSS, ~0.7 MiB: docs/performance.md). Done before the framework's modules load, it
 * costs less than inside the first TLS handshake: the object of bench/start_timeline.ts is handled
 * ~14 ms sooner than without it, and as soon as with ECDSA within the runs' noise.
 *
 * @module
 */

/**
 * Does the crypto library's set-up (synchronously, for an HMAC key) and returns. The key it generates
 * is dropped; a failure (a runtime without WebCrypto's HMAC) changes nothing but the time of the
 * first request.
 */
export function warmUpTls(): void {
  crypto.subtle.generateKey({ name: "HMAC", hash: "SHA-256" }, false, ["sign"]).catch(() => {});
}
