/**
 * Logging a failure that repeats, at a bounded rate: the first failure of a run is logged in full,
 * the repetitions are counted and summarised at most once per interval, and the recovery is
 * logged once. A storm of identical lines would hide everything else in the log.
 *
 * @module
 */

import type { Logger } from "@logtape/logtape";

/** How a repeated failure is reported. */
export interface FailureReportsOptions {
  /** Where to log. */
  logger: Logger;
  /** Seconds between two summaries of a failure that keeps repeating. */
  interval: () => number;
}

/** One failure to report: the message template and its properties, at a level. */
export interface FailureNote {
  /**
   * `error` for problems that need the user (a wrong CA), `warning` for those that may pass, `info` for a wait that
   * the server asked for and that is no problem yet.
   */
  level: "info" | "warning" | "error";
  /** A message template (LogTape's `{name}` placeholders). */
  message: string;
  /** The placeholders' values. */
  properties: Record<string, unknown>;
}

const SEVERITY: Record<FailureNote["level"], number> = { info: 0, warning: 1, error: 2 };

/** Reports one source's failures (e.g. one stream) at a bounded rate. */
export class FailureReports {
  readonly #options: FailureReportsOptions;
  #runStarted: number | null = null;
  #lastLogged = 0;
  #suppressed = 0;
  #total = 0;
  /** The most severe level told in the current run. */
  #told: FailureNote["level"] = "info";

  /** Prepares the reports; nothing is logged until a failure. */
  constructor(options: FailureReportsOptions) {
    this.#options = options;
  }

  /**
   * A failure: logged in full if it starts a run (`fresh`, or the first since a recovery), is more
   * severe than what the run has told so far (a wait the server asked for, then a failure), or a
   * summary is due (with the number of failures not logged since); at debug level otherwise.
   */
  failed(note: FailureNote, fresh: boolean, now: number = Date.now()): void {
    const { logger } = this.#options;
    const first = fresh || this.#runStarted === null;
    if (first) {
      this.#runStarted = now;
      this.#suppressed = 0;
      this.#total = 0;
    }
    this.#total++;
    const graver = SEVERITY[note.level] > SEVERITY[this.#told];
    if (!first && !graver && now - this.#lastLogged < this.#options.interval() * 1000) {
      this.#suppressed++;
      logger.debug(note.message, note.properties);
      return;
    }
    const repeated = first ? "" : ` (repeated {repeats} times in {seconds} s; failing since {since})`;
    const properties = {
      ...note.properties,
      repeats: this.#suppressed + 1,
      seconds: Math.round((now - this.#lastLogged) / 1000),
      since: new Date(this.#runStarted ?? now).toISOString(),
    };
    if (note.level === "error") logger.error(note.message + repeated, properties);
    else if (note.level === "info") logger.info(note.message + repeated, properties);
    else logger.warn(note.message + repeated, properties);
    this.#lastLogged = now;
    this.#suppressed = 0;
    if (first || graver) this.#told = note.level;
  }

  /** The source works again: the next failure starts a new run (logged in full). */
  recovered(message: string, properties: Record<string, unknown>, now: number = Date.now()): void {
    if (this.#runStarted === null) return;
    const seconds = Math.round((now - this.#runStarted) / 1000);
    this.#options.logger.info(message, { ...properties, seconds, failures: this.#total });
    this.#runStarted = null;
    this.#suppressed = 0;
    this.#total = 0;
  }
}
