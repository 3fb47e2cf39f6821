/**
 * A loopback HTTPS proxy in front of the API server that counts the bytes of the response bodies
 * it forwards, by kind of request: put between one operator and the API server, it tells what that
 * operator received in lists and watch streams of its resources, apart from everything else (the
 * answers to its patches, its Lease renewals, discovery). It terminates TLS with a certificate of
 * its own (`caCert`) and forwards with the client's own `Authorization` header, as
 * tests/support/fault_proxy.ts does, so a kubeconfig with its URL, its CA and the cluster's token works.
 * Bodies are asked for and counted uncompressed (the API server gzips large lists for clients that
 * accept it, so on the wire the lists would be smaller).
 *
 * @module
 */

import { createSelfSignedCertificates, type SelfSignedCertificates } from "../src/kits/certificates.ts";

/** What the API server sent through the proxy so far: body bytes by kind of request. */
export interface ReceivedBytes {
  /** Lists (GETs without `watch`) of the counted resource. */
  list: number;
  /** Watch streams of the counted resource. */
  watch: number;
  /** Everything else: writes, Leases, discovery, Events. */
  other: number;
}

let certificates: Promise<SelfSignedCertificates> | undefined;

/** A running proxy; see the module's description. */
export class CountingProxy implements AsyncDisposable {
  /** The proxy's URL, `https://127.0.0.1:<port>`. */
  readonly url: string;
  /** PEM of the CA that signs the proxy's certificate. */
  readonly caCert: string;
  /** The bytes received so far. */
  readonly received: ReceivedBytes = { list: 0, watch: 0, other: 0 };
  readonly #upstream: string;
  readonly #resource: string;
  readonly #client: Deno.HttpClient;
  readonly #server: Deno.HttpServer<Deno.NetAddr>;
  /** Ends the responses still streaming (watches), so that the server can shut down. */
  readonly #open = new Set<() => void>();

  private constructor(upstream: string, upstreamCa: string, resource: string, tls: SelfSignedCertificates) {
    this.#upstream = upstream;
    this.#resource = resource;
    this.caCert = tls.ca;
    this.#client = Deno.createHttpClient({ caCerts: [upstreamCa] });
    this.#server = Deno.serve(
      { hostname: "127.0.0.1", port: 0, cert: tls.cert, key: tls.key, onListen: () => {} },
      (request) => this.#forward(request),
    );
    this.url = `https://127.0.0.1:${this.#server.addr.port}`;
  }

  /**
   * Starts a proxy to the API server at `upstream` (whose certificate `upstreamCa` signs), counting
   * lists and watches of the resource whose plural is `resource` (e.g. `kopfexamples`).
   */
  static async start(upstream: string, upstreamCa: string, resource: string): Promise<CountingProxy> {
    certificates ??= createSelfSignedCertificates(["127.0.0.1", "localhost"]);
    return new CountingProxy(upstream, upstreamCa, resource, await certificates);
  }

  async [Symbol.asyncDispose](): Promise<void> {
    for (const cut of this.#open) cut();
    await this.#server.shutdown();
    this.#client.close();
  }

  async #forward(request: Request): Promise<Response> {
    const url = new URL(request.url);
    const watch = ["true", "1"].includes(url.searchParams.get("watch") ?? "");
    const ours = request.method === "GET" && url.pathname.split("/").at(-1) === this.#resource;
    const kind: keyof ReceivedBytes = ours ? (watch ? "watch" : "list") : "other";
    const headers = new Headers(request.headers);
    // Deno's fetch decompresses a gzipped body but keeps its content-encoding header: the operator would
    // fail to decompress it again. Uncompressed, the bodies are counted as the operator parses them.
    for (const name of ["host", "connection", "content-length", "transfer-encoding", "accept-encoding"]) {
      headers.delete(name);
    }
    headers.set("accept-encoding", "identity");
    let upstream: Response;
    try {
      upstream = await fetch(this.#upstream + url.pathname + url.search, {
        method: request.method,
        headers,
        body: request.method === "GET" || request.method === "HEAD" ? undefined : await request.arrayBuffer(),
        client: this.#client,
      });
    } catch (error) {
      return new Response(`The counting proxy could not reach the API server: ${error}`, { status: 502 });
    }
    const answer = new Headers(upstream.headers);
    for (const name of ["content-length", "transfer-encoding", "connection"]) answer.delete(name);
    const reader = upstream.body?.getReader();
    if (!reader) return new Response(null, { status: upstream.status, headers: answer });
    let cut = () => {};
    const body = new ReadableStream<Uint8Array>({
      start: (controller) => {
        cut = () => {
          this.#open.delete(cut);
          reader.cancel().catch(() => {});
          try {
            controller.close();
          } catch {
            // Ended already.
          }
        };
        this.#open.add(cut);
      },
      pull: async (controller) => {
        try {
          const next = await reader.read();
          if (next.done) {
            this.#open.delete(cut);
            controller.close();
            return;
          }
          this.received[kind] += next.value.byteLength;
          controller.enqueue(next.value);
        } catch (error) {
          this.#open.delete(cut);
          controller.error(error);
        }
      },
      cancel: () => cut(),
    });
    return new Response(body, { status: upstream.status, headers: answer });
  }
}
