/**
 * A producer that pushes its items into a sink, read with `for await` instead: one item at a time,
 * the producer held at its sink until the reader asks for the next.
 *
 * Producers that push are the cheaper form on a hot path (an async generator's `yield`, and each
 * `yield*` that passes it on, cost promises per item); a reader that pulls is the convenient form
 * everywhere else. This makes the second from the first.
 *
 * @module
 */

import { linkSignals } from "./signals.ts";

/** Takes one item; the producer goes on when the promise it returns settles (or at once without one). */
export type Sink<T> = (item: T) => Promise<void> | undefined;

/** Pushes items into the sink until it is done, fails, or the signal aborts. */
export type Producer<T> = (sink: Sink<T>, signal: AbortSignal) => Promise<void>;

/** The producer's end: done, or failed with an error. */
type End = { error?: unknown; failed: boolean };

/**
 * Runs the producer and yields its items in order. The producer's end ends the iteration (its
 * failure is thrown to the reader); the reader's end (`break`, `return()`, a throw) aborts the
 * producer's signal, releases a sink it waits at, and waits for it to end.
 *
 * @example
 * ```ts
 * import { pulled } from "./pulled.ts";
 * const counted: number[] = [];
 * for await (const n of pulled<number>(async (sink) => { for (const n of [1, 2]) await sink(n); })) counted.push(n);
 * console.assert(counted.join() === "1,2");
 * ```
 */
export async function* pulled<T>(
  produce: Producer<T>,
  signal?: AbortSignal,
): AsyncGenerator<T, void, undefined> {
  const stop = new AbortController();
  using linked = linkSignals(stop.signal, signal);
  let offered = Promise.withResolvers<T | End>();
  let taken = Promise.withResolvers<void>();
  // The items and the end go through one promise, which never rejects: a failure while the reader is
  // elsewhere must not be an unhandled rejection.
  let end: End | undefined;
  const sink: Sink<T> = (item) => {
    offered.resolve(item);
    return taken.promise;
  };
  const running = produce(sink, linked.signal).then(
    () => offered.resolve(end = { failed: false }),
    (error: unknown) => offered.resolve(end = { error, failed: true }),
  );
  try {
    for (;;) {
      const item = await offered.promise;
      if (end && item === end) {
        if (end.failed) throw end.error;
        return;
      }
      offered = Promise.withResolvers();
      // While the reader has the item, the producer waits at `taken` (which a stop releases).
      yield item as T;
      const release = taken;
      taken = Promise.withResolvers();
      release.resolve();
    }
  } finally {
    stop.abort(new Error("the reader of the stream stopped"));
    taken.resolve();
    await running;
  }
}
