/**
 * TLS without verifying the server's certificate (`insecure-skip-tls-verify`,
 * `ConnectionInfo.insecure`), which `Deno.createHttpClient` cannot do per client: a bridge on a
 * private Unix socket that takes plain HTTP from the client and forwards each connection over
 * `node:tls` with verification off. The client sends `http://<server's host:port>/...` through
 * the socket (the `unix` proxy transport), so the Host header is the server's own.
 *
 * The socket lives in a fresh folder only this user may enter: other local users cannot ride on
 * the client certificate the bridge presents.
 *
 * @module
 */

import type * as net from "node:net";
import { join } from "node:path";

/** What the bridge presents to the server. */
export interface BridgeTls {
  /** The client certificate chain, PEM. */
  cert?: string;
  /** The client private key, PEM. */
  key?: string;
  /** The name to send as SNI, if not the server's host name. */
  serverName?: string;
}

/** A running bridge to one server. */
export class InsecureBridge {
  /** The Unix socket that the HTTP client connects to. */
  readonly path: string;
  readonly #server: net.Server;
  readonly #folder: string;

  private constructor(server: net.Server, folder: string, path: string) {
    this.#server = server;
    this.#folder = folder;
    this.path = path;
  }

  /** Whether this platform has Unix sockets for the bridge. */
  static get supported(): boolean {
    return Deno.build.os !== "windows";
  }

  /**
   * Starts a bridge to the server of an `https://` URL.
   *
   * @param server The server's URL (only its host and port count).
   * @param material The client certificate and key to present, and the SNI name.
   * @returns The bridge, listening.
   */
  static async open(server: URL, material: BridgeTls = {}): Promise<InsecureBridge> {
    // Loaded here, for the rare kubeconfig that skips verification: Node's sockets cost every other operator ~4 MiB.
    const [net, tls] = await Promise.all([import("node:net"), import("node:tls")]);
    const host = server.hostname.replace(/^\[(.*)\]$/, "$1");
    const port = Number(server.port || 443);
    const name = material.serverName ?? host;
    const sni = net.isIP(name) ? undefined : name;
    const folder = await Deno.makeTempDir({ prefix: "kopf-insecure-" });
    await Deno.chmod(folder, 0o700);
    const path = join(folder, "bridge.sock");
    const bridge = net.createServer((local) => {
      const remote = tls.connect({
        host,
        port,
        servername: sni,
        rejectUnauthorized: false,
        cert: material.cert,
        key: material.key,
        ALPNProtocols: ["http/1.1"],
      });
      local.pipe(remote);
      remote.pipe(local);
      local.on("error", () => remote.destroy());
      remote.on("error", () => local.destroy());
    });
    await new Promise<void>((resolve, reject) => {
      bridge.once("error", reject);
      bridge.listen(path, () => {
        bridge.off("error", reject);
        resolve();
      });
    });
    return new InsecureBridge(bridge, folder, path);
  }

  /**
   * Stops accepting connections and removes the socket; connections already open (a watch
   * stream in progress) run until they end.
   */
  close(): void {
    this.#server.close();
    Deno.remove(this.#folder, { recursive: true }).catch(() => {
      // A leftover empty folder in the temporary directory harms nobody.
    });
  }
}
