/**
 * Per-object queues: the events of one object are processed one at a time and in order, the
 * events of different objects concurrently. A worker exists only while its object has work.
 *
 * @module
 */

/**
 * Processes one item of a key; `more` says whether newer items of the same key are already
 * queued behind it (so that work only the latest state needs can be left to them).
 */
export type Processor<T> = (key: string, item: T, more: boolean) => Promise<void>;

/** A set of FIFO queues keyed by object, each drained by its own sequential worker. */
export class ObjectQueues<T> {
  readonly #queues = new Map<string, T[]>();
  readonly #workers = new Map<string, Promise<void>>();
  readonly #process: Processor<T>;
  readonly #onError: (key: string, error: unknown) => void;

  /**
   * @param process called for each item; never concurrently for the same key.
   * @param onError called when `process` throws; the worker goes on with the next item.
   */
  constructor(process: Processor<T>, onError: (key: string, error: unknown) => void) {
    this.#process = process;
    this.#onError = onError;
  }

  /** Queues an item for a key and starts the key's worker if it is idle. */
  push(key: string, item: T): void {
    const queue = this.#queues.get(key);
    if (queue) {
      queue.push(item);
      return;
    }
    this.#queues.set(key, [item]);
    const worker = this.#work(key).finally(() => this.#workers.delete(key));
    this.#workers.set(key, worker);
  }

  /** Waits until every worker is idle, or the signal aborts. */
  async drain(signal?: AbortSignal): Promise<void> {
    while (this.#workers.size && !signal?.aborted) {
      const aborted = new Promise<void>((resolve) =>
        signal?.addEventListener("abort", () => resolve(), { once: true })
      );
      await Promise.race([Promise.allSettled([...this.#workers.values()]), aborted]);
    }
  }

  async #work(key: string): Promise<void> {
    const queue = this.#queues.get(key)!;
    while (queue.length) {
      const item = queue[0];
      try {
        await this.#process(key, item, queue.length > 1);
      } catch (error) {
        this.#onError(key, error);
      }
      queue.shift();
    }
    this.#queues.delete(key);
  }
}
