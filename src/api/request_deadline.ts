/**
 * The timeouts of requests, all on one timer. A request has two (until the headers arrive, and in
 * total); almost every request ends long before either, so a timer per request was set and cleared
 * for nothing -- and timers are costly here (`setTimeout` makes a Node-compatible `Timeout` object:
 * constructing and clearing it was a visible part of each request's CPU in the profiles). Here a
 * request only joins and leaves a set; one timer, armed for the earliest deadline, looks at the set
 * when it fires and arms itself again for what is left. It is not cleared when the last request
 * leaves: an operator that handles its objects one at a time would set and clear it for each of
 * them (a visible share of the main thread's CPU per object in `perf` at 250 objects/s:
 * docs/performance.md). Left armed, it serves the next requests, whose deadlines come later; it
 * fires at most once more with nothing to do, and does not keep the process alive.
 *
 * @module
 */

/** The longest delay a timer takes (longer ones fire at once). */
const MAX_TIMER_MS = 2 ** 31 - 1;

/** The requests with a deadline, and the one timer that watches them. */
class Deadlines {
  readonly #pending = new Set<RequestDeadline>();
  #timer: ReturnType<typeof setTimeout> | undefined;
  /** When the timer fires (`performance.now()`); `Infinity` when it is not armed. */
  #firesAt = Infinity;

  add(deadline: RequestDeadline): void {
    this.#pending.add(deadline);
    if (deadline.due < this.#firesAt) this.#arm(deadline.due);
  }

  delete(deadline: RequestDeadline): void {
    this.#pending.delete(deadline);
  }

  #arm(at: number): void {
    clearTimeout(this.#timer);
    this.#firesAt = at;
    this.#timer = setTimeout(() => this.#fire(), Math.min(Math.max(0, at - performance.now()), MAX_TIMER_MS));
    // The requests keep the process alive while they are pending; the timer alone must not.
    Deno.unrefTimer(this.#timer);
  }

  #fire(): void {
    this.#timer = undefined;
    this.#firesAt = Infinity;
    const now = performance.now();
    for (const deadline of [...this.#pending]) {
      // A timer may fire a little early: a millisecond short of the deadline counts as the deadline.
      if (deadline.due <= now + 1) deadline.reached();
    }
    // Looked for after the aborts: their listeners may have sent new requests (which armed the timer).
    let next = Infinity;
    for (const deadline of this.#pending) next = Math.min(next, deadline.due);
    if (next < this.#firesAt) this.#arm(next);
  }
}

const deadlines = new Deadlines();

/**
 * The timeouts of one request: the connect timeout until the headers arrive, the total one until
 * the end (the body read). When one is reached, the controller aborts with an error that names the
 * setting; `expired` keeps it for the caller to throw instead of the abort.
 */
export class RequestDeadline {
  /** Why the request was aborted by a timeout, if it was. */
  expired: Error | undefined;
  /** When the next timeout is reached (`performance.now()`). */
  due = Infinity;
  readonly #controller: AbortController;
  readonly #started = performance.now();
  readonly #connect: number | null;
  readonly #setting: string;
  readonly #total: number | null;
  #connected = false;

  /**
   * @param controller aborted when a timeout is reached.
   * @param connect seconds until the headers arrive; `null`: no limit.
   * @param setting the setting the connect timeout comes from, for the error.
   * @param total seconds until the end; `null`: no limit.
   */
  constructor(controller: AbortController, connect: number | null, setting: string, total: number | null) {
    this.#controller = controller;
    this.#connect = connect;
    this.#setting = setting;
    this.#total = total;
    this.#schedule();
  }

  /** The headers have arrived: the connect timeout no longer applies, the total one still does. */
  connected(): void {
    this.#connected = true;
    this.#schedule();
  }

  /** The request is over: no timeout applies any more. */
  clear(): void {
    this.due = Infinity;
    deadlines.delete(this);
  }

  /** Called by the shared timer when `due` has come. */
  reached(): void {
    const connect = this.#connected ? null : this.#connect;
    const total = this.#total;
    this.clear();
    if (connect !== null && (total === null || connect < total)) {
      this.#expire(new Error(`no response within ${connect} s (${this.#setting})`));
    } else {
      this.#expire(new Error(`the request took longer than ${total} s (settings.networking.requestTimeout)`));
    }
  }

  #schedule(): void {
    const connect = this.#connected ? null : this.#connect;
    const total = this.#total;
    const seconds = connect === null ? total : total === null ? connect : Math.min(connect, total);
    if (seconds === null) return this.clear();
    this.due = this.#started + seconds * 1000;
    deadlines.add(this);
  }

  #expire(error: Error): void {
    this.expired = error;
    this.#controller.abort(error);
  }
}
