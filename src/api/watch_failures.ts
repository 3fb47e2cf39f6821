/**
 * What counts as a failure of a watch stream, and what follows one: how long a request may stay
 * silent before it is stalled, how soon an end is too soon to be on schedule, the pause after an
 * end (none amid events), and each failure counted in the stream's health, told at a bounded rate
 * (a rejected certificate at error level, with what to do) and answered with the pause before the
 * next attempt; the end of a run of failures is told once.
 *
 * @module
 */

import { getLogger } from "@logtape/logtape";
import type { ApiClient } from "./client.ts";
import { ApiTooManyRequestsError, describeCause } from "./errors.ts";
import { FailureReports } from "./failure_reports.ts";
import { reconnectDelay } from "./reconnect_backoff.ts";
import { diagnoseTls } from "./tls_diagnosis.ts";
import type { WatchHealth } from "./watch_health.ts";
import type { WatchingSettings } from "../settings/watching.ts";

const logger = getLogger(["kopf", "watching"]);

/**
 * Seconds past `serverTimeout` that a watch request may stay silent before it counts as stalled:
 * the server ends it on schedule, so a longer silence is a connection that no longer delivers.
 */
const SERVER_END_GRACE = 10;

/** How long a watch request may stay silent before it counts as stalled, and which setting says so. */
export function silenceBound(settings: WatchingSettings): { seconds: number; why: string } {
  const { inactivityTimeout, serverTimeout } = settings;
  if (serverTimeout !== null && serverTimeout + SERVER_END_GRACE < inactivityTimeout) {
    return {
      seconds: serverTimeout + SERVER_END_GRACE,
      why: `settings.watching.serverTimeout + ${SERVER_END_GRACE} s`,
    };
  }
  return { seconds: inactivityTimeout, why: "settings.watching.inactivityTimeout" };
}

/** What a stalled watch request went without, and for how long. */
export function silence(settings: WatchingSettings): string {
  const { seconds, why } = silenceBound(settings);
  return `no event or bookmark for ${seconds} s (${why})`;
}

/** Milliseconds: a watch request that ends sooner is a failure, not an end on schedule. */
export function quickEnd(settings: WatchingSettings): number {
  const serverTimeout = settings.serverTimeout;
  return Math.min(1000, serverTimeout === null ? 1000 : serverTimeout * 500);
}

/**
 * Milliseconds: a watch request that the server ends within this time of its last object event
 * ended amid a flow of events.
 */
const AMID_EVENTS = 1000;

/** Seconds that a run of waits asked by the server (429 with Retry-After) may last before it is a warning. */
const WAIT_ASKED_PATIENCE = 30;

/**
 * Whether a request that lasted so many milliseconds ended before its schedule: sooner than the
 * server was asked to end it (`serverTimeout`) and than the client ends it (`clientTimeout`).
 * Without either, the server's own schedule is half an hour or more: any end before is early.
 */
function beforeSchedule(settings: WatchingSettings, lasted: number): boolean {
  const { serverTimeout, clientTimeout } = settings;
  return (serverTimeout === null || lasted < serverTimeout * 1000) &&
    (clientTimeout === null || lasted < clientTimeout * 1000);
}

/** How a watch request ended without an error, for {@linkcode WatchFailures.pauseAfter}. */
export interface RequestEnd {
  /** It went silent for longer than {@linkcode silenceBound}. */
  readonly stalled: boolean;
  /** Silent as it was, its connection answered other requests (or a probe) meanwhile. */
  readonly connectionAnswered?: boolean;
  /** Milliseconds from its start to its end. */
  readonly lasted: number;
  /** Its events or bookmarks moved the stream's resume point (the resourceVersion). */
  readonly progressed: boolean;
  /** When it last delivered an object's event (ms since the epoch; 0: never). */
  readonly lastDelivery: number;
}

/** One stream's failures and signs of life, as its health counts them and its log tells them. */
export class WatchFailures {
  readonly #health: WatchHealth;
  readonly #settings: WatchingSettings;
  readonly #client: ApiClient;
  readonly #name: string;
  readonly #reports: FailureReports;
  /** A request stalled over a working connection, and nothing has arrived since. */
  #quietStall = false;

  /** For the stream called `name` in messages, whose requests `client` makes. */
  constructor(name: string, health: WatchHealth, settings: WatchingSettings, client: ApiClient) {
    this.#name = name;
    this.#health = health;
    this.#settings = settings;
    this.#client = client;
    this.#reports = new FailureReports({ logger, interval: () => settings.failureReportInterval });
  }

  /** Something arrived (a listing, an event, a bookmark); ends a run of failures. */
  alive(): void {
    this.#quietStall = false;
    const failing = this.#health.failingSince !== null;
    this.#health.alive();
    if (failing) this.#recovered();
  }

  /** A watch request ended on schedule. */
  ended(): void {
    this.#quietStall = false;
    const failing = this.#health.failingSince !== null;
    this.#health.ended();
    if (failing) this.#recovered();
  }

  /**
   * What the end of a watch request means, and the pause (s) before the next one: a stall and a
   * request that ended at once without progress are failures (a server or proxy that ends every
   * request at once would make a busy loop); an end before its schedule amid events is resumed at
   * once; any other end waits `reconnectBackoff` before the next request. A stall over a connection
   * that answers (other requests, or a probe) is a bookmark late or held back, not a failure: it is
   * resumed at once -- unless the request before it stalled so too with nothing arriving since.
   */
  pauseAfter(end: RequestEnd): number {
    if (end.stalled) {
      this.#health.stalls++;
      if (end.connectionAnswered && !this.#quietStall && this.#health.failingSince === null) {
        this.#quietStall = true;
        logger.debug("The watch request of {name} got {silence}, though its connection works; resuming it.", {
          name: this.#name,
          silence: silence(this.#settings),
        });
        return 0;
      }
      return this.failed(new Error(silence(this.#settings)));
    }
    // kube-apiserver ends the watch of a reader that falls behind in a burst, and the resumption,
    // catching up, is often ended soon too: a request whose events moved the resume point made progress.
    if (end.lasted < quickEnd(this.#settings) && !end.progressed) {
      return this.failed(new Error("the server ended the watch request at once"));
    }
    this.ended();
    // With events still coming, a pause would only hold them back: it spaces the requests of a quiet stream,
    // and those that end on schedule.
    if (Date.now() - end.lastDelivery < AMID_EVENTS && beforeSchedule(this.#settings, end.lasted)) {
      logger.debug("The watch request of {name} ended amid events; resuming at once.", { name: this.#name });
      return 0;
    }
    return this.#settings.reconnectBackoff;
  }

  /**
   * Records a failure, tells it at a bounded rate, and returns the pause (s) before the next attempt. A wait that
   * the server asked for (429 with Retry-After: its watch cache still filling, after a start or a new CRD) is told
   * at info level while it has lasted less than {@linkcode WAIT_ASKED_PATIENCE}.
   */
  failed(error: unknown): number {
    const health = this.#health;
    const described = describeCause(error);
    const fresh = health.failed(described);
    const failingFor = (Date.now() - (health.failingSince ?? Date.now())) / 1000;
    let delay = reconnectDelay(health.backoffFailures, failingFor, this.#settings);
    const waitAsked = error instanceof ApiTooManyRequestsError && error.retryAfter !== undefined;
    if (error instanceof ApiTooManyRequestsError) delay = Math.max(delay, error.retryAfter ?? 1);
    const credentials = this.#client.vault.peek()?.credentials;
    const tls = credentials ? diagnoseTls(error, credentials.server, credentials.source) : undefined;
    this.#reports.failed({
      level: tls ? "error" : waitAsked && failingFor < WAIT_ASKED_PATIENCE ? "info" : "warning",
      message: tls
        ? "The stream of {name} cannot connect: {diagnosis} Retrying in {delay} s."
        : waitAsked
        ? "The API server asked the stream of {name} to wait ({problem}); resuming in {delay} s."
        : "The stream of {name} failed ({problem}); resuming in {delay} s.",
      properties: { name: this.#name, problem: described, diagnosis: tls?.message, delay: Math.round(delay * 10) / 10 },
    }, fresh);
    return delay;
  }

  /** Tells the end of a run of failures, once: only if the sign of life ended it. */
  #recovered(): void {
    if (this.#health.failingSince !== null) return;
    this.#reports.recovered("The stream of {name} works again after {seconds} s and {failures} failures.", {
      name: this.#name,
    });
  }
}
