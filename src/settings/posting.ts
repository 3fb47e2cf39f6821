/**
 * Settings of Kubernetes Events posted by the operator.
 *
 * @module
 */

import type { LogLevel } from "@logtape/logtape";

/**
 * Which Kubernetes Events the operator posts about objects, and how they look (Kopf 1.44's
 * defaults, plus the aggregation of repeated identical Events).
 *
 * @example
 * ```ts
 * import * as kopf from "@kopf/kopf";
 * const settings = new kopf.Settings();
 * settings.posting.level = "warning"; // only warnings and errors become Events
 * settings.posting.loggers = true;    // handlers' log lines become Events too
 * ```
 */
export class PostingSettings {
  /**
   * Whether Events are posted at all: `kopf.event()`, `info()`, `warn()`, `exception()`, and
   * (with `loggers`) log lines.
   */
  enabled = true;
  /**
   * Whether object-related log lines (the handlers' `logger`, the framework's messages about
   * objects) are posted as Events with reason `Logging`. Off by default since Kopf 1.44.
   */
  loggers = false;
  /**
   * The lowest level posted: log lines below it are not posted, nor are `info()` (level `info`),
   * `warn()` (`warning`) and `exception()` (`error`), nor `event()` with the types `Debug`,
   * `Normal`, `Warning`, `Error`, `Fatal` (other types are always posted).
   */
  level: LogLevel = "info";
  /** The Events' `reportingComponent` and `source.component` (`kubectl describe` shows it under "From"). */
  reportingComponent = "kopf";
  /** The Events' `reportingInstance`. */
  reportingInstance = "dev";
  /** The Events' `metadata.generateName`: the API server appends a random suffix. */
  eventNamePrefix = "kopf-event-";
  /**
   * Seconds within which a repeat of an identical Event (same object, type, reason and message)
   * increments the `count` of the Event already posted instead of creating another one, as
   * client-go's recorder does; measured from the previous occurrence. Identical Events queued
   * while the poster is busy are merged into one request. `0` posts every occurrence as its own
   * Event, as Kopf does.
   */
  aggregationWindow = 600;
  /**
   * How many distinct Events are remembered for aggregation (least recently seen are forgotten
   * first); read when the operator starts.
   */
  aggregationCacheSize = 4096;
}
