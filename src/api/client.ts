/**
 * The one place that speaks HTTP to the Kubernetes API: Deno's `fetch` over a client made from
 * the credentials' TLS material, with Kopf's retry rules, timeouts and request counters.
 *
 * @module
 */

import { getLogger } from "@logtape/logtape";
import type { Credentials } from "./credentials.ts";
import { RequestCounters, type Verb } from "./counters.ts";
import { ApiConnectionError, apiErrorFor, type ApiStatus, ApiUnauthorizedError, describeCause } from "./errors.ts";
import { NetworkingSettings } from "../settings/networking.ts";
import { sleep } from "../utils/sleep.ts";

const logger = getLogger(["kopf", "api"]);

/** One request to the API. */
export interface RequestOptions {
  /** HTTP method; `GET` by default. */
  method?: "GET" | "POST" | "PUT" | "PATCH" | "DELETE";
  /** The path below the server URL, e.g. `/api/v1/namespaces`. */
  path: string;
  /** Query parameters; `undefined` values are left out. */
  query?: Record<string, string | number | boolean | undefined>;
  /** A JSON body. */
  body?: unknown;
  /** The body's content type; `application/json` by default (patches name their kind). */
  contentType?: string;
  /** The verb it is counted as; derived from the method when absent (`GET` counts as `get`). */
  verb?: Verb;
  /** The resource it is counted under (e.g. `kopfexamples` or `kopfexamples/status`); derived from the path when absent. */
  resource?: string;
  /** Cancels the request, retries included. */
  signal?: AbortSignal;
  /** The `Accept` header; `application/json` by default. */
  accept?: string;
}

/** Options of an API client. */
export interface ApiClientOptions {
  /** Timeouts and retries; Kopf's defaults when absent. */
  networking?: NetworkingSettings;
}

const VERB_OF_METHOD: Record<string, Verb> = {
  GET: "get",
  POST: "create",
  PUT: "update",
  PATCH: "patch",
  DELETE: "delete",
};

/** Talks to one API server with one set of credentials; counts what it sends. */
export class ApiClient implements Disposable {
  /** Where the requests go and how they authenticate. */
  readonly credentials: Credentials;
  /** Every request attempt sent so far, by verb and resource. */
  readonly counters: RequestCounters = new RequestCounters();
  readonly #networking: NetworkingSettings;
  #http: Deno.HttpClient | undefined;
  #streams: Deno.HttpClient | undefined;

  /** Creates a client; no connection is made until the first request. */
  constructor(credentials: Credentials, options: ApiClientOptions = {}) {
    this.credentials = credentials;
    this.#networking = options.networking ?? new NetworkingSettings();
    if (credentials.tls.insecure) {
      logger.warn(
        "The kubeconfig asks to skip TLS verification, which Deno cannot do per client; " +
          "run Deno with --unsafely-ignore-certificate-errors={host} or add the server's CA.",
        { host: new URL(credentials.server).hostname },
      );
    }
  }

  /**
   * Sends a request and decodes the JSON answer, retrying connection errors, 5xx and 429 as
   * `settings.networking.errorBackoffs` says; other errors are thrown as typed `ApiError`s.
   */
  async request<T = unknown>(options: RequestOptions): Promise<T> {
    const response = await this.#send(options, true, this.#networking.requestTimeout);
    const text = await response.text();
    return (text ? JSON.parse(text) : undefined) as T;
  }

  /**
   * Sends a request whose body is read as a stream (a watch), in one attempt: the caller owns the
   * retry policy. The connect timeout covers the time until the headers arrive.
   *
   * Streams go over HTTP/1.1, one connection each: a stalled stream, once aborted, takes its
   * connection with it, and its resumption opens a new one instead of queueing behind a dead
   * HTTP/2 connection shared with every other request.
   */
  open(options: RequestOptions): Promise<Response> {
    return this.#send(options, false, null, true);
  }

  /** Closes the pooled connections. */
  close(): void {
    this.#http?.close();
    this.#http = undefined;
    this.#streams?.close();
    this.#streams = undefined;
  }

  /** Same as {@linkcode ApiClient.close}. */
  [Symbol.dispose](): void {
    this.close();
  }

  async #send(
    options: RequestOptions,
    retrying: boolean,
    totalTimeout: number | null,
    streaming = false,
  ): Promise<Response> {
    const method = options.method ?? "GET";
    const url = this.#url(options);
    const what = `${method} ${url.pathname}${url.search}`;
    const verb = options.verb ?? VERB_OF_METHOD[method];
    const resource = options.resource ?? resourceOfPath(options.path);
    const backoffs = retrying ? this.#networking.errorBackoffs : [];
    let reauthenticated = false;
    for (let attempt = 0;; attempt++) {
      options.signal?.throwIfAborted();
      this.counters.record(verb, resource);
      let response: Response;
      try {
        response = await this.#fetch(url, method, options, totalTimeout, streaming);
      } catch (error) {
        if (options.signal?.aborted) throw options.signal.reason;
        if (attempt >= backoffs.length) throw new ApiConnectionError(what, error);
        const delay = backoffs[attempt];
        logger.warn("{what} could not reach the API server ({error}); retrying in {delay} s.", {
          what,
          error: describeCause(error),
          delay,
        });
        await sleep(delay, options.signal);
        continue;
      }
      if (response.ok) return response;

      const text = await response.text();
      const status = parseStatus(text);
      const error = apiErrorFor(what, response.status, status, text);
      if (error instanceof ApiUnauthorizedError && !reauthenticated) {
        // Tokens expire and get rotated: resolve them anew once before giving up.
        reauthenticated = true;
        this.credentials.invalidate();
        continue;
      }
      const retriable = response.status >= 500 || response.status === 429;
      if (!retriable || attempt >= backoffs.length) throw error;
      let delay = backoffs[attempt];
      if (response.status === 429) {
        const asked = retryAfter(response.headers, status);
        if (asked !== undefined && (asked > delay || this.#networking.enforceRetryAfter)) delay = asked;
      }
      logger.warn("{what} failed with HTTP {code}; retrying in {delay} s.", { what, code: response.status, delay });
      await sleep(delay, options.signal);
    }
  }

  async #fetch(
    url: URL,
    method: string,
    options: RequestOptions,
    totalTimeout: number | null,
    streaming: boolean,
  ): Promise<Response> {
    const headers = new Headers({ Accept: options.accept ?? "application/json" });
    const authorization = await this.credentials.authorization();
    if (authorization) headers.set("Authorization", authorization);
    let body: string | undefined;
    if (options.body !== undefined) {
      headers.set("Content-Type", options.contentType ?? "application/json");
      body = JSON.stringify(options.body);
    }
    const connectTimeout = this.#networking.connectTimeout;
    const timeouts = new AbortController();
    const signals = [timeouts.signal];
    if (options.signal) signals.push(options.signal);
    const connectTimer = connectTimeout === null ? undefined : setTimeout(
      () => timeouts.abort(new Error(`no response within ${connectTimeout} s (settings.networking.connectTimeout)`)),
      connectTimeout * 1000,
    );
    const totalTimer = totalTimeout === null ? undefined : setTimeout(
      () =>
        timeouts.abort(
          new Error(`the request took longer than ${totalTimeout} s (settings.networking.requestTimeout)`),
        ),
      totalTimeout * 1000,
    );
    try {
      const response = await fetch(url, {
        method,
        headers,
        body,
        client: streaming ? this.#streamClient() : this.#client(),
        signal: AbortSignal.any(signals),
      });
      clearTimeout(connectTimer);
      if (totalTimer === undefined) return response;
      // The total timeout also covers reading the body; it is cleared once the body is consumed.
      const text = await response.text().finally(() => clearTimeout(totalTimer));
      return new Response(text, {
        status: response.status,
        statusText: response.statusText,
        headers: response.headers,
      });
    } catch (error) {
      clearTimeout(connectTimer);
      clearTimeout(totalTimer);
      throw timeouts.signal.aborted ? timeouts.signal.reason : error;
    }
  }

  #client(): Deno.HttpClient {
    this.#http ??= this.#createClient({});
    return this.#http;
  }

  #streamClient(): Deno.HttpClient {
    this.#streams ??= this.#createClient({ http2: false });
    return this.#streams;
  }

  #createClient(options: Deno.CreateHttpClientOptions): Deno.HttpClient {
    const tls = this.credentials.tls;
    if (tls.caCerts?.length) options.caCerts = tls.caCerts;
    if (tls.proxyUrl) options.proxy = { url: tls.proxyUrl };
    return tls.cert && tls.key
      ? Deno.createHttpClient({ ...options, cert: tls.cert, key: tls.key })
      : Deno.createHttpClient(options);
  }

  #url(options: RequestOptions): URL {
    const url = new URL(this.credentials.server.replace(/\/+$/, "") + options.path);
    for (const [key, value] of Object.entries(options.query ?? {})) {
      if (value !== undefined) url.searchParams.set(key, String(value));
    }
    return url;
  }
}

/** Decodes a `Status` body, if the text is one. */
export function parseStatus(text: string): ApiStatus | undefined {
  try {
    const parsed = JSON.parse(text);
    return parsed && typeof parsed === "object" && !Array.isArray(parsed) ? parsed as ApiStatus : undefined;
  } catch {
    return undefined;
  }
}

/** Seconds the server asked to wait: the `Retry-After` header, else the Status' `retryAfterSeconds`. */
export function retryAfter(headers: Headers, status: ApiStatus | undefined): number | undefined {
  const header = headers.get("Retry-After");
  if (header !== null) {
    const seconds = Number(header);
    if (Number.isFinite(seconds)) return Math.max(0, seconds);
    const date = Date.parse(header);
    if (!Number.isNaN(date)) return Math.max(0, (date - Date.now()) / 1000);
  }
  const seconds = status?.details?.retryAfterSeconds;
  return typeof seconds === "number" ? seconds : undefined;
}

/**
 * The resource a path addresses, for counting: `/api/v1/namespaces/ns/pods/x/status` →
 * `pods/status`; non-resource paths (`/apis`, `/version`) count under themselves.
 */
export function resourceOfPath(path: string): string {
  const parts = path.split("?", 1)[0].split("/").filter(Boolean);
  let rest: string[];
  if (parts[0] === "api" && parts.length >= 2) rest = parts.slice(2);
  else if (parts[0] === "apis" && parts.length >= 3) rest = parts.slice(3);
  else return "/" + parts.join("/");
  if (rest.length === 0) return "/" + parts.join("/");
  if (rest[0] === "namespaces" && rest.length >= 3) rest = rest.slice(2);
  const [plural, , subresource] = rest;
  return subresource ? `${plural}/${subresource}` : plural;
}
