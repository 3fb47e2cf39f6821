/**
 * Free TCP ports on loopback for the control-plane processes, chosen by the operating system.
 *
 * @module
 */

/**
 * Returns `count` distinct ports that were free a moment ago on 127.0.0.1.
 *
 * All listeners are held open until every port is known, so that the OS cannot hand out the same
 * port twice. Another program may still take a port before our process binds it; that shows up as
 * "address already in use" in the failing component's log.
 */
export function freePorts(count: number): number[] {
  const listeners = Array.from(
    { length: count },
    () => Deno.listen({ hostname: "127.0.0.1", port: 0 }),
  );
  try {
    return listeners.map((listener) => (listener.addr as Deno.NetAddr).port);
  } finally {
    for (const listener of listeners) listener.close();
  }
}
