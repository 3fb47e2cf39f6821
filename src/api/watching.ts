/**
 * Watch streams that never stall silently: list (streamed as the watch's first events where the
 * server can, see `streaming_lists.ts`; else by pages, with the watch open from the listing's
 * resourceVersion once its first page has come) and watch with bookmarks; resume from the last
 * seen resourceVersion after any disconnect; relist only when the server says 410 Gone, and then
 * deliver the deletions that happened meanwhile; detect a silent stream and resume it; back off on
 * every kind of failure (see `watch_failures.ts`), log repeated failures at a bounded rate, never
 * give up.
 *
 * @module
 */

import { linkSignals } from "../utils/signals.ts";
import { getLogger } from "@logtape/logtape";
import type { ApiClient } from "./client.ts";
import { ApiGoneError, describeCause } from "./errors.ts";
import { confirmDeletions } from "./deletion_confirmation.ts";
import { Listing } from "./listing.ts";
import { type Ahead, listAhead, type Outcome } from "./listing_ahead.ts";
import { endsInitialEvents, mayStream, refuseStreaming, streamingRejection } from "./streaming_lists.ts";
import { silence, silenceBound, WatchFailures } from "./watch_failures.ts";
import { WatchHealth } from "./watch_health.ts";
import type { WatchOptions, WatchScope } from "./watch_options.ts";
import { WatchRequests } from "./watch_requests.ts";
import { identityKey, type ObjectIdentity, remember, type WatchEvent, WatchState } from "./watch_state.ts";
import { LineReader } from "./lines.ts";
import type { KubernetesObject } from "../model/body.ts";
import { apiVersionOf, type Resource, resourceName } from "../model/resource.ts";
import { WatchingSettings } from "../settings/watching.ts";
import { kopfMetrics } from "../observability/metrics.ts";
import { recordWatchReconnect } from "../observability/stream_metrics.ts";
import { sleep } from "../utils/sleep.ts";

const logger = getLogger(["kopf", "watching"]);

export { type ObjectIdentity, type WatchEvent, WatchState } from "./watch_state.ts";
export { WatchHealth, type WatchVerdict } from "./watch_health.ts";
export type { WatchOptions, WatchScope } from "./watch_options.ts";

/** What a line of a watch response comes to, besides an event to deliver. */
type Receipt = "gone" | "listed" | "unstreamed" | undefined;

/**
 * One list+watch stream of one resource in one namespace (or cluster-wide), iterated with
 * `for await`. The iteration ends only when the signal aborts.
 *
 * @example
 * ```ts ignore
 * for await (const event of new Watcher(client, resource, { namespace: "default", signal })) {
 *   console.log(event.type, event.type === "LISTED" ? "" : event.object.metadata.name);
 * }
 * ```
 */
export class Watcher implements AsyncIterable<WatchEvent> {
  /** The resume point and the known objects; shared with whoever started the stream. */
  readonly state: WatchState;
  /** Whether the stream works. */
  readonly health: WatchHealth;
  readonly #client: ApiClient;
  readonly #resource: Resource;
  readonly #options: WatchOptions;
  readonly #settings: WatchingSettings;
  readonly #signal: AbortSignal;
  readonly #name: string;
  readonly #failures: WatchFailures;
  /** The pages and watch requests, with the stream's selectors (its `shardSelector` changes with its scope). */
  readonly #requests: WatchRequests;
  #accepts: ((uid: string) => boolean) | undefined;
  /** Ends the current attempt (listing or watch request) when the scope changes. */
  #attempt = new AbortController();
  /**
   * Whether the listing to come delivers objects it does not know as first seen (`type: null`):
   * the first listing, and one after a change of scope (until it completes); a relisting after 410
   * delivers them as `ADDED`.
   */
  #fresh: boolean;
  #revisit: ((uid: string) => boolean) | undefined;
  /** The next listing goes by pages: a streamed one did not complete (or streaming is off, or refused). */
  #paged = false;
  /** When the current watch request last delivered an object's event (ms since the epoch; 0: not yet). */
  #lastDelivery = 0;
  /** Watch requests made so far: each after the first is a reconnection. */
  #watches = 0;
  /** While a listing by pages is read with the watch already open (see `listing_ahead.ts`). */
  #ahead: Ahead | undefined;
  /**
   * The counts of this resource's watch events, by type: the metric's series, kept for each event to
   * add to. Without a prototype: the type is the server's text, and must not reach `Object.prototype`.
   */
  readonly #eventCounts: Record<string, { value: number }> = Object.create(null);

  /** Prepares a stream; nothing is requested until it is iterated. */
  constructor(client: ApiClient, resource: Resource, options: WatchOptions = {}) {
    this.#client = client;
    this.#resource = resource;
    this.#options = options;
    this.#settings = options.settings ?? new WatchingSettings();
    this.#signal = options.signal ?? new AbortController().signal;
    this.state = options.state ?? new WatchState();
    this.#accepts = options.accepts;
    this.#fresh = !this.state.listed;
    this.health = new WatchHealth(this.#settings.unhealthyAfter, this.#settings);
    this.#requests = new WatchRequests(client, resource, options, this.#settings);
    this.#name = resourceName(resource) + (options.namespace ? ` in ${options.namespace}` : "");
    this.#failures = new WatchFailures(this.#name, this.health, this.#settings, client);
  }

  /**
   * Changes which objects the stream is for, keeping what it knows of those it keeps: known objects
   * no longer accepted are forgotten, without an event, and returned; unless the scope is the same
   * for the server, the request in flight ends and the stream goes on with the new scope -- listing
   * again if told to (objects not known before then come as first seen), or watching on from where
   * it was.
   */
  rescope(scope: WatchScope): ObjectIdentity[] {
    const reselected = scope.shardSelector !== this.#requests.shardSelector;
    this.#requests.shardSelector = scope.shardSelector;
    this.#accepts = scope.accepts;
    const dropped: ObjectIdentity[] = [];
    if (scope.accepts) {
      for (const [uid, identity] of this.state.known) {
        if (scope.accepts(uid)) continue;
        this.state.known.delete(uid);
        dropped.push(identity);
      }
    }
    if (scope.relist) {
      this.state.resourceVersion = null;
      this.#fresh = true;
      // Objects to revisit that an unfinished listing has not reached yet are still to revisit.
      const [pending, revisit] = [this.#revisit, scope.revisit];
      this.#revisit = pending && revisit ? (uid) => pending(uid) || revisit(uid) : pending ?? revisit;
    }
    if (reselected || scope.relist) this.#attempt.abort(new Error(`the scope of the stream ${this.#name} changed`));
    return dropped;
  }

  /** Runs the stream: listing, watching, resuming, until the signal aborts. */
  async *[Symbol.asyncIterator](): AsyncGenerator<WatchEvent, void, undefined> {
    while (!this.#signal.aborted) {
      // A change of scope ends this attempt (and only it): the next one starts at once.
      const attempt = this.#attempt = new AbortController();
      using linked = linkSignals(attempt.signal, this.#signal);
      const signal = linked.signal;
      try {
        let started = Date.now();
        let resumedFrom = this.state.resourceVersion;
        let outcome = resumedFrom === null && !this.#streams() ? yield* this.#confirmed(this.#list(signal)) : undefined;
        if (outcome === undefined) {
          started = Date.now();
          resumedFrom = this.state.resourceVersion;
          outcome = yield* this.#confirmed(this.#watch(signal));
        }
        if (this.#signal.aborted) return;
        if (attempt.signal.aborted) continue;
        if (outcome === "gone") {
          this.#gone();
          continue;
        }
        if (outcome === "unstreamed") continue;
        const delay = this.#failures.pauseAfter({
          stalled: outcome === "stalled" || outcome === "quiet",
          connectionAnswered: outcome === "quiet",
          lasted: Date.now() - started,
          progressed: this.state.resourceVersion !== resumedFrom,
          lastDelivery: this.#lastDelivery,
        });
        await sleep(delay, this.#signal);
      } catch (error) {
        if (this.#signal.aborted) return;
        if (attempt.signal.aborted) continue;
        if (error instanceof ApiGoneError) {
          this.#gone();
          continue;
        }
        await sleep(this.#failures.failed(error), this.#signal);
      }
    }
  }

  /** The events, with the deletions of objects that only left the selection checked (see `confirmDeletions`). */
  #confirmed<R>(events: AsyncGenerator<WatchEvent, R, undefined>): AsyncGenerator<WatchEvent, R, undefined> {
    const selector = this.#options.labelSelector;
    if (!this.#options.confirmDeletions || !selector) return events;
    return confirmDeletions(events, this.#client, this.#resource, selector, this.#name, this.#signal);
  }

  /**
   * Lists all objects page by page, with the watch open from the first page and its events among the
   * listed objects (see `listing_ahead.ts` for why and for what it returns).
   */
  #list(attempt: AbortSignal): AsyncGenerator<WatchEvent, Outcome | undefined, undefined> {
    return listAhead({
      listing: () => this.#listing(),
      pages: {
        page: (token) => this.#requests.page(token, attempt),
        kind: this.#resource.kind,
        apiVersion: apiVersionOf(this.#resource),
      },
      watch: (signal, from) => this.#watch(signal, from),
      ahead: (ahead) => this.#ahead = ahead,
      completed: (resourceVersion) => this.#completed(resourceVersion),
      name: this.#name,
    }, attempt);
  }

  /** A listing that compares the objects with the known ones, in the stream's scope as it stands now. */
  #listing(): Listing {
    return new Listing({ known: this.state.known, fresh: this.#fresh, revisit: this.#revisit, accepts: this.#accepts });
  }

  /** The end of a listing (by pages or streamed): the watch goes on from its resourceVersion. */
  #completed(resourceVersion: string): WatchEvent {
    const relisting = this.state.listed;
    this.state.resourceVersion = resourceVersion;
    this.state.listed = true;
    this.#fresh = false;
    this.#revisit = undefined;
    this.#paged = false;
    this.#failures.alive();
    return { type: "LISTED", resourceVersion, relisted: relisting };
  }

  /** Whether the listing to come streams as the watch's first events. */
  #streams(): boolean {
    if (this.#paged || !this.#settings.streamingLists) return false;
    return mayStream(this.#client, apiVersionOf(this.#resource));
  }

  /**
   * One watch request from the resume point (`from`, the stream's by default), until it ends,
   * stalls, or the server says 410; with no resume point, its first events are the listing (the
   * server sends every object, then a bookmark with the resourceVersion to go on from).
   */
  async *#watch(
    attempt: AbortSignal,
    from: string | null = this.state.resourceVersion,
  ): AsyncGenerator<WatchEvent, Outcome, undefined> {
    if (this.#watches++) recordWatchReconnect(this.#resource.plural);
    let listing = from === null ? this.#listing() : undefined;
    let answered = false;
    this.#lastDelivery = 0;
    const request = new AbortController();
    using linked = linkSignals(request.signal, attempt);
    const signal = linked.signal;
    const clientTimeout = this.#settings.clientTimeout;
    const timer = clientTimeout === null ? undefined : setTimeout(() => request.abort(), clientTimeout * 1000);
    try {
      const response = await this.#requests.open(from, listing !== undefined, signal);
      this.health.connected();
      answered = true;
      if (!response.body) return "ended";
      using lines = new LineReader(response.body, silenceBound(this.#settings).seconds, signal);
      for (;;) {
        const line = await lines.next();
        // A line read after the end of the attempt belongs to the old scope: it must not move the resume point.
        if (line === "aborted" || line === null || attempt.aborted) return "ended";
        if (line === "timeout") {
          const bound = silenceBound(this.#settings).seconds;
          const kept = await this.#client.stalled(response, silence(this.#settings), bound);
          return kept ? "quiet" : "stalled";
        }
        const received = this.#receive(line, listing);
        if (received === undefined) continue;
        if (received === "gone") return "gone";
        if (received === "unstreamed") return this.#unstreamed("its first bookmark did not end the initial events");
        if (received !== "listed") {
          yield received;
          continue;
        }
        yield* listing!.deletions();
        yield this.#completed(this.state.resourceVersion ?? "");
        listing = undefined;
      }
    } catch (error) {
      const rejection = listing && streamingRejection(error);
      if (rejection === "refused") return this.#unstreamed(describeCause(error));
      if (rejection) {
        this.#paged = true;
        return "unstreamed";
      }
      // The client timeout is a planned end of the request, not a failure.
      if (request.signal.aborted && !attempt.aborted) return "ended";
      throw error;
    } finally {
      clearTimeout(timer);
      request.abort();
      // A streamed listing cut short once answered (ended, stalled, a plain watch) is listed by pages next.
      if (listing && answered && !attempt.aborted && !this.#paged) {
        this.#paged = true;
        logger.info("The listing of {name} through its watch request ended before its last object; listing by pages.", {
          name: this.#name,
        });
      }
    }
  }

  /**
   * A streamed listing that the server does not support: remembered (the other streams of its API
   * group version list by pages at once) and logged once.
   */
  #unstreamed(detail: string): Outcome {
    this.#paged = true;
    refuseStreaming(this.#client, apiVersionOf(this.#resource), detail);
    return "unstreamed";
  }

  /**
   * Decodes one line of a watch response; returns what to deliver, or what the line means for the
   * stream: `"gone"`; during a streamed listing, `"listed"` for its end (the resume point is set),
   * `"unstreamed"` for a bookmark that is not its end (the server sent a plain watch).
   */
  #receive(line: string, listing: Listing | undefined): WatchEvent | Receipt {
    const event = JSON.parse(line) as { type?: string; object?: KubernetesObject };
    const object = event.object;
    const type = event.type ?? "";
    // Counted into the series kept here, not looked up by labels: every event of every object.
    (this.#eventCounts[type] ??= kopfMetrics.watchEvents.seriesOf([this.#resource.plural, type])).value++;
    this.health.lastEvent = performance.now();
    if (event.type === "ERROR") {
      // Not a sign of life: a server that answers every watch with an ERROR event is failing.
      const status = object as unknown as { code?: number; message?: string; reason?: string };
      if (status?.code === 410) return "gone";
      throw new Error(`the server sent an error in the stream: ${status?.code} ${status?.reason}: ${status?.message}`);
    }
    this.#failures.alive();
    if (!object?.metadata) {
      logger.warn("Ignoring a malformed watch event of {name}: {line}", { name: this.#name, line: line.slice(0, 200) });
      return undefined;
    }
    if (listing) return this.#receiveListed(event.type, object, listing);
    const ahead = this.#ahead;
    if (object.metadata.resourceVersion) {
      // Amid a listing, the stream's resume point is still to list: the listing's end sets it.
      if (ahead) ahead.resume = object.metadata.resourceVersion;
      else this.state.resourceVersion = object.metadata.resourceVersion;
    }
    if (event.type === "BOOKMARK") return undefined;
    this.#lastDelivery = Date.now();
    const uid = object.metadata.uid ?? identityKey(object);
    if (this.#accepts?.(uid) === false) return undefined;
    switch (event.type) {
      case "ADDED":
      case "MODIFIED": {
        const delivered = ahead ? ahead.listing.overtake(uid, event.type, object) : { type: event.type, object };
        remember(this.state.known, uid, object);
        return delivered;
      }
      case "DELETED":
        ahead?.listing.overtake(uid, "DELETED", object);
        this.state.known.delete(uid);
        return { type: "DELETED", object };
      default:
        logger.warn("Ignoring an unsupported event type {type} of {name}.", { type: event.type, name: this.#name });
        return undefined;
    }
  }

  /**
   * An event of a streamed listing: an object compared with the known ones, or its end. The objects'
   * own resourceVersions are no resume point (they are not in order): the end's bookmark is.
   */
  #receiveListed(type: string | undefined, object: KubernetesObject, listing: Listing): WatchEvent | Receipt {
    if (type === "ADDED") return listing.offer(object);
    if (type !== "BOOKMARK") {
      // Only a server that ignored the request to stream sends these: its first bookmark ends the stream.
      logger.debug("Ignoring a {type} event of {name} amid its listing.", { type, name: this.#name });
      return undefined;
    }
    if (!endsInitialEvents(object)) return "unstreamed";
    this.state.resourceVersion = object.metadata.resourceVersion ?? "";
    return "listed";
  }

  #gone(): void {
    logger.info("The resourceVersion of {name} is gone (410); relisting.", { name: this.#name });
    this.state.resourceVersion = null;
    this.health.relists++;
  }
}
