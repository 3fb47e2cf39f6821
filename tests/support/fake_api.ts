/**
 * A scripted HTTP server on loopback for unit tests of the API layer: the test answers each
 * request itself, and every request is recorded. Integration tests use LocalCluster instead.
 *
 * @module
 */

import { ApiClient } from "../../src/api/client.ts";
import type { Credentials } from "../../src/api/credentials.ts";
import { NetworkingSettings } from "../../src/settings/networking.ts";

/** Answers one request. */
export type FakeHandler = (request: Request, url: URL) => Response | Promise<Response>;

/** A running fake API server and a client pointed at it. */
export class FakeApi implements AsyncDisposable {
  /** Every request received, in order. */
  readonly requests: URL[] = [];
  /** A client with no credentials and quick retries. */
  readonly client: ApiClient;
  readonly #server: Deno.HttpServer<Deno.NetAddr>;

  constructor(handler: FakeHandler, networking?: Partial<NetworkingSettings>) {
    this.#server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, (request) => {
      const url = new URL(request.url);
      this.requests.push(url);
      return handler(request, url);
    });
    const settings = Object.assign(new NetworkingSettings(), { errorBackoffs: [0.01, 0.01] }, networking);
    this.client = new ApiClient(fakeCredentials(`http://127.0.0.1:${this.#server.addr.port}`), {
      networking: settings,
    });
  }

  /** The requests whose query has `watch=true`. */
  get watches(): URL[] {
    return this.requests.filter((url) => url.searchParams.get("watch") === "true");
  }

  async [Symbol.asyncDispose](): Promise<void> {
    this.client.close();
    await this.#server.shutdown();
  }
}

/** Credentials without authentication for a plain-HTTP fake server. */
export function fakeCredentials(server: string): Credentials {
  return {
    server,
    tls: { insecure: false },
    source: "a fake API server",
    authorization: () => Promise.resolve(undefined),
    invalidate: () => {},
  };
}

/** A JSON response. */
export function json(body: unknown, status = 200): Response {
  return new Response(JSON.stringify(body), { status, headers: { "Content-Type": "application/json" } });
}

/** A streamed watch response: the given lines, then it stays open until `end` resolves (or ends at once). */
export function stream(lines: unknown[], end?: Promise<unknown>, signal?: AbortSignal): Response {
  const body = new ReadableStream<Uint8Array>({
    async start(controller) {
      const encoder = new TextEncoder();
      for (const line of lines) controller.enqueue(encoder.encode(JSON.stringify(line) + "\n"));
      if (end) {
        await Promise.race([end, new Promise((resolve) => signal?.addEventListener("abort", resolve))]);
      }
      try {
        controller.close();
      } catch {
        // Already cancelled by the client.
      }
    },
  });
  return new Response(body, { headers: { "Content-Type": "application/json" } });
}

/** A JSON merge patch (RFC 7386) applied as the API server applies it: `null` removes a key. */
export function mergePatch(target: unknown, patch: unknown): unknown {
  if (patch === null || typeof patch !== "object" || Array.isArray(patch)) return patch;
  const result: Record<string, unknown> = target && typeof target === "object" ? { ...target } : {};
  for (const [key, value] of Object.entries(patch)) {
    if (value === null) delete result[key];
    else result[key] = mergePatch(result[key], value);
  }
  return result;
}
