/**
 * Settings of the watch streams: how they are kept alive and resumed.
 *
 * @module
 */

/** How list+watch streams behave. */
export class WatchingSettings {
  /** Seconds asked from the server per watch request (`timeoutSeconds`); `null`: the server decides. */
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
   * from its last resourceVersion. Kubernetes sends bookmarks about once a minute, hence 70.
   */
  inactivityTimeout = 70;
  /** Seconds before the first reconnection after a stream ended or failed. */
  reconnectBackoff = 0.1;
  /** The longest pause between reconnection attempts of a stream that keeps failing, in seconds. */
  reconnectBackoffMax = 30;
  /** Objects per page when listing (`limit`); `null` lists everything in one response. */
  listPageSize: number | null = 500;
  /**
   * Seconds a stream may keep failing before it reports itself unhealthy. It never gives up:
   * it keeps retrying; health probes read the report.
   */
  unhealthyAfter = 60;
}
