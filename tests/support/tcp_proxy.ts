/**
 * A loopback TCP proxy that can stop forwarding on its open connections while keeping them open:
 * the half-dead connection that makes watch streams stall silently in real networks.
 *
 * @module
 */

/** Forwards connections from a free loopback port to a target port. */
export class TcpProxy implements AsyncDisposable {
  readonly #listener: Deno.TcpListener;
  readonly #target: number;
  readonly #connections = new Set<{ frozen: boolean; close: () => void }>();
  readonly #accepting: Promise<void>;
  #silent = false;
  #accepted = 0;

  /** Starts forwarding to `127.0.0.1:<target>`. */
  constructor(target: number) {
    this.#target = target;
    this.#listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
    this.#accepting = this.#accept();
  }

  /** The port the proxy listens on. */
  get port(): number {
    return this.#listener.addr.port;
  }

  /** Connections accepted so far, open or not. */
  get accepted(): number {
    return this.#accepted;
  }

  /** Connections accepted so far and still open. */
  get open(): number {
    return this.#connections.size;
  }

  /** Stops forwarding on every connection open now (they stay open); later connections work. */
  freeze(): void {
    for (const connection of this.#connections) connection.frozen = true;
  }

  /** Stops forwarding on every connection, those open now and those accepted later: a server that never answers. */
  silence(): void {
    this.#silent = true;
    this.freeze();
  }

  async [Symbol.asyncDispose](): Promise<void> {
    this.#listener.close();
    for (const connection of this.#connections) connection.close();
    await this.#accepting;
  }

  async #accept(): Promise<void> {
    for (;;) {
      let inbound: Deno.TcpConn;
      try {
        inbound = await this.#listener.accept();
      } catch {
        return;
      }
      this.#accepted++;
      let outbound: Deno.TcpConn;
      try {
        outbound = await Deno.connect({ hostname: "127.0.0.1", port: this.#target });
      } catch {
        inbound.close();
        continue;
      }
      const connection = {
        frozen: this.#silent,
        close: () => {
          for (const conn of [inbound, outbound]) {
            try {
              conn.close();
            } catch {
              // Already closed by the other direction.
            }
          }
        },
      };
      this.#connections.add(connection);
      const pipe = async (from: Deno.TcpConn, to: Deno.TcpConn) => {
        const buffer = new Uint8Array(64 * 1024);
        try {
          for (;;) {
            const count = await from.read(buffer);
            if (count === null) break;
            if (connection.frozen) continue; // Swallow: the peer waits forever, as behind a dead link.
            let written = 0;
            while (written < count) written += await to.write(buffer.subarray(written, count));
          }
        } catch {
          // A closed socket ends the pipe.
        }
        connection.close();
        this.#connections.delete(connection);
      };
      pipe(inbound, outbound);
      pipe(outbound, inbound);
    }
  }
}
