/**
 * The liveness endpoint (`kopf run --liveness http://0.0.0.0:8080/healthz`): an HTTP server whose
 * answer tells Kubernetes whether to restart the operator.
 *
 * A GET of the endpoint's path answers 200 with the JSON object of the probe handlers' results
 * by id (`{}` without probe handlers), recomputed at most once per
 * `settings.process.probingMaxAge` seconds (concurrent requests share one run). It answers 500
 * when a probe handler fails for good, and -- unlike Kopf, whose endpoint stays green while its
 * watches are dead -- when a watch stream has been failing or silent (no event, no bookmark, no
 * answered or on-schedule watch request) for longer than `settings.watching.unhealthyAfter`, or
 * when the API server's certificate is rejected, with a JSON body naming the streams, why, and
 * since when. It turns green again once the streams recover.
 *
 * @module
 */

import type { Indices } from "../model/index_store.ts";
import { getLogger } from "@logtape/logtape";
import type { ConnectionProblem } from "../api/client.ts";
import { FailureReports } from "../api/failure_reports.ts";
import type { WatchHealth } from "../api/watching.ts";
import type { Memo } from "../handling/context.ts";
import { runActivity } from "../handling/activities.ts";
import type { Registry } from "../handling/registry.ts";
import type { Settings } from "../settings/settings.ts";
import { currentApi, runWithApi } from "../handling/current_api.ts";

const logger = getLogger(["kopf", "probing"]);

/** Where the liveness endpoint listens. */
export interface LivenessEndpoint {
  /** The address to listen on: `localhost` when the URL has none. */
  hostname: string;
  /** The port: 80 when the URL has none; 0 picks a free one. */
  port: number;
  /** The path answered; other paths get 404. */
  path: string;
}

/**
 * Reads a liveness URL such as `http://0.0.0.0:8080/healthz`; only `http` is supported (as in
 * Kopf). Throws a `TypeError` saying what is wrong.
 */
export function parseLivenessEndpoint(url: string): LivenessEndpoint {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new TypeError(`The liveness endpoint must be a URL like http://0.0.0.0:8080/healthz, not "${url}".`);
  }
  if (parsed.protocol !== "http:") {
    throw new TypeError(`The liveness endpoint supports only http:// URLs, not "${url}".`);
  }
  if (parsed.search || parsed.hash || parsed.username || parsed.password) {
    throw new TypeError(`The liveness endpoint takes a host, a port and a path only, not "${url}".`);
  }
  return {
    hostname: parsed.hostname.replace(/^\[(.*)\]$/, "$1") || "localhost",
    port: parsed.port ? Number(parsed.port) : 80,
    path: parsed.pathname || "/",
  };
}

/** What the liveness endpoint reports on. */
export interface LivenessSources {
  /** The probe handlers come from here. */
  registry: Registry;
  /** The live settings (`process.probingMaxAge` is read at every request). */
  settings: Settings;
  /** The operator's memo, given to probe handlers. */
  memo: Memo;
  /** The operator's indexes, given to probe handlers. */
  indices?: Indices;
  /** The watch streams by name; read at every request, so streams added later count too. */
  streams: ReadonlyMap<string, WatchHealth>;
  /** The API client, whose rejected server certificate makes the operator unhealthy at once. */
  connection?: { readonly connectionProblem: ConnectionProblem | null };
  /** With sharding: this member's group, ranges and whether the server filters, shown as `kopf.sharding`. */
  sharding?: () => object | undefined;
  /** Another endpoint answered by this server at its own path (the metrics, when they share host and port). */
  also?: { path: string; answer: (request: Request) => Response };
}

/**
 * A running liveness endpoint.
 *
 * @example
 * ```ts ignore
 * await using server = LivenessServer.start(parseLivenessEndpoint("http://127.0.0.1:0/healthz"), sources);
 * console.log(server.url); // http://127.0.0.1:<port>/healthz
 * ```
 */
export class LivenessServer implements AsyncDisposable {
  /** The URL it answers at, with the actual port. */
  readonly url: string;
  readonly #server: Deno.HttpServer<Deno.NetAddr>;
  readonly #sources: LivenessSources;
  readonly #path: string;
  readonly #stop = new AbortController();
  #cache: { at: number; results: Record<string, unknown> } | undefined;
  #running: Promise<Record<string, unknown>> | undefined;
  readonly #reports: FailureReports;

  private constructor(endpoint: LivenessEndpoint, sources: LivenessSources) {
    this.#sources = sources;
    this.#path = endpoint.path;
    // Deno.serve's handlers do not inherit the asynchronous context: the probes' `api` is carried over.
    const api = currentApi();
    this.#reports = new FailureReports({ logger, interval: () => sources.settings.watching.failureReportInterval });
    try {
      this.#server = Deno.serve({
        hostname: endpoint.hostname,
        port: endpoint.port,
        onListen: () => {},
        handler: (request) => runWithApi(api, () => this.#answer(request)),
      });
    } catch (error) {
      const where = `${endpoint.hostname}:${endpoint.port}`;
      throw new Error(`The liveness endpoint cannot listen at ${where}: ${(error as Error).message}`, {
        cause: error,
      });
    }
    const { hostname, port } = this.#server.addr;
    const host = hostname.includes(":") ? `[${hostname}]` : hostname;
    this.url = `http://${host}:${port}${endpoint.path}`;
  }

  /** Starts listening; throws if the address cannot be used (e.g. the port is taken). */
  static start(endpoint: LivenessEndpoint, sources: LivenessSources): LivenessServer {
    const server = new LivenessServer(endpoint, sources);
    logger.info("Serving health status at {url}", { url: server.url });
    return server;
  }

  /** Stops answering: a probe run in progress is abandoned, open requests get their answer. */
  async close(): Promise<void> {
    this.#stop.abort();
    await this.#server.shutdown();
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.close();
  }

  async #answer(request: Request): Promise<Response> {
    const also = this.#sources.also;
    if (also && new URL(request.url).pathname === also.path) return also.answer(request);
    if (new URL(request.url).pathname !== this.#path) return json(404, { error: "Not found." });
    if (request.method !== "GET" && request.method !== "HEAD") {
      return json(405, { error: "Only GET is supported." }, { allow: "GET, HEAD" });
    }
    const problem = this.#sources.connection?.connectionProblem;
    const now = Date.now();
    const unhealthy = [...this.#sources.streams].flatMap(([name, health]) => {
      const verdict = health.verdict(now);
      return verdict ? [[name, health, verdict] as const] : [];
    });
    if (problem || unhealthy.length) {
      const streams = Object.fromEntries(unhealthy.map(([name, health, verdict]) => [name, {
        reason: verdict.reason,
        since: new Date(verdict.since).toISOString(),
        message: verdict.message,
        failingSince: health.failingSince === null ? null : new Date(health.failingSince).toISOString(),
        lastSignOfLife: new Date(health.lastSignOfLife).toISOString(),
        failures: health.failures,
        lastError: health.lastError,
      }]));
      const bound = this.#sources.settings.watching.unhealthyAfter;
      const errors = [
        ...problem ? [problem.message] : [],
        ...unhealthy.length
          ? [
            `Watch streams have been failing or silent for longer than ${bound} s ` +
            `(settings.watching.unhealthyAfter): ${
              unhealthy.map(([name, , verdict]) => `${name}: ${verdict.message}`).join("; ")
            }.`,
          ]
          : [],
      ];
      const error = errors.join(" ");
      this.#reports.failed({ level: "warning", message: "Liveness probe: {error}", properties: { error } }, false);
      return json(500, {
        error,
        streams,
        ...problem ? { connection: { message: problem.message, since: new Date(problem.since).toISOString() } } : {},
      });
    }
    this.#reports.recovered("Liveness probe: healthy again after {seconds} s.", {});
    let results: Record<string, unknown>;
    try {
      results = await this.#probe();
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      return json(500, { error: message });
    }
    const sharding = this.#sources.sharding?.();
    try {
      return json(200, sharding ? { ...results, "kopf.sharding": sharding } : results);
    } catch (error) {
      return json(500, { error: `The probe results are not JSON: ${(error as Error).message}` });
    }
  }

  /** The probe results: cached, or from one run shared by concurrent requests. */
  #probe(): Promise<Record<string, unknown>> {
    const { registry, settings, memo, indices } = this.#sources;
    const cache = this.#cache;
    if (cache && Date.now() - cache.at < settings.process.probingMaxAge * 1000) return Promise.resolve(cache.results);
    this.#running ??= runActivity(registry.activities("probe"), {
      activity: "probe",
      settings,
      memo,
      indices,
      signal: this.#stop.signal,
    }).then((results) => {
      this.#cache = { at: Date.now(), results };
      return results;
    }).finally(() => {
      this.#running = undefined;
    });
    return this.#running;
  }
}

function json(status: number, body: unknown, headers: Record<string, string> = {}): Response {
  return new Response(JSON.stringify(body), {
    status,
    headers: { "content-type": "application/json", ...headers },
  });
}
