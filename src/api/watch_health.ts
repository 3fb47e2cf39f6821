/**
 * The health of one watch stream: its current run of failures (which ends only once the stream has
 * delivered something), the failures that shape its reconnect backoff, and its last sign of life
 * (which tells a quiet stream from a dead one). The liveness endpoint reads its verdict.
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
  /** Seconds a stream must stay connected without failure before its reconnect backoff starts again from the first pause. */
  backoffResetAfter: number;
}

/**
 * Whether a stream works; the stream never gives up, but it reports how long it has been failing
 * or silent.
 *
 * Signs of life are a finished listing, an event or a bookmark, a watch request that the server
 * answered, and a watch request that ended on schedule. A `{"type":"ERROR"}` event, an error
 * status, a connection failure, a stall and a request that ends at once are failures.
 *
 * A run of failures ends only with a listing, an event, a bookmark or a request that ended on
 * schedule: what the stream exists for. While a request stays answered for `backoffResetAfter`
 * seconds, the stream counts as working (a quiet stream after an outage), and its reconnect
 * backoff starts again from the first pause. But once such a request ends in a failure (an ERROR
 * event, a cut) without having delivered anything, open requests no longer count for the rest of
 * the run: a server or proxy that holds every watch request for a while and then ends it with an
 * ERROR event keeps the stream failing, and unhealthy after `unhealthyAfter`.
 */
export class WatchHealth {
  /** When the current run of failures began (ms since the epoch); `null` while it works. */
  failingSince: number | null = null;
  /** The last failure, for messages. */
  lastError: string | null = null;
  /** Failures in the current run. */
  failures = 0;
  /**
   * Failures since the stream last delivered something or stayed connected for
   * `backoffResetAfter` seconds; the reconnect backoff grows with it.
   */
  backoffFailures = 0;
  /** Failures and stalls so far, over the stream's life. */
  totalFailures = 0;
  /** Stalled streams detected and resumed so far. */
  stalls = 0;
  /** Listings done after the server said 410 Gone. */
  relists = 0;
  /** The last sign of life (ms since the epoch): the stream's start until something arrives. */
  lastSignOfLife: number = Date.now();
  /**
   * When the last event or bookmark arrived (`performance.now()`), the stream's start until one
   * does: for the metric of the seconds since, which reconnections do not reset.
   */
  lastEvent: number = performance.now();
  /** Since when the current watch request has been answered without failure; `null` when none is. */
  connectedSince: number | null = null;
  readonly #unhealthyAfter: number;
  readonly #resetAfter: number;
  /**
   * Whether a request answered for `backoffResetAfter` seconds counts as the stream working while
   * it stays open (a quiet stream after an outage); not for the rest of a run of failures in which
   * such a request has ended in a failure without delivering anything.
   */
  #openRequestsCount = true;
  /** Whether the current watch request has delivered something. */
  #delivered = false;

  /**
   * Starts healthy, with no failures counted.
   *
   * @param unhealthyAfter seconds of continuous failure or silence after which the stream is unhealthy.
   * @param timing how long a stream must stay connected before its backoff restarts (5 s by default).
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
    const bound = this.#unhealthyAfter * 1000;
    const working = this.#openRequestsCount && this.#openLongEnough(now);
    if (this.failingSince !== null && now - this.failingSince > bound && !working) {
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
    if (this.connectedSince !== null) return;
    this.connectedSince = now;
    this.#delivered = false;
  }

  /** A listing finished, or an event or a bookmark arrived: the stream works, its failures are over. */
  alive(now: number = Date.now()): void {
    this.lastSignOfLife = now;
    this.failingSince = null;
    this.failures = 0;
    this.backoffFailures = 0;
    this.#openRequestsCount = true;
    this.#delivered = true;
  }

  /** A watch request ended on the server's or the client's schedule. */
  ended(now: number = Date.now()): void {
    this.alive(now);
    this.connectedSince = null;
  }

  /** Something failed; returns whether it starts a new run of failures. */
  failed(error: string, now: number = Date.now()): boolean {
    if (this.#openLongEnough(now)) {
      this.backoffFailures = 0;
      // Open for long, then failed without delivering anything: being answered says nothing of
      // the stream working for the rest of this run.
      if (!this.#delivered) this.#openRequestsCount = false;
    }
    this.connectedSince = null;
    this.failures++;
    this.backoffFailures++;
    this.totalFailures++;
    this.lastError = error;
    if (this.failingSince !== null) return false;
    this.failingSince = now;
    return true;
  }

  /** Whether the current watch request has been answered for `backoffResetAfter` seconds. */
  #openLongEnough(now: number): boolean {
    return this.connectedSince !== null && now - this.connectedSince >= this.#resetAfter * 1000;
  }
}
