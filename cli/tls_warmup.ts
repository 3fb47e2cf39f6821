/**
 * The start of `kopf run`, made shorter by one step of Deno's that can be done on the side.
 *
 * Deno's TLS initialises its crypto library at the first use in a process: about 20 ms of CPU on
 * the main thread, inside the first HTTPS request, during which nothing else runs (measured on our
 * machines with Deno 2.9: the first request to a LocalCluster took 23-26 ms and the next one 1-2,
 * and a second client's first request 2). A WebCrypto key generation initialises the same library
 * on one of Deno's worker threads. Started before the framework's modules load, it is done by the
 * time the operator sends its first request (that request then took 3 ms), and the main thread
 * never waits for it.
 *
 * @module
 */

/**
 * Starts the crypto library's initialisation on a worker thread and returns at once. The key it
 * generates is dropped; a failure (a runtime without WebCrypto's ECDSA) changes nothing but the
 * time of the first request.
 */
export function warmUpTls(): void {
  crypto.subtle.generateKey({ name: "ECDSA", namedCurve: "P-256" }, false, ["sign"]).catch(() => {});
}
