/**
 * The poster of Kubernetes Events: one per operator, fed without waiting by `kopf.event()` & co.
 * and by object-related log lines, sending one request at a time in the background. Identical
 * repeats are coalesced while queued and aggregated into the Event already posted (its `count`);
 * failures are logged and the Event is dropped -- Events never fail the handling of objects.
 *
 * @module
 */

import { getLogger } from "@logtape/logtape";
import { ApiClient } from "../api/client.ts";
import { ApiNotFoundError, describeCause } from "../api/errors.ts";
import { type EventWriter, eventWriter } from "../api/events.ts";
import type { ObjectReference } from "../model/references.ts";
import { PostingSettings } from "../settings/posting.ts";
import { EventAggregator, eventKey } from "./event_aggregation.ts";
import { buildEventBody, type EventFields, eventNamespace, formatTime, truncateMessage } from "./event_body.ts";
import { processGlobal } from "../utils/process_global.ts";
import { untilSettledOrAborted } from "../utils/signals.ts";

// Not an object logger: a failure to post must not produce yet another Event.
const logger = getLogger(["kopf", "posting"]);

/** What an Event says; the object it is about is given separately. */
export interface EventContent {
  /** `Normal`, `Warning`, `Error`, or any other type. */
  type: string;
  /** A short CamelCase reason, e.g. `Logging`, `Created`. */
  reason: string;
  /** A human-readable message; cut in the middle if longer than the API server accepts. */
  message: string;
}

/** Options of an {@linkcode EventPoster}. */
export interface EventPosterOptions {
  /** The namespace of Events about cluster-scoped objects; the client's credentials' default namespace, else `default`. */
  defaultNamespace?: string;
  /** The clock (ms since the epoch); `Date.now` by default. For tests. */
  now?: () => number;
}

/** An Event waiting to be sent, standing for `count` identical occurrences. */
interface Pending extends EventFields {
  key: string;
}

/** The posters made and not closed yet, in any copy of the library (see {@linkcode postsLogRecords}). */
const open = processGlobal("open-posters", 1, () => new Set<EventPoster>());

/**
 * Whether any open poster posts log lines (`settings.posting.enabled` and `loggers`, read live):
 * the posting sink asks before it looks for the current poster, an async context's lookup per log
 * record, which finds nothing to do with the default settings (log lines are not posted).
 */
export function postsLogRecords(): boolean {
  for (const poster of open) if (poster.settings.enabled && poster.settings.loggers) return true;
  return false;
}

/**
 * Sends Events in the background, one request at a time. {@linkcode EventPoster.enqueue} never
 * blocks and never throws; the first occurrence of an Event is created (POST), identical repeats
 * within `settings.aggregationWindow` update it (PATCH of `count` and `lastTimestamp`), and
 * repeats that arrive while an earlier one is queued or being sent are merged into one request.
 *
 * @example
 * ```ts ignore
 * const poster = new EventPoster(client, settings.posting);
 * poster.enqueue({ apiVersion: "v1", kind: "Pod", name: "p", uid: "...", namespace: "ns" },
 *   { type: "Normal", reason: "Hello", message: "world" });
 * await poster.close(); // sends what is queued (for up to 5 s)
 * ```
 */
export class EventPoster implements AsyncDisposable {
  /** The live settings: read at every Event (e.g. changed by startup handlers). */
  readonly settings: PostingSettings;
  readonly #writer: EventWriter;
  readonly #aggregator: EventAggregator;
  readonly #defaultNamespace: string | undefined;
  readonly #now: () => number;
  readonly #queue: Pending[] = [];
  readonly #queued = new Map<string, Pending>();
  readonly #abort = new AbortController();
  #sending: Promise<void> | undefined;
  #closed = false;

  /**
   * Creates a poster; nothing is sent until the first Event is queued.
   *
   * @param client the API client (or anything that writes Events, for tests).
   * @param settings the live posting settings; `aggregationCacheSize` is read here, once.
   */
  constructor(
    client: ApiClient | EventWriter,
    settings: PostingSettings = new PostingSettings(),
    options: EventPosterOptions = {},
  ) {
    this.settings = settings;
    this.#writer = client instanceof ApiClient ? eventWriter(client) : client;
    this.#defaultNamespace = options.defaultNamespace ??
      (client instanceof ApiClient ? client.credentials.defaultNamespace : undefined);
    this.#now = options.now ?? Date.now;
    this.#aggregator = new EventAggregator({
      window: () => this.settings.aggregationWindow,
      capacity: settings.aggregationCacheSize,
    });
    open.add(this);
  }

  /**
   * Queues an Event about an object and returns at once. Events about Events are dropped (they
   * would feed on themselves), and so is everything after {@linkcode EventPoster.close}.
   * Filtering by `settings.enabled`/`level` is the caller's business.
   */
  enqueue(ref: ObjectReference, content: EventContent): void {
    if (ref.apiVersion === "v1" && ref.kind === "Event") return;
    if (this.#closed) {
      logger.debug("An event is dropped: the poster is closed. Event: {reason}: {message}", { ...content });
      return;
    }
    const message = truncateMessage(content.message);
    const namespace = eventNamespace(ref, this.#defaultNamespace);
    const key = eventKey({ ...ref, namespace }, content.type, content.reason, message);
    const now = this.#now();
    const queued = this.settings.aggregationWindow > 0 ? this.#queued.get(key) : undefined;
    if (queued !== undefined) {
      queued.count++;
      queued.last = now;
      return;
    }
    const pending = {
      key,
      ref,
      namespace,
      type: content.type,
      reason: content.reason,
      message,
      count: 1,
      first: now,
      last: now,
    };
    this.#queue.push(pending);
    this.#queued.set(key, pending);
    this.#start();
  }

  /** How many Events wait to be sent (not counting one being sent). */
  get queued(): number {
    return this.#queue.length;
  }

  /** Whether nothing is queued or being sent. */
  get idle(): boolean {
    return this.#sending === undefined && this.#queue.length === 0;
  }

  /** Resolves once everything queued so far (and since) is sent, or when the signal aborts. */
  async flush(signal?: AbortSignal): Promise<void> {
    while (this.#sending !== undefined && !signal?.aborted) {
      await untilSettledOrAborted(this.#sending, signal);
    }
  }

  /**
   * Stops accepting Events, sends what is queued for up to `timeout` seconds, then abandons the
   * rest (logged) and cancels the request in flight.
   */
  async close(timeout = 5): Promise<void> {
    this.#closed = true;
    open.delete(this);
    await this.flush(AbortSignal.timeout(timeout * 1000));
    if (this.idle) return;
    const dropped = this.#queue.length + (this.#sending === undefined ? 0 : 1);
    this.#queue.length = 0;
    this.#queued.clear();
    this.#abort.abort(new Error("The event poster is closed."));
    logger.warn("{dropped} event(s) were not posted within {timeout} s of stopping; they are dropped.", {
      dropped,
      timeout,
    });
    await this.#sending;
  }

  /** Same as {@linkcode EventPoster.close} with the default timeout. */
  [Symbol.asyncDispose](): Promise<void> {
    return this.close();
  }

  #start(): void {
    if (this.#sending !== undefined) return;
    this.#sending = this.#sendAll().finally(() => {
      this.#sending = undefined;
      if (this.#queue.length && !this.#abort.signal.aborted) this.#start();
    });
  }

  async #sendAll(): Promise<void> {
    // Let the caller's synchronous burst land in the queue first: identical ones merge.
    await Promise.resolve();
    while (this.#queue.length && !this.#abort.signal.aborted) {
      const pending = this.#queue.shift()!;
      this.#queued.delete(pending.key);
      try {
        await this.#send(pending);
      } catch (error) {
        if (this.#abort.signal.aborted) return;
        logger.warn(
          "Failed to post an event. Ignoring and continuing. {error} Event: type={type}, reason={reason}, message={message}",
          { error: describeCause(error), type: pending.type, reason: pending.reason, message: pending.message },
        );
      }
    }
  }

  async #send(pending: Pending): Promise<void> {
    const signal = this.#abort.signal;
    const posted = this.#aggregator.lookup(pending.key, pending.first);
    if (posted !== undefined) {
      const count = posted.count + pending.count;
      try {
        const patched = await this.#writer.patch(
          posted.namespace,
          posted.name,
          { count, lastTimestamp: formatTime(pending.last) },
          signal,
        );
        const stored = typeof patched?.count === "number" ? patched.count : count;
        this.#aggregator.record(pending.key, { ...posted, count: stored, last: pending.last });
        return;
      } catch (error) {
        // Events expire (kube-apiserver's --event-ttl, 1 h by default): then post it anew.
        if (!(error instanceof ApiNotFoundError)) throw error;
        this.#aggregator.forget(pending.key);
      }
    }
    const created = await this.#writer.create(pending.namespace, buildEventBody(pending, this.settings), signal);
    const name = created?.metadata?.name;
    if (name) {
      this.#aggregator.record(pending.key, {
        namespace: pending.namespace,
        name,
        count: pending.count,
        last: pending.last,
      });
    }
  }
}
