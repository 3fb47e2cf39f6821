/**
 * Per-object queues: the events of one object are processed one at a time and in order, the
 * events of different objects concurrently (up to a limit, if one is set). A worker exists only
 * while its object has work.
 *
 * @module
 */

import { untilSettledOrAborted } from "../utils/signals.ts";
import { type Congestion, sharedTurns } from "../utils/turns.ts";

/**
 * Processes one item of a key; `more` says whether newer items of the same key are already
 * queued behind it (so that work only the latest state needs can be left to them).
 */
export type Processor<T> = (key: string, item: T, more: boolean) => Promise<void>;

/** Options of {@linkcode ObjectQueues}. */
export interface ObjectQueuesOptions<T> {
  /**
   * How many keys are processed at once; the others wait, in the order their first item came.
   * `null`: no limit.
   */
  limit?: number | null;
  /** What new items wait for while it is congested (e.g. the API client's queue of requests). */
  congestion?: Congestion;
  /** Told when the queues get work while they had none, and when they have none left. */
  activity?: QueueActivity;
  /**
   * How many keys may have items waiting or in progress before {@linkcode ObjectQueues.room} makes
   * the producer wait; `null` or absent: no limit. Keys, not items: more items of a key already
   * queued (the echoes of its own writes, a busy object's changes) must not stop the producer,
   * or one slow key with many items would hold back every other.
   */
  backlog?: number | null;
  /**
   * Merges a new item into the last one waiting for its key (not the one in progress), returning
   * the item that stands for both, or `undefined` to queue the new one behind it. Without it, every
   * item is kept: a key whose item never ends would collect all that come meanwhile.
   */
  squash?: (waiting: T, next: T) => T | undefined;
}

/**
 * Follows whether a set of {@linkcode ObjectQueues} has work: `busy()` when the first key gets an
 * item, `idle()` when the last key's items are all processed; the calls alternate, `busy()` first.
 */
export interface QueueActivity {
  /** The queues had no work and now have some. */
  busy(): void;
  /** The queues had work and now have none. */
  idle(): void;
  /**
   * An event was received and turned away before any queue (another shard member's object): work
   * that leaves garbage without making the queues busy. The queues never call it; their streams do.
   */
  passed?(): void;
}

/** A set of FIFO queues keyed by object, each drained by its own sequential worker. */
export class ObjectQueues<T> {
  readonly #queues = new Map<string, T[]>();
  readonly #workers = new Map<string, Promise<void>>();
  /** Keys with items whose worker waits for a free slot (only with a limit). */
  readonly #waiting: string[] = [];
  readonly #process: Processor<T>;
  readonly #onError: (key: string, error: unknown) => void;
  readonly #limit: number | null;
  readonly #congestion: Congestion | undefined;
  readonly #activity: QueueActivity | undefined;
  readonly #squash: ObjectQueuesOptions<T>["squash"];
  #running = 0;
  /** Items waiting or in progress, over all keys. */
  #depth = 0;
  readonly #backlog: number;
  /** Who waits for the keys with work to fall below the backlog limit (see `room`). */
  #roomWaiters: (() => void)[] = [];

  /**
   * @param process called for each item; never concurrently for the same key.
   * @param onError called when `process` throws; the worker goes on with the next item.
   * @param options the limit of keys processed at once.
   */
  constructor(
    process: Processor<T>,
    onError: (key: string, error: unknown) => void,
    options: ObjectQueuesOptions<T> = {},
  ) {
    this.#process = process;
    this.#onError = onError;
    const limit = options.limit ?? null;
    if (limit !== null && !(Number.isInteger(limit) && limit >= 1)) {
      throw new RangeError(
        `settings.batching.workerLimit must be a whole number of at least 1, or null for no limit; it is ${limit}.`,
      );
    }
    this.#limit = limit;
    const backlog = options.backlog ?? null;
    if (backlog !== null && !(Number.isInteger(backlog) && backlog >= 1)) {
      throw new RangeError(
        `settings.batching.backlogLimit must be a whole number of at least 1, or null for no limit; it is ${backlog}.`,
      );
    }
    this.#backlog = backlog ?? Infinity;
    this.#congestion = options.congestion;
    this.#activity = options.activity;
    this.#squash = options.squash;
  }

  /** How many items wait or are in progress, over all keys. */
  get depth(): number {
    return this.#depth;
  }

  /**
   * Nothing while fewer keys have items waiting or in progress than the backlog limit allows;
   * otherwise a promise that resolves once that is so again (not awaiting `undefined` saves a
   * microtask per item).
   */
  room(): Promise<void> | undefined {
    if (this.#queues.size < this.#backlog) return undefined;
    const { promise, resolve } = Promise.withResolvers<void>();
    this.#roomWaiters.push(resolve);
    return promise;
  }

  /**
   * Queues an item for a key and starts the key's worker if it is idle (and a slot is free); with
   * `squash`, an item that can stand for the last one waiting behind the key's first replaces it.
   */
  push(key: string, item: T): void {
    const queue = this.#queues.get(key);
    if (queue) {
      const merged = queue.length > 1 ? this.#squash?.(queue[queue.length - 1], item) : undefined;
      if (merged === undefined) {
        queue.push(item);
        this.#depth++;
      } else {
        queue[queue.length - 1] = merged;
      }
      return;
    }
    this.#depth++;
    if (!this.#queues.size) this.#activity?.busy();
    this.#queues.set(key, [item]);
    if (this.#limit !== null && this.#running >= this.#limit) {
      this.#waiting.push(key);
      return;
    }
    // What `#start()` does, written out: every object's first item comes here.
    this.#running++;
    this.#workers.set(key, this.#work(key));
  }

  /**
   * Waits until every queue is empty, or the signal aborts.
   *
   * @returns The items not processed yet, by key (the first of each may be in progress).
   */
  async drain(signal?: AbortSignal): Promise<Map<string, readonly T[]>> {
    while (this.#queues.size && !signal?.aborted) {
      // Waiting keys have no worker yet; they get one as running workers finish.
      await untilSettledOrAborted(Promise.allSettled([...this.#workers.values()]), signal);
    }
    return new Map([...this.#queues].map(([key, items]) => [key, [...items]]));
  }

  /** The keys with items waiting or in progress. */
  keys(): IterableIterator<string> {
    return this.#queues.keys();
  }

  /**
   * Drops a key's items that have not started, and waits until the one in progress (if any) ends,
   * or the signal aborts.
   *
   * @returns Whether the key has no work left.
   */
  async discard(key: string, signal?: AbortSignal): Promise<boolean> {
    const queue = this.#queues.get(key);
    if (!queue) return true;
    const waiting = this.#waiting.indexOf(key);
    if (waiting >= 0) {
      this.#waiting.splice(waiting, 1);
      this.#depth -= queue.length;
      this.#finished(key);
      return true;
    }
    this.#depth -= queue.splice(1).length;
    await untilSettledOrAborted(this.#workers.get(key) ?? Promise.resolve(), signal);
    return !this.#queues.has(key);
  }

  #start(key: string): void {
    this.#running++;
    this.#workers.set(key, this.#work(key));
  }

  /**
   * Processes a key's items until none is left, then gives its slot to the next waiting key. The
   * worker's end is kept here rather than in a callback on its promise: one function less per object
   * (docs/performance/cpu.md, "Fewer functions, a second pass"). It always awaits its first item
   * before it ends, so `#start` has set it as the key's worker by then.
   */
  async #work(key: string): Promise<void> {
    const queue = this.#queues.get(key)!;
    try {
      while (queue.length) {
        // Between items, timers and I/O get their turn: handlers may be CPU-bound and synchronous.
        const turn = sharedTurns.take(this.#congestion);
        if (turn) await turn;
        const item = queue[0];
        try {
          await this.#process(key, item, queue.length > 1);
        } catch (error) {
          this.#onError(key, error);
        }
        queue.shift();
        this.#depth--;
      }
      this.#finished(key);
    } finally {
      this.#workers.delete(key);
      this.#running--;
      const next = this.#waiting.shift();
      if (next !== undefined) this.#start(next);
    }
  }

  /** Forgets a key without work; tells those waiting for room when there is. */
  #finished(key: string): void {
    this.#queues.delete(key);
    if (!this.#queues.size) this.#activity?.idle();
    if (!this.#roomWaiters.length || this.#queues.size >= this.#backlog) return;
    const waiters = this.#roomWaiters;
    this.#roomWaiters = [];
    for (const resolve of waiters) resolve();
  }
}
