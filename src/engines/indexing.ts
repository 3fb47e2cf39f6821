/**
 * The indexing engine: runs the `kopf.index()` handlers for every watch event of an object and
 * keeps the operator's in-memory indexes up to date, handles indexers' errors by excluding the
 * object for a while or for good, and tells the operator when every indexed resource has been
 * listed and indexed once (handlers other than indexers wait for that).
 *
 * @module
 */

import type { KubernetesObject } from "../model/body.ts";
import { Patch } from "../model/patch.ts";
import type { Resource } from "../model/resource.ts";
import { type HandlerLogger, ObjectLogger } from "../logging/object_logger.ts";
import { type IndexContext, type Memo, resourceContext } from "../handling/context.ts";
import { runWithObject } from "../handling/current_object.ts";
import { PermanentError, TemporaryError } from "../handling/errors.ts";
import { matchesFilters } from "../handling/filters.ts";
import type { IndexHandler, ResourceHandler } from "../handling/handlers.ts";
import { type Index, type Indices, MutableIndex } from "../model/index_store.ts";
import { indexEntries, indexOwnerOf } from "../model/index_entries.ts";
import { TerseLogger } from "../logging/terse_logger.ts";

/** An object's failing streak with one indexer: kept in memory only, dropped on success. */
interface Failure {
  /** When the first failed attempt of the streak started (ms). */
  readonly started: number;
  /** How many attempts failed. */
  readonly retries: number;
  /** Until when the object is excluded from the index (ms); `Infinity` for good. */
  readonly until: number;
}

/** The parts of an indexer's context that the operator provides for an object. */
export interface IndexingParts {
  /** The object's memo (shared with its other handlers). */
  readonly memo: Memo;
  /** The resource the object belongs to. */
  readonly resource: Resource;
  /**
   * The logger to use; by default one that names the object and is never posted as a Kubernetes
   * Event. Whatever is given, informational lines are demoted to debug.
   */
  readonly logger?: HandlerLogger;
  /**
   * The `patch` handlers see. Indexers' patches are not applied (as in Kopf): a throwaway one by
   * default.
   */
  readonly patch?: Patch;
}

/** Options of {@linkcode OperatorIndexes}. */
export interface OperatorIndexesOptions {
  /** The clock in milliseconds since the epoch (tests give a fake one); `Date.now` by default. */
  readonly now?: () => number;
  /**
   * Where `execution.defaultBackoff` (seconds) is read when an arbitrary error of an indexer with
   * `errors: "temporary"` and no `backoff` needs it: the live operator settings, so that startup
   * handlers may change it. 60 seconds without settings.
   */
  readonly settings?: { readonly execution: { readonly defaultBackoff: number } };
}

/**
 * All in-memory indexes of one operator, by handler id, and the machinery that fills them.
 *
 * Create it when the operator starts, from its registry's handlers, before the startup handlers
 * run: every index exists (empty) from then on. Give {@linkcode indices} to every handler's
 * context. For each watch event of an object of an indexed resource, in the object's own queue
 * (one event of an object at a time), call {@linkcode indexObject}. Use {@linkcode expect},
 * {@linkcode listed} and {@linkcode whenReady} to hold the other handlers back until the initial
 * listings are indexed.
 *
 * @example
 * ```ts
 * const indexes = new OperatorIndexes(registry.handlers, { settings });
 * const handlers = indexes.handlersFor(resource);
 * indexes.expect("pods");
 * for (const body of listing) await indexes.indexObject(handlers, null, body, { memo, resource });
 * indexes.listed("pods");
 * await indexes.whenReady(); // then run the other handlers
 * ```
 */
export class OperatorIndexes {
  /** The indexes by id, read-only and frozen, for handlers' contexts (`indices`). */
  readonly indices: Indices;
  readonly #indexes = new Map<string, MutableIndex>();
  readonly #handlers: readonly IndexHandler[];
  readonly #failures = new Map<string, Map<string, Failure>>();
  readonly #now: () => number;
  readonly #settings: OperatorIndexesOptions["settings"];
  readonly #pending = new Set<string>();
  readonly #listed = new Set<string>();
  #waiters: (() => void)[] = [];

  /**
   * @param handlers the operator's resource handlers (e.g. `registry.handlers`): the index
   *   handlers among them define the indexes, one per distinct id; others are ignored.
   * @param options the clock and the settings.
   */
  constructor(handlers: Iterable<ResourceHandler>, options: OperatorIndexesOptions = {}) {
    this.#handlers = [...handlers].filter((handler): handler is IndexHandler => handler.kind === "index");
    this.#now = options.now ?? Date.now;
    this.#settings = options.settings;
    // A null prototype, so that `indices.toString` or `indices.constructor` are not mistaken for indexes.
    const indices: Record<string, Index> = Object.create(null);
    for (const handler of this.#handlers) {
      if (this.#indexes.has(handler.id)) continue;
      const index = new MutableIndex();
      this.#indexes.set(handler.id, index);
      this.#failures.set(handler.id, new Map());
      indices[handler.id] = index;
    }
    // Holds every declared index (registered as handlers), whatever users declared on `Indices`.
    this.indices = Object.freeze(indices) as Indices;
  }

  /** All index handlers, in registration order. */
  get handlers(): readonly IndexHandler[] {
    return this.#handlers;
  }

  /**
   * The index handlers of a resource, each id once (the first registered): what
   * {@linkcode indexObject} takes for the resource's objects. An empty list means the resource
   * is not indexed (no need to {@linkcode expect} its streams).
   */
  handlersFor(resource: Resource): IndexHandler[] {
    const seen = new Set<string>();
    return this.#handlers.filter((handler) => {
      if (seen.has(handler.id) || !handler.selector.matches(resource)) return false;
      seen.add(handler.id);
      return true;
    });
  }

  /**
   * Indexes one watch event of one object with the given handlers (those of its resource, from
   * {@linkcode handlersFor}), one handler after another. `DELETED` removes the object's values
   * (and forgets its failures); otherwise each handler's filters are checked against the body
   * (no match: its values are removed), then the handler is called (unless the object is
   * excluded after failures) and its result replaces the object's values in its index. Errors of
   * indexers are handled here, by their `errors` mode, and logged; this never throws for them.
   *
   * Call it for one object at a time (from the object's queue): two events of the same object
   * indexed concurrently could finish in the wrong order and leave the older values.
   *
   * @param type `ADDED`, `MODIFIED`, `DELETED`, or `null` for an object found by a listing.
   * @throws {Error} if a handler was not among those the indexes were created from.
   */
  async indexObject(
    handlers: readonly IndexHandler[],
    type: string | null,
    body: KubernetesObject,
    parts: IndexingParts,
  ): Promise<void> {
    const owner = indexOwnerOf(body);
    for (const handler of handlers) this.#indexOf(handler);
    if (type === "DELETED") {
      for (const handler of handlers) this.#removeOwner(handler.id, owner);
      return;
    }
    if (handlers.length === 0) return;
    const logger = new TerseLogger(parts.logger ?? new ObjectLogger(body, { local: true }));
    const patch = parts.patch ?? new Patch();
    for (const handler of handlers) {
      const context: IndexContext = resourceContext(body, {
        patch,
        logger,
        memo: parts.memo,
        resource: parts.resource,
        param: handler.options.param,
        indices: this.indices,
      });
      await this.#run(handler, owner, body, context, logger);
    }
  }

  /**
   * Removes an object's values from every index (or those of the given handlers) and forgets its
   * failures: for objects that are gone without a `DELETED` event (e.g. missing from a re-listing,
   * their stream stopped, or now another shard's).
   */
  forget(body: KubernetesObject, handlers?: readonly IndexHandler[]): void {
    const owner = indexOwnerOf(body);
    const ids = handlers ? handlers.map((handler) => handler.id) : this.#indexes.keys();
    for (const id of ids) this.#removeOwner(id, owner);
  }

  /**
   * Declares streams (or any other things, by a key of the caller's choice) whose initial listing
   * must be indexed before {@linkcode whenReady} resolves. Call it for every stream of an indexed
   * resource before any stream starts, so that readiness is not declared between two of them.
   * Keys already {@linkcode listed} are not expected again: only initial listings count.
   */
  expect(...keys: string[]): void {
    for (const key of keys) if (!this.#listed.has(key)) this.#pending.add(key);
  }

  /**
   * Says that a stream's initial listing has been fully indexed -- or that the stream stopped
   * before it could be (so that it does not block readiness forever).
   */
  listed(key: string): void {
    this.#listed.add(key);
    if (!this.#pending.delete(key) || this.#pending.size) return;
    const waiters = this.#waiters;
    this.#waiters = [];
    for (const wake of waiters) wake();
  }

  /** Whether no expected stream is waiting for its initial listing to be indexed. */
  get isReady(): boolean {
    return this.#pending.size === 0;
  }

  /** The expected streams not yet listed (for logs and diagnostics). */
  get pending(): string[] {
    return [...this.#pending];
  }

  /**
   * Resolves once every expected stream has been {@linkcode listed} (at once if none is
   * pending); rejects with the signal's reason if the signal is aborted first.
   */
  whenReady(signal?: AbortSignal): Promise<void> {
    if (this.#pending.size === 0) return Promise.resolve();
    if (signal?.aborted) return Promise.reject(signal.reason);
    const { promise, resolve, reject } = Promise.withResolvers<void>();
    const onAbort = () => {
      this.#waiters = this.#waiters.filter((waiter) => waiter !== wake);
      reject(signal!.reason);
    };
    const wake = () => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    };
    this.#waiters.push(wake);
    signal?.addEventListener("abort", onAbort, { once: true });
    return promise;
  }

  #indexOf(handler: IndexHandler): MutableIndex {
    const index = this.#indexes.get(handler.id);
    if (!index) {
      throw new Error(
        `The index handler '${handler.id}' is unknown to the operator's indexes: ` +
          `they must be created from the same handlers.`,
      );
    }
    return index;
  }

  #removeOwner(id: string, owner: string): void {
    this.#indexes.get(id)?.remove(owner);
    this.#failures.get(id)?.delete(owner);
  }

  async #run(
    handler: IndexHandler,
    owner: string,
    body: KubernetesObject,
    context: IndexContext,
    logger: HandlerLogger,
  ): Promise<void> {
    const index = this.#indexOf(handler);
    const failures = this.#failures.get(handler.id)!;
    const start = this.#now();
    try {
      // Filter callbacks see what handlers see, without `param` (as in Kopf).
      const matched = matchesFilters(handler.options, "current", {
        body,
        context: () => ({ ...context, param: undefined }),
      });
      if (!matched) {
        index.remove(owner);
        return;
      }
      const failure = failures.get(owner);
      if (failure) {
        if (start < failure.until) return; // excluded: its values were removed when it failed
        const { timeout } = handler.options;
        if (timeout !== undefined && start - failure.started >= timeout * 1000) {
          failures.set(owner, { ...failure, until: Infinity });
          logger.error(`Indexing handler '${handler.id}' has timed out after ${timeout}s; excluded for good.`);
          return;
        }
      }
      const result = await runWithObject(body, () => handler.fn(context));
      const entries = indexEntries(result);
      if (entries !== null) index.replace(owner, entries);
      failures.delete(owner);
      logger.debug(`Indexing handler '${handler.id}' succeeded.`);
    } catch (error) {
      this.#failed(handler, owner, index, failures, error, start, logger);
    }
  }

  #failed(
    handler: IndexHandler,
    owner: string,
    index: MutableIndex,
    failures: Map<string, Failure>,
    error: unknown,
    start: number,
    logger: HandlerLogger,
  ): void {
    const { id, options } = handler;
    const explicit = error instanceof TemporaryError || error instanceof PermanentError;
    const mode = error instanceof PermanentError
      ? "permanent"
      : error instanceof TemporaryError
      ? "temporary"
      : options.errors ?? "ignored";
    if (mode === "ignored") {
      logger.exception(`Indexing handler '${id}' failed with an exception; its values are kept.`, error);
      return;
    }
    index.remove(owner);
    const prior = failures.get(owner);
    const started = prior?.started ?? start;
    const retries = (prior?.retries ?? 0) + 1;
    const message = error instanceof Error ? error.message : String(error);
    const report = (text: string, level: "warning" | "error") => {
      if (!explicit) logger.exception(text, error);
      else if (level === "warning") logger.warning(text);
      else logger.error(text);
    };
    const forGood = (why: string) => {
      failures.set(owner, { started, retries, until: Infinity });
      report(`Indexing handler '${id}' ${why}; excluded for good.`, "error");
    };
    if (mode === "permanent") return forGood(`failed permanently: ${message}`);

    const delay = error instanceof TemporaryError
      ? error.delay
      : options.backoff ?? this.#settings?.execution.defaultBackoff ?? 60;
    const now = this.#now();
    if (options.retries !== undefined && retries >= options.retries) {
      return forGood(`failed temporarily (${message}) and has used up its ${options.retries} retries`);
    }
    if (options.timeout !== undefined && now - started >= options.timeout * 1000) {
      return forGood(`failed temporarily (${message}) and has timed out after ${options.timeout}s`);
    }
    failures.set(owner, { started, retries, until: now + delay * 1000 });
    report(
      `Indexing handler '${id}' failed temporarily: ${message}; excluded for ${delay}s (re-indexed at its first event after that).`,
      "warning",
    );
  }
}
