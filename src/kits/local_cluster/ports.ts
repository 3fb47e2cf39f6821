/**
 * Free TCP ports on loopback for servers whose address must be known before they start (the
 * control-plane processes, an operator's probes in tests and benches).
 *
 * @module
 */

/** Where to look when the kernel does not say its range of ephemeral ports. */
const FALLBACK_EPHEMERAL_START = 32768;
/** The lowest port handed out: above the well-known and most registered ones. */
const LOWEST = 10000;

/**
 * The ports above 1023 that `fetch` refuses to connect to (the Fetch standard's "bad ports"):
 * an API server on 10080 could never be reached ("Requests to port 10080 are blocked").
 */
const FETCH_BLOCKED = new Set([
  1719,
  1720,
  1723,
  2049,
  3659,
  4045,
  4190,
  5060,
  5061,
  6000,
  6566,
  6665,
  6666,
  6667,
  6668,
  6669,
  6679,
  6697,
  10080,
]);

/**
 * Returns `count` distinct ports that were free a moment ago on 127.0.0.1.
 *
 * They are chosen below the kernel's range of ephemeral ports, which outgoing connections take
 * theirs from: a port picked there (as port 0 does) may be taken by one of the many client
 * connections of a busy test or bench between the check and the bind. Ports that `fetch` refuses are
 * never chosen. All listeners are held open
 * until every port is known, so that no port is returned twice. Another program may still take a
 * port before our process binds it; that shows up as "address already in use" in the failing
 * component's log.
 */
export function freePorts(count: number): number[] {
  const below = ephemeralStart();
  const listeners: Deno.Listener[] = [];
  try {
    for (let attempt = 0; listeners.length < count && attempt < count * 50; attempt++) {
      const port = LOWEST + Math.floor(Math.random() * (below - LOWEST));
      if (FETCH_BLOCKED.has(port)) continue;
      try {
        listeners.push(Deno.listen({ hostname: "127.0.0.1", port }));
      } catch (error) {
        if (!(error instanceof Deno.errors.AddrInUse)) throw error;
      }
    }
    while (listeners.length < count) listeners.push(Deno.listen({ hostname: "127.0.0.1", port: 0 }));
    return listeners.map((listener) => (listener.addr as Deno.NetAddr).port);
  } finally {
    for (const listener of listeners) listener.close();
  }
}

/** The first ephemeral port by the kernel's setting (Linux), or the usual one elsewhere. */
function ephemeralStart(): number {
  try {
    const start = Number(Deno.readTextFileSync("/proc/sys/net/ipv4/ip_local_port_range").trim().split(/\s+/)[0]);
    return start > LOWEST + 1000 ? start : FALLBACK_EPHEMERAL_START;
  } catch {
    return FALLBACK_EPHEMERAL_START;
  }
}
