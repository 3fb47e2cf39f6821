/**
 * The one place that speaks HTTP to the Kubernetes API: Deno's `fetch` over a client made from
 * the credentials' TLS material, with Kopf's retry rules, timeouts and request counters. Each
 * request takes its credentials from a {@linkcode Vault}; a 401 invalidates them and the request
 * goes again with the next ones (waiting while the login handlers run again if none are left).
 *
 * @module
 */

import { getLogger } from "@logtape/logtape";
import type { Credentials } from "./credentials.ts";
import { LoginError } from "./login_error.ts";
import { Vault, type VaultItem } from "./vault.ts";
import { RequestCounters } from "./counters.ts";
import { localRecordShown } from "../logging/configure.ts";
import { recordApiRequest } from "../observability/metrics.ts";
import { FailureReports } from "./failure_reports.ts";
import { clearDeadline, headersArrived, type RequestDeadline, requestDeadline } from "./request_deadline.ts";
import { type Lane, type Transport, Transports } from "./transports.ts";
import { diagnoseTls, type TlsDiagnosis } from "./tls_diagnosis.ts";
import {
  ApiConnectionError,
  apiErrorFor,
  ApiTooManyRequestsError,
  ApiUnauthorizedError,
  describeCause,
} from "./errors.ts";
import type { ApiClientOptions, ConnectionProblem, RequestOptions } from "./client_options.ts";
import { parseStatus, retryAfter } from "./error_answers.ts";
import { resourceOfPath, VERB_OF_METHOD } from "./request_labels.ts";
import { probeConnection } from "./connection_probe.ts";
import { NetworkingSettings } from "../settings/networking.ts";
import { sleep } from "../utils/sleep.ts";
import { Slots } from "../utils/slots.ts";
import type { Congestion } from "../utils/turns.ts";

// Declared in files of their own now; still exported here, where their importers find them.
export type { ApiClientOptions, ConnectionProblem, RequestOptions } from "./client_options.ts";
export { parseStatus, retryAfter } from "./error_answers.ts";
export { resourceOfPath } from "./request_labels.ts";

const logger = getLogger(["kopf", "api"]);

/** Seconds between two log lines about a certificate that keeps being rejected. */
const TLS_REPORT_INTERVAL = 60;

/**
 * How many times one request goes again after a 401 with other credentials from the vault: a
 * bound for login handlers that keep returning new but useless credentials.
 */
const MAX_REAUTHENTICATIONS = 10;

/** A response, with its body already read as text when the request's total timeout covered reading it. */
interface Answer {
  readonly response: Response;
  /** The response's status, for the tracing span. */
  readonly status: number;
  /** The body, if read already (then the response's own body is consumed). */
  readonly text?: string;
  /** A stream's client, to replace if the stream stalls (see `ApiClient.stalled()`). */
  readonly via?: Via;
}

/** The client a stream was opened with, and whose it is. */
interface Via {
  readonly transport: Transport;
  readonly lane: Lane;
  readonly client: Deno.HttpClient;
  readonly credentials: Credentials;
}

/** Talks to one API server with the credentials from a vault; counts what it sends. */
export class ApiClient implements Disposable {
  /** Where the credentials of each request come from. */
  readonly vault: Vault;
  /** Every request attempt sent so far, by verb and resource. */
  readonly counters: RequestCounters = new RequestCounters();
  readonly #networking: NetworkingSettings;
  readonly #slots = new Slots(null, "settings.networking.concurrentRequests");
  /** The cap last given to the slots (asked per request without a call into them). */
  #slotsLimit: number | null = null;
  readonly #transports = new Transports();
  readonly #unsubscribe: () => void;
  #last: Credentials | undefined;
  /** The open streams' clients. */
  readonly #streams = new WeakMap<Response, Via>();
  #connectionProblem: ConnectionProblem | null = null;
  readonly #tlsReports: FailureReports = new FailureReports({ logger, interval: () => TLS_REPORT_INTERVAL });

  /**
   * Creates a client; no connection is made until the first request.
   *
   * @param credentials A vault, or fixed credentials (kept in a vault of their own).
   * @param options Timeouts and retries.
   */
  constructor(credentials: Credentials | Vault, options: ApiClientOptions = {}) {
    this.vault = credentials instanceof Vault ? credentials : Vault.fixed(credentials);
    this.#networking = options.networking ?? new NetworkingSettings();
    this.#unsubscribe = this.vault.onDropped((dropped) => this.#transports.drop(dropped));
  }

  /**
   * The credentials that requests use now: the vault's best, else the last ones used. Throws a
   * {@linkcode LoginError} if there have never been any.
   */
  get credentials(): Credentials {
    const current = this.vault.peek()?.credentials ?? this.#last;
    if (!current) throw new LoginError("There are no credentials yet: the operator has not authenticated.");
    return current;
  }

  /**
   * Sends a request and decodes the JSON answer, retrying connection errors, 5xx and 429 as
   * `settings.networking.errorBackoffs` says; other errors are thrown as typed `ApiError`s.
   */
  async request<T = unknown>(options: RequestOptions): Promise<T> {
    const answer = await this.#send(options, true, this.#networking.requestTimeout);
    const text = answer.text ?? await answer.response.text();
    return (text ? JSON.parse(text) : undefined) as T;
  }

  /**
   * Sends a request whose body is read as a stream (a watch), in one attempt: the caller owns the
   * retry policy. The connect timeout covers the time until the headers arrive.
   *
   * The first streams share the HTTP/2 connection of the requests, the next go over connections of
   * their own (see `Transports.streamLane`); a stream counts until its `signal` aborts, which its
   * caller does once done with it. A stream that stalls is reported with
   * {@linkcode ApiClient.stalled}, so that its resumption and the requests after it do not queue
   * behind a connection that stopped answering.
   */
  async open(options: RequestOptions & { signal: AbortSignal }): Promise<Response> {
    const { response, via } = await this.#send(options, false, null, true);
    if (via) this.#streams.set(response, via);
    return response;
  }

  /**
   * A stream from {@linkcode ApiClient.open} got nothing for longer than it may: its connection
   * is closed to new requests, which go over a new one (the stream itself is the caller's to abort)
   * -- unless it still works: other requests got answers over it within that silence, or, with
   * none, a probe does (`GET /version`, any answer counts, within 10 s, or the silence if shorter
   * but at least 1 s). A stream of a quiet resource may go without bookmarks for a while: the API
   * server sends one only when its cache has seen something newer than what the stream has.
   *
   * @param response the stalled stream's response.
   * @param why what was awaited, for the log line.
   * @param silentFor how long the stream has been silent, in seconds.
   * @returns whether the connection was kept: only the stream was silent, not the connection.
   */
  async stalled(response: Response, why: string, silentFor: number): Promise<boolean> {
    const via = this.#streams.get(response);
    if (!via) return false;
    const since = performance.now() - silentFor * 1000;
    const { lane, client, credentials } = via;
    if (lane.http === client && lane.answeredAt <= since) {
      // One probe per connection: its streams fall silent together (a connection of 64 streams,
      // each probing, would take more streams than the server allows, and the probes would wait).
      lane.probe ??= probeConnection(this.counters, this.#transports, client, credentials, silentFor).then((alive) => {
        if (alive) lane.answeredAt = performance.now();
      }).finally(() => lane.probe = undefined);
      await lane.probe;
    }
    return this.#transports.suspect(via.transport, lane, client, credentials, why, since);
  }

  /**
   * Why the API server cannot be used at all now (its certificate is rejected), since when;
   * `null` once any request gets an answer. The liveness endpoint reports it.
   */
  get connectionProblem(): ConnectionProblem | null {
    return this.#connectionProblem;
  }

  /**
   * Congested while more requests wait for a slot of `settings.networking.concurrentRequests`
   * than it allows at once: new work that would only add to that queue waits (see `Turns`). The
   * request cap itself, asked with no call of its own between: the queues ask before every item.
   */
  get congestion(): Congestion {
    return this.#slots;
  }

  /** Remembers a rejected certificate and says so at error level, at a bounded rate. */
  #certificateRejected(what: string, tls: TlsDiagnosis): void {
    const fresh = this.#connectionProblem === null;
    this.#connectionProblem ??= { message: tls.message, since: Date.now() };
    this.#tlsReports.failed({
      level: "error",
      message: "{what} failed: {diagnosis}",
      properties: { what, diagnosis: tls.message },
    }, fresh);
  }

  /** A request got an answer while a rejected certificate was remembered: the problem is over. */
  #certificateAccepted(): void {
    this.#connectionProblem = null;
    this.#tlsReports.recovered("The API server's certificate is accepted again after {seconds} s.", {});
  }

  /** Closes the pooled connections. */
  close(): void {
    this.#unsubscribe();
    this.#transports.close();
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
  ): Promise<Answer> {
    const method = options.method ?? "GET";
    const verb = options.verb ?? VERB_OF_METHOD[method];
    const resource = options.resource ?? resourceOfPath(options.path);
    const backoffs = retrying ? this.#networking.errorBackoffs : [];
    let unauthorized = 0;
    for (let attempt = 0;; attempt++) {
      options.signal?.throwIfAborted();
      // The vault's best entry at once when there is one: no promise per request for waiting on a login.
      const item = this.vault.peek() ?? await this.vault.acquire(options.signal);
      this.#last = item.credentials;
      const url = this.#transports.url(item.credentials, options.path, options.query);
      // Described only when a line or an error needs it: parsing the URL costs on every request.
      const describe = () => {
        const parsed = new URL(url);
        return `${method} ${parsed.pathname}${parsed.search}`;
      };
      this.counters.record(verb, resource);
      // Asked first: a record that no sink shows still costs LogTape's checks, at every request.
      if (localRecordShown("debug")) logger.debug("Sending {what}.", () => ({ what: describe() }));
      let answer: Answer;
      const began = performance.now();
      try {
        answer = await this.#fetch(item, url, method, options, totalTimeout, streaming);
        recordApiRequest(verb, resource, answer.status, (performance.now() - began) / 1000);
      } catch (error) {
        recordApiRequest(verb, resource, "error", (performance.now() - began) / 1000);
        if (options.signal?.aborted) throw options.signal.reason;
        // A missing Deno permission (--allow-net) never heals by retrying: stop with Deno's own advice.
        if (error instanceof Deno.errors.NotCapable) throw error;
        const tls = diagnoseTls(error, item.credentials.server, item.credentials.source);
        if (tls) this.#certificateRejected(describe(), tls);
        if (attempt >= backoffs.length) throw new ApiConnectionError(describe(), error, tls?.message);
        const delay = backoffs[attempt];
        if (!tls) {
          logger.warn("{what} could not reach the API server ({error}); retrying in {delay} s.", {
            what: describe(),
            error: describeCause(error),
            delay,
          });
        }
        await sleep(delay, options.signal);
        continue;
      }
      // Asked here, not in the method: otherwise every request would make a call for a rare case.
      if (this.#connectionProblem !== null) this.#certificateAccepted();
      const response = answer.response;
      if (response.ok) return answer;

      const text = answer.text ?? await response.text();
      const status = parseStatus(text);
      const error = apiErrorFor(describe(), response.status, status, text);
      if (error instanceof ApiTooManyRequestsError) error.retryAfter = retryAfter(response.headers, status);
      if (error instanceof ApiUnauthorizedError) {
        // Fixed credentials get one refresh (rotated tokens); vault entries give way to the next ones.
        const again = item.fixed ? unauthorized === 0 : unauthorized < MAX_REAUTHENTICATIONS;
        unauthorized++;
        this.vault.invalidate(item);
        if (again) continue;
      }
      const retriable = response.status >= 500 || response.status === 429;
      if (!retriable || attempt >= backoffs.length) throw error;
      let delay = backoffs[attempt];
      const asked = response.status === 429 ? retryAfter(response.headers, status) : undefined;
      if (asked !== undefined && (asked > delay || this.#networking.enforceRetryAfter)) delay = asked;
      // A first wait that the server asks for (e.g. while its watch cache fills after a start) is no problem yet.
      const retrying = "{what} failed with HTTP {code}; retrying in {delay} s.";
      const properties = { what: describe(), code: response.status, delay };
      if (asked !== undefined && attempt === 0) logger.info(retrying, properties);
      else logger.warn(retrying, properties);
      await sleep(delay, options.signal);
    }
  }

  /**
   * One attempt over the wire: a slot of the request cap (not for streams and urgent requests), the
   * transport of the credentials, the headers, the timeouts, `fetch`, and the text of the answer
   * (not of a stream's). One function, not one per part: each distinct function of every request
   * costs at a LocalCluster's pace (docs/performance/cpu.md, "Fewer functions, a third pass").
   */
  async #fetch(
    item: VaultItem,
    url: string,
    method: string,
    options: RequestOptions,
    totalTimeout: number | null,
    streaming: boolean,
  ): Promise<Answer> {
    // Streams are long-lived and few (one per resource): only requests take slots, urgent ones excepted. The
    // setting is read per request (it may change while running), the cap told only of a change.
    const limit = this.#networking.concurrentRequests;
    if (limit !== this.#slotsLimit) this.#capChanged(limit);
    // A free slot is taken at once: no promise per request unless it has to wait.
    const slot = streaming || options.urgent
      ? undefined
      : this.#slots.tryTake() ?? await this.#slots.take(options.signal, options.ahead);
    const { credentials } = item;
    const transport = this.#transports.of(credentials);
    transport.pending++;
    try {
      // A plain record: `fetch` copies headers into its own list anyway, and a `Headers` object is
      // copied through its iterator (a visible part of each request's CPU in the profiles).
      const headers: Record<string, string> = { Accept: options.accept ?? "application/json" };
      // A header that never changes is taken as it is: no promise and no await per request.
      const fixed = credentials.fixedAuthorization;
      const authorization = fixed === undefined ? await credentials.authorization() : fixed;
      if (authorization) headers.Authorization = authorization;
      let body: string | undefined;
      if (options.body !== undefined) {
        headers["Content-Type"] = options.contentType ?? "application/json";
        body = JSON.stringify(options.body);
      }
      const connectTimeout = options.connectTimeout === undefined
        ? this.#networking.connectTimeout
        : options.connectTimeout;
      const setting = options.connectTimeout === undefined
        ? "settings.networking.connectTimeout"
        : "settings.watching.connectTimeout";
      // One controller per request, aborted by the caller's signal or by the deadline; no timer of
      // its own (see `requestDeadline`). Both used to be pairs: timers, and a controller linked to
      // another through listeners -- per request and attempt.
      const controller = new AbortController();
      const caller = options.signal;
      const follow = caller ? () => controller.abort(caller.reason) : undefined;
      if (caller?.aborted) controller.abort(caller.reason);
      else if (follow) caller!.addEventListener("abort", follow, { once: true });
      const deadline = requestDeadline(controller, connectTimeout, setting, totalTimeout);
      let client: Deno.HttpClient | undefined;
      // A stream counts in its lane until its request is aborted: by its caller, or below if it fails.
      const lane = streaming
        ? this.#transports.streamLane(transport, credentials, controller.signal)
        : transport.shared;
      try {
        // The pooled client at once when there is one: no promise per request for making it.
        client = lane.http ?? await this.#transports.client(transport, credentials);
        const response = await fetch(url, { method, headers, body, client, signal: controller.signal });
        headersArrived(deadline);
        if (client === lane.http) lane.answeredAt = performance.now();
        if (streaming) return { response, status: response.status, via: { transport, lane, client, credentials } };
        if (totalTimeout === null) return { response, status: response.status };
        // The total timeout also covers reading the body; it is cleared once the body is consumed (or in the
        // `catch` if reading fails). The text travels beside the response rather than in a new `Response` around it:
        // that copy (its headers, body stream and text decoding again) was a visible part of each request's CPU.
        const text = await response.text();
        clearDeadline(deadline);
        if (follow) caller!.removeEventListener("abort", follow);
        return { response, status: response.status, text };
      } catch (error) {
        clearDeadline(deadline);
        if (follow) caller!.removeEventListener("abort", follow);
        if (streaming) controller.abort(error);
        throw this.#failure(error, deadline, transport, lane, client, credentials);
      }
    } finally {
      slot?.();
      // Counted here, and the transports told only when it matters: a call less per request.
      if (--transport.pending === 0 && transport.dropped) this.#transports.finished(transport);
    }
  }

  /** The request cap's setting changed, or is seen for the first time: the cap is told. */
  #capChanged(limit: number | null): void {
    this.#slots.limit = limit; // throws for a wrong value: then asked again by the next request
    this.#slotsLimit = limit;
  }

  /** What a failed attempt throws: its error, or its expired deadline's (then its connection, if any, is suspect). */
  #failure(
    error: unknown,
    deadline: RequestDeadline,
    transport: Transport,
    lane: Lane,
    client: Deno.HttpClient | undefined,
    credentials: Credentials,
  ): unknown {
    if (!deadline.expired || !client) return deadline.expired ?? error;
    this.#transports.suspect(transport, lane, client, credentials, deadline.expired.message);
    return deadline.expired;
  }
}
