/**
 * Whether a connection still answers, asked when a stream over it fell silent (`ApiClient.stalled`):
 * one authenticated `GET /version` over the stream's own client, any answer counting.
 *
 * @module
 */

import type { RequestCounters } from "./counters.ts";
import type { Credentials } from "./credentials.ts";
import type { Transports } from "./transports.ts";

/** Seconds that the probe of a silent stream's connection may take (see `ApiClient.stalled`). */
const PROBE_TIMEOUT = 10;

/**
 * Whether anything answers a request over the client within 10 s, or within the silence if that is
 * shorter, but at least 1 s. The probe is counted as a request (`get version`).
 *
 * @param counters the client's request counters.
 * @param transports the client's transports, for the server's URL.
 * @param client the silent stream's client.
 * @param credentials the stream's credentials, which the probe is sent with.
 * @param silentFor how long the stream has been silent, in seconds.
 * @returns whether an answer came in time.
 */
export async function probeConnection(
  counters: RequestCounters,
  transports: Transports,
  client: Deno.HttpClient,
  credentials: Credentials,
  silentFor: number,
): Promise<boolean> {
  const seconds = Math.min(PROBE_TIMEOUT, Math.max(1, silentFor));
  counters.record("get", "version");
  try {
    const url = transports.url(credentials, "/version", undefined);
    // Authenticated: kube-apiserver ends an HTTP/2 connection after a request without credentials
    // (its defence against unauthenticated clients), and this one carries the streams and requests.
    const authorization = await credentials.authorization();
    const headers: Record<string, string> = authorization ? { Authorization: authorization } : {};
    const response = await fetch(url, { client, headers, signal: AbortSignal.timeout(seconds * 1000) });
    await response.body?.cancel();
    return true;
  } catch {
    return false;
  }
}
