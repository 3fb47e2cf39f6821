/**
 * A map with a size bound that forgets the least recently used entries first.
 *
 * @module
 */

/**
 * A bounded map: reading or writing a key makes it the most recently used; adding a key beyond
 * the capacity evicts the least recently used one.
 *
 * @example
 * ```ts
 * import { LruMap } from "./lru.ts";
 * const lru = new LruMap<string, number>(2);
 * lru.set("a", 1);
 * lru.set("b", 2);
 * lru.get("a");     // "a" is now the most recently used
 * lru.set("c", 3);  // evicts "b"
 * console.assert(!lru.has("b") && lru.has("a") && lru.has("c"));
 * ```
 */
export class LruMap<K, V> {
  /** The most entries kept. */
  readonly capacity: number;
  // A Map iterates in insertion order: re-inserting a key moves it to the end (most recent).
  readonly #entries = new Map<K, V>();

  /**
   * Creates an empty map.
   *
   * @param capacity the most entries kept; at least 1.
   */
  constructor(capacity: number) {
    if (!Number.isInteger(capacity) || capacity < 1) {
      throw new RangeError(`The capacity of an LruMap must be a positive integer, got ${capacity}.`);
    }
    this.capacity = capacity;
  }

  /** How many entries are kept. */
  get size(): number {
    return this.#entries.size;
  }

  /** The value of a key, which becomes the most recently used; `undefined` if absent. */
  get(key: K): V | undefined {
    if (!this.#entries.has(key)) return undefined;
    const value = this.#entries.get(key)!;
    this.#entries.delete(key);
    this.#entries.set(key, value);
    return value;
  }

  /** Whether the key is kept (without making it recently used). */
  has(key: K): boolean {
    return this.#entries.has(key);
  }

  /** Stores a value as the most recently used; evicts the least recently used entry when full. */
  set(key: K, value: V): this {
    this.#entries.delete(key);
    this.#entries.set(key, value);
    while (this.#entries.size > this.capacity) {
      const oldest = this.#entries.keys().next().value as K;
      this.#entries.delete(oldest);
    }
    return this;
  }

  /** Forgets a key; returns whether it was kept. */
  delete(key: K): boolean {
    return this.#entries.delete(key);
  }

  /** Forgets everything. */
  clear(): void {
    this.#entries.clear();
  }
}
