/**
 * Aggregation of repeated identical Events, as client-go's recorder does it: the first
 * occurrence is created, repeats within a window increment the `count` of that Event. The memory
 * of posted Events is bounded (least recently seen are forgotten first).
 *
 * @module
 */

import { LruMap } from "../utils/lru.ts";
import type { ObjectReference } from "../model/references.ts";

/** An Event already posted, which identical repeats may update. */
export interface PostedEvent {
  /** Its namespace. */
  readonly namespace: string;
  /** Its name, as the API server generated it. */
  readonly name: string;
  /** The occurrences it counts so far. */
  readonly count: number;
  /** When its last counted occurrence happened (ms since the epoch). */
  readonly last: number;
}

/** Options of an {@linkcode EventAggregator}. */
export interface EventAggregatorOptions {
  /**
   * Seconds from an occurrence within which an identical one is aggregated; `0` disables
   * aggregation. A function is read on every lookup (live settings).
   */
  window: number | (() => number);
  /** How many distinct Events are remembered. */
  capacity: number;
}

/**
 * The identity of an Event for aggregation: the object (its uid, and for objects without one,
 * its apiVersion, kind, namespace and name), the type, the reason and the message.
 */
export function eventKey(ref: ObjectReference, type: string, reason: string, message: string): string {
  return JSON.stringify([
    ref.uid ?? "",
    ref.apiVersion ?? "",
    ref.kind ?? "",
    ref.namespace ?? "",
    ref.name ?? "",
    type,
    reason,
    message,
  ]);
}

/** Remembers posted Events by their {@linkcode eventKey} and decides whether a repeat updates one. */
export class EventAggregator {
  readonly #posted: LruMap<string, PostedEvent>;
  readonly #window: () => number;

  /** Creates an empty memory with a window and a capacity. */
  constructor(options: EventAggregatorOptions) {
    const window = options.window;
    this.#window = typeof window === "function" ? window : () => window;
    this.#posted = new LruMap(options.capacity);
  }

  /** How many Events are remembered. */
  get size(): number {
    return this.#posted.size;
  }

  /**
   * The posted Event that an occurrence at `at` (ms) should update: one with the same key whose
   * last occurrence is at most the window before; `undefined` if a new Event is due (then any
   * stale memory of the key is dropped).
   */
  lookup(key: string, at: number): PostedEvent | undefined {
    const posted = this.#posted.get(key);
    if (posted === undefined) return undefined;
    const window = this.#window();
    if (window > 0 && at - posted.last <= window * 1000) return posted;
    this.#posted.delete(key);
    return undefined;
  }

  /** Remembers the state of a posted Event after a successful create or patch. */
  record(key: string, posted: PostedEvent): void {
    if (this.#window() > 0) this.#posted.set(key, posted);
  }

  /** Forgets an Event (e.g. when it is gone from the API server). */
  forget(key: string): void {
    this.#posted.delete(key);
  }
}
