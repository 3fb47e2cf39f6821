/**
 * The shapes of `ApiClient`'s calls (client.ts): the options of the client and of each request,
 * and the connection problem the client reports.
 *
 * @module
 */

import type { Verb } from "./counters.ts";
import type { NetworkingSettings } from "../settings/networking.ts";

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
  /**
   * Seconds until the response headers arrive, for this request alone; `null`: no limit.
   * Absent: `settings.networking.connectTimeout`.
   */
  connectTimeout?: number | null;
  /**
   * Sent at once, without waiting for a slot of `settings.networking.concurrentRequests`: for the
   * few requests with a deadline that must not queue behind a burst of object patches (Lease
   * renewals, peering keep-alives).
   */
  urgent?: boolean;
  /**
   * Waits for a slot of `settings.networking.concurrentRequests` ahead of the requests that begin new
   * work: for the rest of a write already begun (a patch's status part), so that work under way
   * ends before more of it starts.
   */
  ahead?: boolean;
}

/** A problem that makes every request to the API server fail, as the client last saw it. */
export interface ConnectionProblem {
  /** What is wrong and what to do. */
  readonly message: string;
  /** Since when (ms since the epoch). */
  readonly since: number;
}

/** Options of an API client. */
export interface ApiClientOptions {
  /** Timeouts and retries; Kopf's defaults when absent. */
  networking?: NetworkingSettings;
}
