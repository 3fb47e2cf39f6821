/**
 * The health of one watch stream: its current run of failures (which shapes the reconnect backoff
 * and ends only once the stream has proven itself), and its last sign of life (which tells a
 * quiet stream from a dead one). The liveness endpoint reads its verdict.
 *
 * @module
 */

/** Why a stream is unhealthy, or `null` while it is healthy. */
export interface WatchVerdict {
  /** `failing`: its requests keep failing; `silent`: nothing has arrived for too long. */
  reason: "failing" | "silent";
  /** When the failures or the silence began (ms since the epoch). */
  since: number;
  /** A sentence for logs and the liveness endpoint's JSON. */
  message: string;
}

/** Timing of a stream's health. */
export interface WatchHealthTiming {
  /** Seconds a stream must stay connected without failure before its run of failures ends. */
  backoffResetAfter: number;
}

/**
 * Whether a stream works; the stream never gives up, but it reports how long it has been failing
 * or silent.
 *
 * Signs of life are a finished listing, an event or a bookmark, a watch request that the server
 * answered, and a watch request that ended on schedule. A `{"type":"ERROR"}` event, an error
 * status, a connection failure, a stall and a request that ends at once are failures. A run of
 * failures ends with a listing, an event or a bookmark, or once a watch request has stayed
 * answered without failure for `backoffResetAfter` seconds: an answer followed at once by an
 * ERROR event does not end it.
 */
export class WatchHealth {
  /** When the current run of failures began (ms since the epoch); `null` while it works. */
  failingSince: number | null = null;
  /** The last failure, for messages. */
  lastError: string | null = null;
  /** Failures in the current run; the reconnect backoff grows with it. */
  failures = 0;
  /** Failures and stalls so far, over the stream's life. */
  totalFailures = 0;
  /** Stalled streams detected and resumed so far. */
  stalls = 0;
  /** Listings done after the server said 410 Gone. */
  relists = 0;
  /** The last sign of life (ms since the epoch): the stream's start until something arrives. */
  lastSignOfLife: number = Date.now();
  /** Since when the current watch request has been answered without failure; `null` when none is. */
  connectedSince: number | null = null;
  readonly #unhealthyAfter: number;
  readonly #resetAfter: number;

  /**
   * Starts healthy, with no failures counted.
   *
   * @param unhealthyAfter seconds of continuous failure or silence after which the stream is unhealthy.
   * @param timing how long a stream must work before its failures are forgiven (5 s by default).
   */
  constructor(unhealthyAfter: number, timing: WatchHealthTiming = { backoffResetAfter: 5 }) {
    this.#unhealthyAfter = unhealthyAfter;
    this.#resetAfter = timing.backoffResetAfter;
  }

  /** False once the stream has been failing or silent for longer than the bound. */
  get healthy(): boolean {
    return this.verdict() === null;
  }

  /** Why the stream is unhealthy now, or `null` if it is healthy. */
  verdict(now: number = Date.now()): WatchVerdict | null {
    this.#settle(now);
    const bound = this.#unhealthyAfter * 1000;
    if (this.failingSince !== null && now - this.failingSince > bound) {
      const seconds = Math.round((now - this.failingSince) / 1000);
      return {
        reason: "failing",
        since: this.failingSince,
        message: `failing for ${seconds} s (${this.failures} failures; last: ${this.lastError})`,
      };
    }
    if (now - this.lastSignOfLife > bound) {
      const seconds = Math.round((now - this.lastSignOfLife) / 1000);
      return {
        reason: "silent",
        since: this.lastSignOfLife,
        message: `silent for ${seconds} s (no event, no bookmark, no successful reconnection)`,
      };
    }
    return null;
  }

  /** A watch request was answered: the server is reachable. */
  connected(now: number = Date.now()): void {
    this.lastSignOfLife = now;
    this.connectedSince ??= now;
  }

  /** A listing finished, or an event or a bookmark arrived: the stream works, its failures are over. */
  alive(now: number = Date.now()): void {
    this.lastSignOfLife = now;
    this.failingSince = null;
    this.failures = 0;
  }

  /** A watch request ended on the server's or the client's schedule. */
  ended(now: number = Date.now()): void {
    this.alive(now);
    this.connectedSince = null;
  }

  /** Something failed; returns whether it starts a new run of failures. */
  failed(error: string, now: number = Date.now()): boolean {
    this.#settle(now);
    this.connectedSince = null;
    this.failures++;
    this.totalFailures++;
    this.lastError = error;
    if (this.failingSince !== null) return false;
    this.failingSince = now;
    return true;
  }

  /** Ends the run of failures once the stream has stayed connected long enough. */
  #settle(now: number): void {
    if (this.failingSince === null) return;
    if (this.connectedSince === null || now - this.connectedSince < this.#resetAfter * 1000) return;
    this.failingSince = null;
    this.failures = 0;
  }
}
