/**
 * The timeouts of requests, all on one timer. A request has two (until the headers arrive, and in
 * total); almost every request ends long before either, so a timer per request was set and cleared
 * for nothing -- and timers are costly here (`setTimeout` makes a Node-compatible `Timeout` object:
 * constructing and clearing it was a visible part of each request's CPU in the profiles). Here a
 * request only joins and leaves a set; one timer, armed for the earliest deadline, looks at the set
 * when it fires and arms itself again for what is left. It is not cleared when the last request
 * leaves: an operator that handles its objects one at a time would set and clear it for each of
 * them (a visible share of the main thread's CPU per object in `perf` at 250 objects/s:
 * docs/performance/cpu.md, "JavaScript against the runtime's native work"). Left armed, it serves
 * the next requests, whose deadlines come later; it fires at most once more with nothing to do,
 * and does not keep the process alive.
 *
 * A deadline is a plain record and three functions rather than a class with a shared registry:
 * every request runs them, and each function a request runs costs at a LocalCluster's pace
 * (docs/performance/cpu.md, "Fewer functions, a second pass").
 *
 * @module
 */

/** The longest delay a timer takes (longer ones fire at once). */
const MAX_TIMER_MS = 2 ** 31 - 1;

/**
 * The timeouts of one request: the connect timeout until the headers arrive, the total one until
 * the end (the body read). When one is reached, the controller aborts with an error that names the
 * setting; `expired` keeps it for the caller to throw instead of the abort.
 */
export interface RequestDeadline {
  /** Why the request was aborted by a timeout, if it was. */
  expired: Error | undefined;
  /** When the next timeout is reached (`performance.now()`); `Infinity` when none applies any more. */
  due: number;
  /** Whether the headers have arrived: the connect timeout no longer applies. */
  connected: boolean;
  /** Aborted when a timeout is reached. */
  readonly controller: AbortController;
  /** When the request began (`performance.now()`). */
  readonly started: number;
  /** Seconds until the headers arrive; `null`: no limit. */
  readonly connect: number | null;
  /** The setting the connect timeout comes from, for the error. */
  readonly setting: string;
  /** Seconds until the end; `null`: no limit. */
  readonly total: number | null;
}

/** The deadlines of the requests under way, and the one timer that watches them. */
const pending = new Set<RequestDeadline>();
let timer: ReturnType<typeof setTimeout> | undefined;
/** When the timer fires (`performance.now()`); `Infinity` when it is not armed. */
let firesAt = Infinity;

/**
 * Starts the deadlines of a request.
 *
 * @param controller aborted when a timeout is reached.
 * @param connect seconds until the headers arrive; `null`: no limit.
 * @param setting the setting the connect timeout comes from, for the error.
 * @param total seconds until the end; `null`: no limit.
 */
export function requestDeadline(
  controller: AbortController,
  connect: number | null,
  setting: string,
  total: number | null,
): RequestDeadline {
  const started = performance.now();
  const seconds = connect === null ? total : total === null ? connect : Math.min(connect, total);
  const due = seconds === null ? Infinity : started + seconds * 1000;
  const deadline: RequestDeadline = {
    expired: undefined,
    due,
    connected: false,
    controller,
    started,
    connect,
    setting,
    total,
  };
  if (seconds !== null) {
    pending.add(deadline);
    if (due < firesAt) arm(due);
  }
  return deadline;
}

/** The headers have arrived: the connect timeout no longer applies, the total one still does. */
export function headersArrived(deadline: RequestDeadline): void {
  deadline.connected = true;
  if (deadline.due === Infinity) return;
  if (deadline.total === null) return clearDeadline(deadline);
  // Never sooner than before (the connect timeout was the sooner one, or none): the timer, armed for
  // that one at the latest, finds the new time when it fires and arms itself again for it.
  deadline.due = deadline.started + deadline.total * 1000;
}

/** The request is over: no timeout applies any more. */
export function clearDeadline(deadline: RequestDeadline): void {
  deadline.due = Infinity;
  pending.delete(deadline);
}

function arm(at: number): void {
  clearTimeout(timer);
  firesAt = at;
  timer = setTimeout(fire, Math.min(Math.max(0, at - performance.now()), MAX_TIMER_MS));
  // The requests keep the process alive while they are pending; the timer alone must not.
  Deno.unrefTimer(timer);
}

function fire(): void {
  timer = undefined;
  firesAt = Infinity;
  const now = performance.now();
  for (const deadline of [...pending]) {
    // A timer may fire a little early: a millisecond short of the deadline counts as the deadline.
    if (deadline.due <= now + 1) reached(deadline);
  }
  // Looked for after the aborts: their listeners may have sent new requests (which armed the timer).
  let next = Infinity;
  for (const deadline of pending) next = Math.min(next, deadline.due);
  if (next < firesAt) arm(next);
}

/** A timeout has come: the request is aborted with an error that says which one. */
function reached(deadline: RequestDeadline): void {
  const connect = deadline.connected ? null : deadline.connect;
  const total = deadline.total;
  clearDeadline(deadline);
  deadline.expired = connect !== null && (total === null || connect < total)
    ? new Error(`no response within ${connect} s (${deadline.setting})`)
    : new Error(`the request took longer than ${total} s (settings.networking.requestTimeout)`);
  deadline.controller.abort(deadline.expired);
}
