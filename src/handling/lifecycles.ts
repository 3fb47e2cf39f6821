/**
 * Lifecycles: which of the handlers that are due run in a cycle. Kopf's `asap` runs one per
 * cycle (one patch per handler); our default runs all of them in one cycle and sends one patch.
 *
 * @module
 */

/** What a lifecycle knows about a handler that is due. */
export interface DueHandler {
  /** The handler id. */
  readonly id: string;
  /** Attempts made so far. */
  readonly retries: number;
}

/** Picks the handlers to run now, in order, from those that are due (in registration order). */
export type Lifecycle = <H extends DueHandler>(handlers: readonly H[]) => H[];

/** All due handlers, in registration order: one cycle, one patch (the default). */
export const allAtOnce: Lifecycle = <H extends DueHandler>(handlers: readonly H[]): H[] => [...handlers];

/** The first due handler only. */
export const oneByOne: Lifecycle = <H extends DueHandler>(handlers: readonly H[]): H[] => handlers.slice(0, 1);

/** One handler per cycle: the one retried least so far, the earliest registered among equals (Kopf's default). */
export const asap: Lifecycle = <H extends DueHandler>(handlers: readonly H[]): H[] => {
  let best = handlers[0];
  for (const handler of handlers) if (handler.retries < best.retries) best = handler;
  return best ? [best] : [];
};

/** One random due handler. */
export const randomized: Lifecycle = <H extends DueHandler>(handlers: readonly H[]): H[] =>
  handlers.length ? [handlers[Math.floor(Math.random() * handlers.length)]] : [];

/** All due handlers, in random order. */
export const shuffled: Lifecycle = <H extends DueHandler>(handlers: readonly H[]): H[] => {
  const result = [...handlers];
  for (let index = result.length - 1; index > 0; index--) {
    const other = Math.floor(Math.random() * (index + 1));
    [result[index], result[other]] = [result[other], result[index]];
  }
  return result;
};
