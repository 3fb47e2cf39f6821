/**
 * The data structure behind `kopf.index()`: an {@linkcode Index} maps keys (compared by value,
 * tuples allowed) to {@linkcode Store}s of values, one value per contributing object and key.
 * Handlers only read it; the indexing engine rewrites one object's contributions at a time.
 *
 * @module
 */

/**
 * A key of an index: `null` (for indexers that return a non-object value), a string, number,
 * boolean or bigint, or an array (a tuple) or plain object of such keys. Arrays and objects are
 * compared by value: `["default", "web"]` finds what was stored under another array with the same
 * items. `undefined` counts as `null`.
 */
export type IndexKey = unknown;

/**
 * All indexes of an operator by id (the handler id of each `kopf.index()` handler), as handlers
 * see them in `indices`; every index exists from the start, empty until objects are indexed.
 * An operator may declare the types of its indexes by merging into this interface.
 *
 * @example
 * ```ts
 * import * as kopf from "@kopf/kopf";
 * declare module "@kopf/kopf" {
 *   interface Indices {
 *     readonly podPhases: kopf.Index<string, string>;
 *   }
 * }
 * kopf.index("pods", function podPhases({ name, status }) {
 *   return { [name]: String(status.phase) };
 * });
 * kopf.on.probe(function runningPods({ indices }) {
 *   return [...indices.podPhases].filter(([, phases]) => [...phases].includes("Running")).length;
 * });
 * ```
 */
export interface Indices {
  /** The index of the `kopf.index()` handler with this id. */
  readonly [id: string]: Index;
}

/**
 * The values stored under one key of an {@linkcode Index}: a read-only collection, one value per
 * object that contributed to this key (duplicate values are possible, the order is not
 * guaranteed). A store is never empty: the key disappears when its last value does. It is a live
 * view: spread it (`[...store]`) to keep a snapshot.
 *
 * @example
 * ```ts
 * import * as kopf from "@kopf/kopf";
 * kopf.timer("kopfexamples", { interval: 10 }, function count({ indices }) {
 *   const pods = indices.byNamespace.get("default");
 *   return { pods: pods ? [...pods] : [] };
 * });
 * ```
 */
export interface Store<V = unknown> extends Iterable<V> {
  /** How many values it holds. */
  readonly size: number;
  /** The values. */
  values(): IterableIterator<V>;
  /** The values, in the same order. */
  [Symbol.iterator](): IterableIterator<V>;
}

/**
 * An in-memory index built by a `kopf.index()` handler, available to handlers as
 * `indices[id]`: a read-only mapping from keys to {@linkcode Store}s. Keys are compared by value
 * (see {@linkcode IndexKey}); `get` and `keys` give back the keys as the indexer returned them
 * (frozen copies). Lookups are O(1). Keys without values are removed. It is a live view of the
 * current state.
 *
 * @typeParam V The type of the values.
 * @typeParam K The type of the keys.
 *
 * @example
 * ```ts
 * import * as kopf from "@kopf/kopf";
 * kopf.index("pods", function byNamespace({ namespace, name }) {
 *   return { [namespace]: name };
 * });
 * kopf.on.create("kopfexamples", ({ indices, namespace }) => {
 *   const names = indices.byNamespace as kopf.Index<string, string>;
 *   return { neighbours: [...names.get(namespace, [])] };
 * });
 * ```
 */
export interface Index<V = unknown, K = IndexKey> extends Iterable<[K, Store<V>]> {
  /** How many keys it has. */
  readonly size: number;
  /** The store of a key, or `undefined` when no object contributed to it. */
  get(key: K): Store<V> | undefined;
  /** The store of a key, or `fallback` when no object contributed to it (e.g. `[]`). */
  get<D>(key: K, fallback: D): Store<V> | D;
  /** Whether any object contributed to the key. */
  has(key: K): boolean;
  /** The keys. */
  keys(): IterableIterator<K>;
  /** The stores, in the order of the keys. */
  values(): IterableIterator<Store<V>>;
  /** `[key, store]` pairs. */
  entries(): IterableIterator<[K, Store<V>]>;
  /** `[key, store]` pairs. */
  [Symbol.iterator](): IterableIterator<[K, Store<V>]>;
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (typeof value !== "object" || value === null) return false;
  const proto = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}

function unsupported(key: unknown): TypeError {
  const what = typeof key === "object" ? (key as object).constructor?.name ?? "object" : typeof key;
  return new TypeError(
    `An index key must be null, a string, number, boolean, bigint, or an array or plain object of those; got ${what}.`,
  );
}

/**
 * The canonical text of a key: equal for keys equal by value (object entries sorted, `-0` as `0`,
 * `undefined` as `null`), different for different types (`1` vs `"1"`).
 *
 * @throws {TypeError} for values that cannot be keys (functions, symbols, class instances).
 */
export function encodeIndexKey(key: IndexKey): string {
  switch (typeof key) {
    case "undefined":
      return "null";
    case "string":
      return JSON.stringify(key);
    case "number":
      return String(key); // String(-0) is "0"; NaN and Infinity stay distinct from null.
    case "boolean":
      return key ? "true" : "false";
    case "bigint":
      return `${key}n`;
    case "object":
      if (key === null) return "null";
      if (Array.isArray(key)) return `[${key.map(encodeIndexKey).join(",")}]`;
      if (isPlainObject(key)) {
        const names = Object.keys(key).filter((name) => key[name] !== undefined).sort();
        return `{${names.map((name) => `${JSON.stringify(name)}:${encodeIndexKey(key[name])}`).join(",")}}`;
      }
  }
  throw unsupported(key);
}

/** A frozen copy of a key, so that users mutating what they returned cannot corrupt the index. */
function frozenKey(key: IndexKey): IndexKey {
  if (key === undefined) return null;
  if (Array.isArray(key)) return Object.freeze(key.map(frozenKey));
  if (isPlainObject(key)) {
    const copy: Record<string, unknown> = {};
    for (const [name, value] of Object.entries(key)) if (value !== undefined) copy[name] = frozenKey(value);
    return Object.freeze(copy);
  }
  return key;
}

/** The encoding, or `undefined` for values that can never be keys (so lookups just miss). */
function tryEncode(key: IndexKey): string | undefined {
  try {
    return encodeIndexKey(key);
  } catch {
    return undefined;
  }
}

/** A {@linkcode Store} that the engine fills: one value per contributing object. */
class ValueStore<V> implements Store<V> {
  readonly #values = new Map<string, V>();

  get size(): number {
    return this.#values.size;
  }

  values(): IterableIterator<V> {
    return this.#values.values();
  }

  [Symbol.iterator](): IterableIterator<V> {
    return this.#values.values();
  }

  /** For `JSON.stringify()` and logs: the values as an array. */
  toJSON(): V[] {
    return [...this.#values.values()];
  }

  /** Sets the value of one owner (the engine's side). */
  set(owner: string, value: V): void {
    this.#values.set(owner, value);
  }

  /** Removes the value of one owner (the engine's side). */
  delete(owner: string): void {
    this.#values.delete(owner);
  }
}

/** One value an object contributes: under which key (encoded and as given), and what. */
export interface IndexEntry {
  /** The canonical encoding of the key ({@linkcode encodeIndexKey}). */
  readonly encoded: string;
  /** The key as the indexer returned it. */
  readonly key: IndexKey;
  /** The value. */
  readonly value: unknown;
}

interface Slot {
  readonly key: IndexKey;
  readonly store: ValueStore<unknown>;
}

/**
 * The engine's side of an {@linkcode Index}: it replaces or removes all values of one object
 * (the owner) at a time, in O(keys of that object), by remembering which keys each owner
 * contributed to. Handlers receive it typed as the read-only {@linkcode Index}.
 */
export class MutableIndex implements Index<unknown, IndexKey> {
  readonly #slots = new Map<string, Slot>();
  readonly #owned = new Map<string, readonly string[]>();

  /** How many keys it has. */
  get size(): number {
    return this.#slots.size;
  }

  /** The store of a key; `fallback` (`undefined` by default) when absent. */
  get(key: IndexKey): Store<unknown> | undefined;
  get<D>(key: IndexKey, fallback: D): Store<unknown> | D;
  get<D>(key: IndexKey, fallback?: D): Store<unknown> | D | undefined {
    const encoded = tryEncode(key);
    const slot = encoded === undefined ? undefined : this.#slots.get(encoded);
    return slot ? slot.store : fallback;
  }

  /** Whether the key has values. */
  has(key: IndexKey): boolean {
    const encoded = tryEncode(key);
    return encoded !== undefined && this.#slots.has(encoded);
  }

  /** The keys (frozen copies of what the indexers returned). */
  *keys(): IterableIterator<IndexKey> {
    for (const slot of this.#slots.values()) yield slot.key;
  }

  /** The stores. */
  *values(): IterableIterator<Store<unknown>> {
    for (const slot of this.#slots.values()) yield slot.store;
  }

  /** `[key, store]` pairs. */
  *entries(): IterableIterator<[IndexKey, Store<unknown>]> {
    for (const slot of this.#slots.values()) yield [slot.key, slot.store];
  }

  /** `[key, store]` pairs. */
  [Symbol.iterator](): IterableIterator<[IndexKey, Store<unknown>]> {
    return this.entries();
  }

  /** For `JSON.stringify()` and logs: `[key, values[]]` pairs (keys may be tuples, so not an object). */
  toJSON(): [IndexKey, unknown[]][] {
    return [...this.#slots.values()].map((slot) => [slot.key, [...slot.store]]);
  }

  /** Whether an owner has values here. */
  owns(owner: string): boolean {
    return this.#owned.has(owner);
  }

  /**
   * Replaces all values of an owner with the given entries (the last entry wins for equal keys);
   * keys the owner no longer contributes to lose its value, and disappear if that was the last.
   */
  replace(owner: string, entries: Iterable<IndexEntry>): void {
    const fresh = new Set<string>();
    for (const { encoded, key, value } of entries) {
      let slot = this.#slots.get(encoded);
      if (!slot) {
        slot = { key: frozenKey(key), store: new ValueStore() };
        this.#slots.set(encoded, slot);
      }
      slot.store.set(owner, value);
      fresh.add(encoded);
    }
    for (const encoded of this.#owned.get(owner) ?? []) {
      if (!fresh.has(encoded)) this.#drop(owner, encoded);
    }
    if (fresh.size) this.#owned.set(owner, [...fresh]);
    else this.#owned.delete(owner);
  }

  /** Removes all values of an owner. */
  remove(owner: string): void {
    for (const encoded of this.#owned.get(owner) ?? []) this.#drop(owner, encoded);
    this.#owned.delete(owner);
  }

  #drop(owner: string, encoded: string): void {
    const slot = this.#slots.get(encoded);
    if (!slot) return;
    slot.store.delete(owner);
    if (slot.store.size === 0) this.#slots.delete(encoded);
  }
}
