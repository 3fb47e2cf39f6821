/**
 * The start of `kopf run`, made shorter by doing one step of Deno's ahead, off the main thread.
 *
 * The first HTTPS request of a Deno process pays a one-time set-up of its crypto library's random
 * generator: ~60 ms of CPU with Deno 2.9.6 on our machines, inside that request when nothing did it
 * before (bench/first_request.ts). Generating a WebCrypto ECDSA key does that set-up on one of
 * Deno's blocking threads, so it runs while the main thread loads the framework's modules; an HMAC
 * key, tried from 2026-12-05 to spare the curve code's pages, does it on the main thread, before
 * the modules. Side by side on 2026-12-07 (bench/start_timeline.ts, eight rounds each), the watch
 * was sent 75 ms sooner with ECDSA than with HMAC, at the same CPU and 0.3 MiB more idle RSS
 * (docs/performance/smaller-measurements.md, "The crypto set-up off the main thread again").
 *
 * @module
 */

/**
 * Starts the crypto library's set-up on a worker thread and returns at once. The key it generates
 * is dropped; a failure (a runtime without WebCrypto's ECDSA) changes nothing but the time of the
 * first request.
 */
export function warmUpTls(): void {
  crypto.subtle.generateKey({ name: "ECDSA", namedCurve: "P-256" }, false, ["sign"]).catch(() => {});
}
