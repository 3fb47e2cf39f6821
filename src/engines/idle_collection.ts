/**
 * One full garbage collection when the operator's object queues go quiet after work that grew the
 * process's memory.
 *
 * During a burst (10,000 objects listed at start, a mass update) V8 grows its heap to what the
 * burst needed, and gives the pages back to the system only after a full collection -- which an
 * idle process, allocating nearly nothing, may not run for hours: its resident memory stays at the
 * burst's peak (measured: 190 MiB for a live heap of 15 MiB). So once every queue of every stream
 * has been empty for a while, the process collects once; then nothing until new work has come and
 * gone, so that an idle operator stays asleep and a busy one is never interrupted. Events turned away
 * before any queue (other shard members' objects, when the API server does not filter) count as
 * work too once there are many of them: they are parsed, and leave garbage, without a queue.
 *
 * Only work that grew the resident memory by `growth` MiB since the last collection is followed by
 * one (the start's always is): a collection costs 40-120 ms of CPU, and after an object or a few it
 * gives back under a MiB -- an operator whose objects come one at a time, seconds apart, spent ten
 * times the CPU per object with it after each (docs/performance/memory.md, "Objects one at a time").
 * Such an object's work is weighed when it ends, not at the end of a quiet period: its timer's
 * wake-ups cost more than the reading.
 *
 * @module
 */

import { getLogger } from "@logtape/logtape";
import { kopfMetrics } from "../observability/metrics.ts";
import type { ProcessSettings } from "../settings/process.ts";
import { type GarbageCollector, obtainGarbageCollector } from "../utils/garbage_collector.ts";
import type { QueueActivity } from "./queueing.ts";

const logger = getLogger(["kopf", "operator"]);

/**
 * Events turned away since the last collection that are worth one (a few MiB of parsed objects):
 * fewer, such as the other members' occasional writes in a steady state, leave too little garbage
 * for a full collection each.
 */
const PASSED_WORTH_COLLECTING = 1000;

/**
 * Starts of work, counted from one that came a quiet period or more after the memory was last read, whose end
 * reads it at once: an object's creation, the echoes of its writes, a change or two. More are a burst.
 */
const WEIGHED_AT_ONCE = 4;

/** Bytes in a MiB: the unit of `growth`. */
const MIB = 1024 * 1024;

/** Calls `callback` after `seconds`; returns what cancels it. */
export type Schedule = (callback: () => void, seconds: number) => () => void;

/** Options of {@linkcode IdleCollection}. */
export interface IdleCollectionOptions {
  /** Seconds every queue must stay empty after work before the collection (`settings.process.idleCollection`). */
  delay: number;
  /**
   * MiB the resident memory must have grown by since the last collection for the next one to run; 0: after any
   * work (`settings.process.idleCollectionGrowth`, 4 by default). The first collection does not wait for it.
   */
  growth?: number;
  /** The process's resident memory in bytes; `Deno.memoryUsage().rss` by default (tests pass their own). */
  resident?: () => number;
  /** Where the collector comes from; V8's own `gc()` by default (tests pass a counter). */
  obtain?: () => Promise<GarbageCollector>;
  /** How the quiet period is timed; by default a timer that does not keep the process alive. */
  schedule?: Schedule;
  /** The time in milliseconds, for the quiet period after the last event turned away; `performance.now` by default. */
  now?: () => number;
}

/**
 * Told by the object queues of all streams when they get work and when they run out of it; after
 * `delay` seconds during which none of them had work, collects garbage once. Work that arrives
 * meanwhile postpones the collection until it is done and the queues are quiet again.
 *
 * @example
 * ```ts
 * import { IdleCollection } from "./idle_collection.ts";
 * using collection = new IdleCollection({ delay: 5 });
 * collection.busy(); // a queue got work
 * collection.idle(); // it is done: one collection in 5 s unless work comes again
 * ```
 */
export class IdleCollection implements QueueActivity, Disposable {
  readonly #delay: number;
  readonly #growth: number;
  readonly #resident: () => number;
  readonly #obtain: () => Promise<GarbageCollector>;
  readonly #schedule: Schedule;
  readonly #now: () => number;
  /** How many queues (of different streams) have work now. */
  #busy = 0;
  /** Counts the starts of work, so that a collection whose collector was loading sees work that came and went. */
  #epoch = 0;
  #cancel: (() => void) | undefined;
  /** Events turned away since the last collection. */
  #passed = 0;
  /** Whether an event was turned away since the quiet period began. */
  #stirred = false;
  /** When the last event was turned away (`#now`, ms). */
  #lastPassed = 0;
  /** When the queues last ran out of work (`#now`, ms). */
  #quietSince = 0;
  /** The resident memory just after the last collection (bytes); `undefined` before the first. */
  #residentAfter: number | undefined;
  /** When the resident memory was last read (`#now`, ms). */
  #lastReading = -Infinity;
  /** `#epoch` when work last came a quiet period or more after a reading. */
  #aloneSince = -Infinity;
  /** The collector once obtained; `null` once obtaining it has failed (never tried again). */
  #collector: Promise<GarbageCollector | null> | undefined;
  #disposed = false;

  /** @param options The quiet period, and (for tests) the collector and the timing. */
  constructor(options: IdleCollectionOptions) {
    const { delay } = options;
    if (!(Number.isFinite(delay) && delay >= 0)) {
      throw new RangeError(
        `settings.process.idleCollection must be a number of seconds (0 or more), or null for no collection; it is ${delay}.`,
      );
    }
    const growth = options.growth ?? 4;
    if (!(Number.isFinite(growth) && growth >= 0)) {
      throw new RangeError(
        `settings.process.idleCollectionGrowth must be a number of MiB (0 or more); it is ${growth}.`,
      );
    }
    this.#delay = delay;
    this.#growth = growth * MIB;
    this.#resident = options.resident ?? (() => Deno.memoryUsage().rss);
    this.#obtain = options.obtain ?? obtainGarbageCollector;
    this.#schedule = options.schedule ?? unrefTimeout;
    this.#now = options.now ?? (() => performance.now());
  }

  /**
   * A set of queues got work: a collection pending is put off until all of them are idle again.
   * Its timer is left to run out: objects that come one at a time make the queues busy and idle
   * for each of them, and a timer set and cleared each time was a visible share of the CPU per
   * object at such a pace (docs/performance/cpu.md, "JavaScript against the runtime's native work");
   * at its end, the period sees the work and starts over.
   */
  busy(): void {
    this.#busy++;
    this.#epoch++;
  }

  /**
   * A set of queues has no work left: once all are idle, the quiet period begins (or goes on, see `busy`) -- unless
   * the memory, read now, has grown too little, for work that came alone: the first a quiet period or more after the
   * last reading, and the few starts of work after it (an object's own echoes). Such an object then costs a reading
   * or two instead of a timer, whose wake-ups and callback cost more in a process gone cold between objects
   * (docs/performance/memory.md, "Without a timer per object"); a burst's work is timed as before, and weighed at
   * the period's end.
   */
  idle(): void {
    this.#busy--;
    if (this.#busy > 0 || this.#disposed) return;
    const now = this.#now();
    this.#quietSince = now;
    if (this.#cancel) return;
    if (now - this.#lastReading >= this.#delay * 1000) this.#aloneSince = this.#epoch;
    if (this.#epoch - this.#aloneSince < WEIGHED_AT_ONCE && !this.#worthCollecting()) return;
    this.#quiet(false);
  }

  /**
   * An event was turned away before any queue: once enough have been since the last collection, one
   * follows when they stop coming for the quiet period (a collection after the queues' work does not
   * wait for them: in a busy group, the others' events may never stop).
   */
  passed(): void {
    this.#passed++;
    this.#stirred = true;
    this.#lastPassed = this.#now();
    if (this.#passed < PASSED_WORTH_COLLECTING || this.#busy > 0 || this.#cancel || this.#disposed) return;
    this.#quiet(true);
  }

  /** Stops: a collection pending is not run. */
  [Symbol.dispose](): void {
    this.#disposed = true;
    this.#cancel?.();
    this.#cancel = undefined;
  }

  /**
   * Begins a quiet period of `seconds`, the collection at its end; a `patient` one that saw events
   * turned away meanwhile is extended to end the full delay after the last of them.
   */
  #quiet(patient: boolean, seconds: number = this.#delay): void {
    this.#stirred = false;
    const epoch = this.#epoch;
    this.#cancel = this.#schedule(() => {
      this.#cancel = undefined;
      // Queues at work: their next `idle()` begins the next period.
      if (this.#disposed || this.#busy > 0) return;
      if (epoch !== this.#epoch) {
        // Work came and went during the period: quiet counts from its end.
        const rest = this.#delay - (this.#now() - this.#quietSince) / 1000;
        if (rest > 0) this.#quiet(false, rest);
        else void this.#collect(this.#epoch);
      } else if (patient && this.#stirred) {
        const since = (this.#now() - this.#lastPassed) / 1000;
        this.#quiet(true, Math.min(this.#delay, Math.max(0, this.#delay - since)));
      } else {
        void this.#collect(epoch);
      }
    }, seconds);
  }

  /**
   * Whether the resident memory has grown by the growth since the last collection (always before the first); if not,
   * says so, and the events turned away so far are counted afresh, as after a collection.
   */
  #worthCollecting(): boolean {
    const after = this.#residentAfter;
    this.#lastReading = this.#now();
    const grown = after === undefined ? Infinity : this.#resident() - after;
    if (grown >= this.#growth) return true;
    this.#passed = 0;
    logger.debug(
      "No collection: the resident memory is {grown} MiB above what the last one left, below {growth}.",
      { grown: Math.round(grown / MIB * 10) / 10, growth: this.#growth / MIB },
    );
    return false;
  }

  async #collect(epoch: number): Promise<void> {
    if (!this.#worthCollecting()) return;
    this.#collector ??= this.#obtain().catch((error) => {
      logger.info(
        "Idle garbage collection is off: {error}. Memory grown during bursts is returned only when V8 collects " +
          "by itself; pass --v8-flags=--expose-gc, or set settings.process.idleCollection = null to hide this line.",
        { error },
      );
      return null;
    });
    const gc = await this.#collector;
    // Work that began while the collector loaded is done or still going: its own quiet period follows.
    if (gc === null || this.#disposed || epoch !== this.#epoch) return;
    const started = performance.now();
    this.#passed = 0;
    gc();
    this.#residentAfter = this.#resident();
    this.#lastReading = this.#now();
    kopfMetrics.idleCollections.inc([]);
    logger.debug("Collected garbage after {delay} s of quiet in {ms} ms.", {
      delay: this.#delay,
      ms: Math.round(performance.now() - started),
    });
  }
}

/**
 * The operator's collection after bursts, as `settings.process.idleCollection` asks for it:
 * nothing when it is `null`.
 */
export function idleCollectionFor(settings: ProcessSettings): IdleCollection | undefined {
  const delay = settings.idleCollection;
  return delay === null ? undefined : new IdleCollection({ delay, growth: settings.idleCollectionGrowth });
}

/** A timer that does not keep the process alive: an operator that stops must not wait for it. */
function unrefTimeout(callback: () => void, seconds: number): () => void {
  const timer = setTimeout(callback, seconds * 1000);
  Deno.unrefTimer(timer);
  return () => clearTimeout(timer);
}
