/**
 * The metrics endpoint (`kopf run --metrics http://0.0.0.0:9090/metrics`): Prometheus' text
 * format of the operator's metrics, on its own server -- or on the liveness server when both
 * URLs name the same host and port (see {@linkcode sharesServer}).
 *
 * @module
 */

import { getLogger } from "@logtape/logtape";
import { EXPOSITION_CONTENT_TYPE } from "../observability/exposition.ts";
import { metricsRegistry } from "../observability/metrics.ts";
import "../observability/stream_metrics.ts";
import { type LivenessEndpoint, parseLivenessEndpoint } from "./probing.ts";

const logger = getLogger(["kopf", "metrics"]);

/** Where the metrics endpoint listens: a host, a port and a path, as for the liveness endpoint. */
export type MetricsEndpoint = LivenessEndpoint;

/**
 * Reads a metrics URL such as `http://0.0.0.0:9090/metrics`; only `http` is supported. Throws a
 * `TypeError` saying what is wrong.
 */
export function parseMetricsEndpoint(url: string): MetricsEndpoint {
  try {
    return parseLivenessEndpoint(url);
  } catch (error) {
    throw new TypeError((error as Error).message.replace("liveness", "metrics").replace("/healthz", "/metrics"));
  }
}

/** Whether the metrics are served by the liveness server: same host and port (not 0), other paths. */
export function sharesServer(metrics: MetricsEndpoint, liveness: LivenessEndpoint | undefined): boolean {
  if (!liveness || metrics.port === 0) return false;
  if (metrics.hostname !== liveness.hostname || metrics.port !== liveness.port) return false;
  if (metrics.path === liveness.path) {
    throw new TypeError(
      `The metrics and the liveness endpoints share a server, so they need different paths; both are ${metrics.path}.`,
    );
  }
  return true;
}

/** Answers a request for the metrics: the exposition of every metric at this moment. */
export function answerMetrics(request: Request): Response {
  if (request.method !== "GET" && request.method !== "HEAD") {
    return new Response("Only GET is supported.\n", { status: 405, headers: { allow: "GET, HEAD" } });
  }
  return new Response(request.method === "HEAD" ? null : metricsRegistry.render(), {
    headers: { "content-type": EXPOSITION_CONTENT_TYPE },
  });
}

/**
 * A running metrics endpoint on a server of its own.
 *
 * @example
 * ```ts ignore
 * await using server = MetricsServer.start(parseMetricsEndpoint("http://127.0.0.1:0/metrics"));
 * console.log(server.url); // http://127.0.0.1:<port>/metrics
 * ```
 */
export class MetricsServer implements AsyncDisposable {
  /** The URL it answers at, with the actual port. */
  readonly url: string;
  readonly #server: Deno.HttpServer<Deno.NetAddr>;

  private constructor(endpoint: MetricsEndpoint) {
    try {
      this.#server = Deno.serve({
        hostname: endpoint.hostname,
        port: endpoint.port,
        onListen: () => {},
        handler: (request) =>
          new URL(request.url).pathname === endpoint.path
            ? answerMetrics(request)
            : new Response("Not found.\n", { status: 404 }),
      });
    } catch (error) {
      const where = `${endpoint.hostname}:${endpoint.port}`;
      throw new Error(`The metrics endpoint cannot listen at ${where}: ${(error as Error).message}`, { cause: error });
    }
    const { hostname, port } = this.#server.addr;
    const host = hostname.includes(":") ? `[${hostname}]` : hostname;
    this.url = `http://${host}:${port}${endpoint.path}`;
  }

  /** Starts listening; throws if the address cannot be used (e.g. the port is taken). */
  static start(endpoint: MetricsEndpoint): MetricsServer {
    const server = new MetricsServer(endpoint);
    logger.info("Serving metrics at {url}", { url: server.url });
    return server;
  }

  /** Stops answering. */
  async close(): Promise<void> {
    await this.#server.shutdown();
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.close();
  }
}
