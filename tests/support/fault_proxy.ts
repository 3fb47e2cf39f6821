/**
 * A loopback HTTPS proxy in front of an API server that injects the faults real clusters have:
 * 5xx answers, a freeze (nothing forwarded, connections left open), 429 with `Retry-After`, 403,
 * and watch responses that carry only a `{"type":"ERROR"}` event (at once, or after holding the
 * request for a while). It terminates TLS with a
 * certificate of its own (`proxy.caCert` is its CA) and forwards to the real server with the
 * client's own `Authorization` header, so a kubeconfig with the proxy's URL and CA and the
 * cluster's token works as usual.
 *
 * Every request is recorded (method, path, whether it is a watch, the status answered), so tests
 * and benchmarks count reconnects in a window instead of timing them.
 *
 * @example
 * ```ts ignore
 * await using proxy = await FaultProxy.start({ server: cluster.server, caCert: cluster.caCert });
 * const kubeconfig = await proxy.writeKubeconfig(cluster.token);
 * proxy.set({ kind: "watchErrors" }); // every watch now gets one ERROR event and ends
 * proxy.set({ kind: "forward" });
 * ```
 *
 * @module
 */

import { createSelfSignedCertificates } from "../../src/kits/certificates.ts";
import { renderKubeconfig } from "../../src/kits/local_cluster/kubeconfig.ts";

/** What the proxy does with requests. */
export type Fault =
  /** Forwards everything. */
  | { kind: "forward" }
  /** Answers every request with a 5xx `Status` (503 by default). */
  | { kind: "fail"; status?: number }
  /** Forwards nothing: new requests get no answer, open responses get no more bytes. */
  | { kind: "freeze" }
  /** Answers every request with 429 and `Retry-After: <seconds>`. */
  | { kind: "throttle"; retryAfter: number }
  /** Answers every request with 403 Forbidden. */
  | { kind: "forbid" }
  /**
   * Answers every watch request with 200 and one ERROR event (code 500 by default), `after`
   * seconds later (at once by default), then ends it; forwards the rest.
   */
  | { kind: "watchErrors"; code?: number; after?: number };

/** One request as the proxy saw it. */
export interface ProxiedRequest {
  /** When it arrived (ms since the epoch). */
  at: number;
  method: string;
  /** Path and query. */
  path: string;
  /** Whether it asked to watch (`watch=true`). */
  watch: boolean;
  /** The fault in force when it arrived. */
  fault: Fault["kind"];
  /** The status answered; `null` while none (frozen). */
  status: number | null;
}

/** Where the proxy forwards to. */
export interface Upstream {
  /** The API server URL, `https://127.0.0.1:<port>`. */
  server: string;
  /** PEM of the CA that signs the API server's certificate. */
  caCert: string;
}

/** A forwarded request still open: its response can be cut, or frozen (no more bytes). */
interface OpenRequest {
  frozen: boolean;
  cut(): void;
}

/** A running fault proxy; see the module's description. */
export class FaultProxy implements AsyncDisposable {
  /** The proxy's URL, `https://127.0.0.1:<port>`. */
  readonly url: string;
  /** PEM of the CA that signs the proxy's certificate: the CA for kubeconfigs pointing at it. */
  readonly caCert: string;
  /** Every request so far, in order of arrival. */
  readonly requests: ProxiedRequest[] = [];
  readonly #upstream: Upstream;
  readonly #client: Deno.HttpClient;
  readonly #server: Deno.HttpServer<Deno.NetAddr>;
  /** Open forwarded requests: `cut()` ends one at once; `frozen` stops its bytes. */
  readonly #open = new Set<OpenRequest>();
  /** Resolves when the proxy closes: what frozen requests wait for. */
  readonly #closed = Promise.withResolvers<void>();
  #fault: Fault = { kind: "forward" };

  private constructor(upstream: Upstream, tls: { ca: string; cert: string; key: string }) {
    this.#upstream = upstream;
    this.caCert = tls.ca;
    this.#client = Deno.createHttpClient({ caCerts: [upstream.caCert] });
    this.#server = Deno.serve(
      { hostname: "127.0.0.1", port: 0, cert: tls.cert, key: tls.key, onListen: () => {} },
      (request) => this.#handle(request),
    );
    this.url = `https://127.0.0.1:${this.#server.addr.port}`;
  }

  /** Starts a proxy on a free loopback port, forwarding to `upstream`. */
  static async start(upstream: Upstream): Promise<FaultProxy> {
    return new FaultProxy(upstream, await createSelfSignedCertificates(["127.0.0.1", "localhost"]));
  }

  /** The fault in force. */
  get fault(): Fault {
    return this.#fault;
  }

  /**
   * Changes the fault. Open responses are cut for faults that answer with errors (the server "breaks"
   * under them and their reconnections meet the fault), made silent for `freeze`, left for `forward`.
   */
  set(fault: Fault): void {
    this.#fault = fault;
    for (const open of this.#open) {
      if (fault.kind === "freeze") open.frozen = true;
      else if (fault.kind !== "forward") open.cut();
    }
  }

  /** The requests that arrived in `[from, to)` (ms since the epoch) and match the filter. */
  count(filter: { watch?: boolean; from?: number; to?: number; status?: number } = {}): number {
    return this.requests.filter((request) =>
      (filter.watch === undefined || request.watch === filter.watch) &&
      (filter.from === undefined || request.at >= filter.from) &&
      (filter.to === undefined || request.at < filter.to) &&
      (filter.status === undefined || request.status === filter.status)
    ).length;
  }

  /** Writes a kubeconfig for the proxy (its URL and CA) with the cluster's bearer token; returns its path. */
  async writeKubeconfig(token: string): Promise<string> {
    const path = await Deno.makeTempFile({ prefix: "kopf-fault-proxy-", suffix: ".kubeconfig" });
    await Deno.writeTextFile(path, renderKubeconfig({ server: this.url, caCert: this.caCert, token }));
    return path;
  }

  /** Stops listening, cuts the open responses and ends the frozen requests. */
  async [Symbol.asyncDispose](): Promise<void> {
    this.#closed.resolve();
    for (const open of this.#open) open.cut();
    await this.#server.shutdown();
    this.#client.close();
  }

  async #handle(request: Request): Promise<Response> {
    const url = new URL(request.url);
    const record: ProxiedRequest = {
      at: Date.now(),
      method: request.method,
      path: url.pathname + url.search,
      watch: url.searchParams.get("watch") === "true" || url.searchParams.get("watch") === "1",
      fault: this.#fault.kind,
      status: null,
    };
    this.requests.push(record);
    const response = await this.#answer(request, url, record.watch);
    record.status = response.status;
    return response;
  }

  async #answer(request: Request, url: URL, watch: boolean): Promise<Response> {
    const fault = this.#fault;
    switch (fault.kind) {
      case "fail":
        return status(fault.status ?? 503, "ServiceUnavailable", "injected by the fault proxy");
      case "throttle":
        return status(429, "TooManyRequests", "injected by the fault proxy", {
          "Retry-After": String(fault.retryAfter),
        });
      case "forbid":
        return status(403, "Forbidden", "injected by the fault proxy");
      case "freeze":
        // A dead link: no answer ever; the client's own timeout is what ends the request.
        await Promise.race([this.#closed.promise, aborted(request.signal)]);
        return status(503, "ServiceUnavailable", "the fault proxy was frozen");
      case "watchErrors":
        if (watch) return this.#watchError(fault.code ?? 500, fault.after ?? 0);
        return await this.#forward(request, url, watch);
      case "forward":
        return await this.#forward(request, url, watch);
    }
  }

  /** A watch response: headers at once, one ERROR event after `after` seconds, then its end. */
  #watchError(code: number, after: number): Response {
    const event = {
      type: "ERROR",
      object: {
        kind: "Status",
        apiVersion: "v1",
        status: "Failure",
        message: "injected",
        reason: "InternalError",
        code,
      },
    };
    const line = new TextEncoder().encode(JSON.stringify(event) + "\n");
    let timer: ReturnType<typeof setTimeout> | undefined;
    const open: OpenRequest = { frozen: false, cut: () => {} };
    const body = new ReadableStream<Uint8Array>({
      start: (controller) => {
        const finish = () => {
          this.#open.delete(open);
          controller.enqueue(line);
          controller.close();
        };
        if (after <= 0) return finish();
        this.#open.add(open);
        timer = setTimeout(finish, after * 1000);
        open.cut = () => {
          clearTimeout(timer);
          this.#open.delete(open);
          controller.error(new Error("cut by the fault proxy"));
        };
      },
      cancel: () => {
        clearTimeout(timer);
        this.#open.delete(open);
      },
    });
    return new Response(body, { headers: { "content-type": "application/json" } });
  }

  async #forward(request: Request, url: URL, watch: boolean): Promise<Response> {
    const headers = new Headers(request.headers);
    for (const name of ["host", "connection", "content-length", "transfer-encoding"]) headers.delete(name);
    const body = request.method === "GET" || request.method === "HEAD" ? undefined : await request.arrayBuffer();
    // Registered before the upstream answers, so that a fault set meanwhile reaches this request too.
    const abort = new AbortController();
    const open: OpenRequest = { frozen: false, cut: () => abort.abort() };
    this.#open.add(open);
    let upstream: Response;
    try {
      upstream = await fetch(this.#upstream.server + url.pathname + url.search, {
        method: request.method,
        headers,
        body,
        client: this.#client,
        signal: abort.signal,
      });
    } catch (error) {
      this.#open.delete(open);
      if (abort.signal.aborted && this.#fault.kind !== "forward") return await this.#answer(request, url, watch);
      return status(502, "BadGateway", `the fault proxy could not reach the server: ${error}`);
    }
    const reader = upstream.body?.getReader();
    const done = () => {
      this.#open.delete(open);
      abort.abort();
      reader?.cancel().catch(() => {});
    };
    const stream = new ReadableStream<Uint8Array>({
      start: (controller) => {
        // Both bodies are ended here, not through the fetch's signal: once the response has arrived, Deno
        // lets that signal's link to the body be collected, and an abort then reaches nothing (seen: a
        // cut watch kept streaming its bookmarks a minute later).
        open.cut = () => {
          done();
          controller.error(new Error("cut by the fault proxy"));
        };
      },
      pull: async (controller) => {
        try {
          const next = reader ? await reader.read() : { done: true as const, value: undefined };
          if (open.frozen) {
            // Swallow: the client waits forever, as behind a dead link, until it gives up.
            await Promise.race([this.#closed.promise, aborted(abort.signal)]);
            done();
            try {
              controller.close();
            } catch {
              // Cut or cancelled by the client meanwhile: nothing left to end.
            }
            return;
          }
          if (next.done) {
            controller.close();
            done();
          } else {
            controller.enqueue(next.value);
          }
        } catch (error) {
          controller.error(error);
          done();
        }
      },
      cancel: () => done(),
    });
    const answer = new Headers(upstream.headers);
    for (const name of ["content-length", "transfer-encoding", "connection"]) answer.delete(name);
    return new Response(stream, { status: upstream.status, headers: answer });
  }
}

function status(code: number, reason: string, message: string, headers: Record<string, string> = {}): Response {
  const body = { kind: "Status", apiVersion: "v1", status: "Failure", message, reason, code };
  return new Response(JSON.stringify(body), {
    status: code,
    headers: { "content-type": "application/json", ...headers },
  });
}

function aborted(signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) resolve();
    signal.addEventListener("abort", () => resolve(), { once: true });
  });
}
