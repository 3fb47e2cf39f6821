/**
 * Settings of the watch streams: how they are kept alive and resumed.
 *
 * @module
 */

/** How list+watch streams behave. */
export class WatchingSettings {
  /**
   * Seconds asked from the server per watch request (`timeoutSeconds`); `null`: the server decides.
   * When set, a request silent for 10 s longer than this counts as stalled (if that is sooner than
   * `inactivityTimeout`): the server should have ended it.
   */
  serverTimeout: number | null = null;
  /** Seconds after which the client closes a watch request and resumes it; `null`: never. */
  clientTimeout: number | null = null;
  /**
   * Seconds until a watch request's response headers arrive; `null`: the same as regular
   * requests (`settings.networking.connectTimeout`).
   */
  connectTimeout: number | null = null;
  /**
   * Seconds without any event or bookmark after which a stream counts as stalled and is resumed
   * from its last resourceVersion. Kubernetes sends bookmarks about once a minute, hence 70. With
   * `serverTimeout`, the bound is at most `serverTimeout` + 10 s.
   */
  inactivityTimeout = 70;
  /**
   * Seconds before a stream's next watch request after one ended (on the server's or the client's
   * schedule, or quietly). Not after one that the server ended early amid events (its last object
   * event within a second of the end): kube-apiserver ends the watch of a reader that falls behind
   * in a burst, and the stream resumes at once.
   */
  reconnectBackoff = 0.1;
  /**
   * The first pause after a failure (an error status, an ERROR event, a connection failure, a
   * stall, a request that ends at once), in seconds. Each further failure of the run doubles it,
   * with jitter, up to `reconnectBackoffMax`, but a pause never exceeds half of the time the stream
   * has been failing: after a short outage the stream resumes soon after the server is back.
   */
  failureBackoff = 0.8;
  /** The longest pause between reconnection attempts of a stream that keeps failing, in seconds. */
  reconnectBackoffMax = 30;
  /**
   * Seconds a watch request must stay answered without failure before the stream's backoff starts
   * from `failureBackoff` again, and before the stream counts as working while that request stays
   * open (a quiet stream after an outage). The run of failures itself ends only with a listing, an
   * event, a bookmark or a request ended on schedule: requests that stay open this long and then
   * end in an ERROR event without delivering anything keep the stream failing (see `unhealthyAfter`).
   */
  backoffResetAfter = 5;
  /**
   * Seconds between two log lines about a stream that keeps failing: its first failure is logged
   * in full, the repetitions are summarised at most once per this interval.
   */
  failureReportInterval = 60;
  /**
   * List through the watch request where the server can (Kubernetes' streaming lists,
   * `sendInitialEvents`; the API server's `WatchList` gate, on by default in 1.32 and since 1.34):
   * every object comes as an event, then the watch goes on in the same request, with no LIST
   * requests. A server that refuses it or does not know it is detected, and listed by pages;
   * `false` always lists by pages.
   */
  streamingLists = true;
  /** Objects per page when listing by pages (`limit`); `null` lists everything in one response. */
  listPageSize: number | null = 500;
  /**
   * Seconds a stream may keep failing, or stay silent (no event, no bookmark, no answered or
   * on-schedule watch request), before it reports itself unhealthy and the liveness endpoint
   * answers 500. It never gives up: it keeps retrying; health probes read the report.
   *
   * A quiet but healthy stream gets a bookmark about every 60 s, and at worst is resumed after
   * `inactivityTimeout` (70 s): keep this bound above both, or shorten `serverTimeout` so that the
   * server's own ends of watch requests come more often than the bound.
   */
  unhealthyAfter = 90;
}
