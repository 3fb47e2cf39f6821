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
import { Arrival, Doorbell } from "../utils/arrivals.ts";
import { getLogger } from "@logtape/logtape";
import type { ApiClient } from "./client.ts";
import { ApiGoneError, describeCause } from "./errors.ts";
import { confirmDeletions } from "./deletion_confirmation.ts";
import { type ListedPage, Listing, listPages } from "./listing.ts";
import {
  endsInitialEvents,
  mayStream,
  refuseStreaming,
  STREAMING_QUERY,
  streamingRejection,
} from "./streaming_lists.ts";
import { silence, silenceBound, WatchFailures } from "./watch_failures.ts";
import { WatchHealth } from "./watch_health.ts";
import { identityKey, type ObjectIdentity, remember, type WatchEvent, WatchState } from "./watch_state.ts";
import { LineReader } from "./lines.ts";
import { resourcePath } from "./paths.ts";
import type { KubernetesList, KubernetesObject } from "../model/body.ts";
import { apiVersionOf, type Resource, resourceName } from "../model/resource.ts";
import { WatchingSettings } from "../settings/watching.ts";
import { kopfMetrics } from "../observability/metrics.ts";
import { recordWatchReconnect } from "../observability/stream_metrics.ts";
import { sleep } from "../utils/sleep.ts";

const logger = getLogger(["kopf", "watching"]);

export { type ObjectIdentity, type WatchEvent, WatchState } from "./watch_state.ts";
export { WatchHealth, type WatchVerdict } from "./watch_health.ts";

/** Options of a watch stream. */
export interface WatchOptions {
  /** The namespace to watch; absent or `null` for all namespaces (and for cluster-scoped resources). */
  namespace?: string | null;
  /** A label selector passed to the server. */
  labelSelector?: string;
  /** A field selector passed to the server. */
  fieldSelector?: string;
  /**
   * A `shardSelector` passed to the server (Kubernetes 1.36's sharded list and watch, behind the
   * `ShardedListAndWatch` gate): only objects whose hash falls into its ranges are listed and watched.
   */
  shardSelector?: string;
  /**
   * Which objects (by uid) the stream is for: the others are dropped where they arrive, neither
   * delivered nor remembered, so that a filter applied here costs no memory per dropped object
   * (e.g. the shard ranges, where the server does not filter). {@linkcode Watcher.rescope} changes it.
   */
  accepts?: (uid: string) => boolean;
  /** Timing and paging; Kopf's defaults when absent. */
  settings?: WatchingSettings;
  /** Ends the stream. */
  signal?: AbortSignal;
  /** Start from an earlier stream's state (its resume point and known objects) instead of listing. */
  state?: WatchState;
  /**
   * With a label selector: check each deletion with a GET, and report an object that still
   * exists (it stopped matching the selector, which the server reports as a deletion) as a
   * `MODIFIED` with its current state, and `left: true` unless it matches again.
   */
  confirmDeletions?: boolean;
}

/**
 * How a watch request ended; `"quiet"`: stalled while its connection answered other requests;
 * `"unstreamed"`: its listing did not stream, the next one goes by pages.
 */
type Outcome = "ended" | "gone" | "stalled" | "quiet" | "unstreamed";

/** What a line of a watch response comes to, besides an event to deliver. */
type Receipt = "gone" | "listed" | "unstreamed" | undefined;

/** The next of the events of the watch opened amid a listing, or its failure (never a rejection). */
type WatchStep = { readonly watched: IteratorResult<WatchEvent, Outcome> } | { readonly failed: unknown };

/** A listing by pages with the watch open since its first page: where the watch is, until the listing completes. */
interface Ahead {
  readonly listing: Listing;
  /** The resourceVersion of the watch's latest event or bookmark (at first the listing's own). */
  resume: string;
}

/** What a stream is for after {@linkcode Watcher.rescope}. */
export interface WatchScope {
  /** The new `shardSelector` (absent: none). */
  shardSelector?: string;
  /** The new filter of objects by uid (absent: all). */
  accepts?: (uid: string) => boolean;
  /** List again (e.g. objects were gained that the stream has not seen); otherwise the watch goes on from where it was. */
  relist?: boolean;
  /** Known objects that the listing delivers again as first seen, even unchanged (e.g. gained ones the stream only indexed). */
  revisit?: (uid: string) => boolean;
}

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
  readonly #path: string;
  readonly #name: string;
  readonly #failures: WatchFailures;
  #shardSelector: string | undefined;
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
  /** While a listing by pages is read with the watch already open (see `#list`). */
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
    this.#shardSelector = options.shardSelector;
    this.#accepts = options.accepts;
    this.#fresh = !this.state.listed;
    this.health = new WatchHealth(this.#settings.unhealthyAfter, this.#settings);
    this.#path = resourcePath(resource, { namespace: options.namespace });
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
    const reselected = scope.shardSelector !== this.#shardSelector;
    this.#shardSelector = scope.shardSelector;
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
   * Lists all objects page by page and reports what changed against the known objects (the first
   * listing knows none). The watch opens from the listing's resourceVersion as soon as the first
   * page has come, and its events are delivered among the listed objects: a listing read at the
   * pace of the handling (the backlog limit) may outlast the API server's history of changes, and
   * a watch opened only after it would find its start compacted (410) and list everything again.
   * Returns the outcome of that watch once it ends after the listing; if it ended before, `"gone"`
   * for a 410 (a watch after the listing would get it too), else `undefined` (the stream watches on
   * from where it got).
   */
  async *#list(attempt: AbortSignal): AsyncGenerator<WatchEvent, Outcome | undefined, undefined> {
    const listing = new Listing({
      known: this.state.known,
      fresh: this.#fresh,
      revisit: this.#revisit,
      accepts: this.#accepts,
    });
    let snapshot: string | undefined;
    const objects = listPages({
      page: (token) => this.#page(token, attempt),
      kind: this.#resource.kind,
      apiVersion: apiVersionOf(this.#resource),
      snapshot: (resourceVersion) => snapshot = resourceVersion,
    }, attempt);
    const early = new AbortController();
    using linked = linkSignals(early.signal, attempt);
    // Whichever comes first, each step followed once (not raced: see arrivals.ts).
    const doorbell = new Doorbell();
    let watch: AsyncGenerator<WatchEvent, Outcome, undefined> | undefined;
    let watched: Arrival<WatchStep> | undefined;
    let openedFrom: string | undefined;
    let ended: Outcome | undefined;
    const open = (from: string) => {
      watch = this.#watch(linked.signal, openedFrom = from);
      watched = new Arrival(nextStep(watch), doorbell);
    };
    let listed = new Arrival(objects.next(), doorbell);
    try {
      for (;;) {
        while (!watched?.arrived && !listed.arrived) await doorbell.wait();
        // The watch first when both have something: its events wait on the server, which ends a watch
        // left unread for long (the listing's wait in memory).
        if (!watched?.arrived) {
          const step = listed.take();
          if (step.done) {
            yield* listing.deletions();
            const resume = this.#ahead?.resume ?? step.value;
            this.#ahead = undefined;
            yield this.#completed(resume);
            if (ended === "gone") return ended;
            break;
          }
          // Compared when delivered, not when read: the watch's events read meanwhile drop what they overtook.
          const event = listing.offer(step.value);
          listed = new Arrival(objects.next(), doorbell);
          if (!watch && snapshot !== undefined) {
            this.#ahead = { listing, resume: snapshot };
            open(snapshot);
          }
          if (event) yield event;
          continue;
        }
        const step = watched.take();
        if ("watched" in step && !step.watched.done) {
          watched = new Arrival(nextStep(watch!), doorbell);
          yield step.watched.value;
        } else {
          ended = "watched" in step && step.watched.done ? step.watched.value : undefined;
          const resume = this.#ahead!.resume;
          // A watch that moved on before its end resumes at once, as the stream's watch would.
          if (ended !== undefined && ended !== "gone" && resume !== openedFrom) {
            open(resume);
            continue;
          }
          // The listing goes on alone; after it, a watch resumes from where this one got.
          watched = undefined;
          const why = "failed" in step ? describeCause(step.failed) : ended;
          logger.debug("The watch of {name} opened amid its listing ended ({why}).", { name: this.#name, why });
        }
      }
      // The watch opened amid the listing goes on as the stream's watch.
      if (!watched) return undefined;
      while (!watched.arrived) await doorbell.wait();
      const step = watched.take();
      if ("failed" in step) throw step.failed;
      if (step.watched.done) return step.watched.value;
      yield step.watched.value;
      return yield* watch!;
    } finally {
      this.#ahead = undefined;
      early.abort();
    }
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
   * One page of the listing; never rejects (a page asked for ahead may be left unread when the
   * stream stops). Pages are part of the stream, like its watch: they do not queue for a slot of
   * `settings.networking.concurrentRequests` behind the writes of the objects listed before them.
   */
  #page(token: string | undefined, signal: AbortSignal): Promise<ListedPage> {
    return this.#client.request<KubernetesList>({
      path: this.#path,
      query: {
        limit: this.#settings.listPageSize ?? undefined,
        continue: token,
        labelSelector: this.#options.labelSelector,
        fieldSelector: this.#options.fieldSelector,
        shardSelector: this.#shardSelector,
      },
      verb: "list",
      resource: this.#resource.plural,
      signal,
      urgent: true,
    }).then((page) => ({ page }), (error: unknown) => ({ error }));
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
    let listing = from === null
      ? new Listing({ known: this.state.known, fresh: this.#fresh, revisit: this.#revisit, accepts: this.#accepts })
      : undefined;
    let answered = false;
    this.#lastDelivery = 0;
    const request = new AbortController();
    using linked = linkSignals(request.signal, attempt);
    const signal = linked.signal;
    const clientTimeout = this.#settings.clientTimeout;
    const timer = clientTimeout === null ? undefined : setTimeout(() => request.abort(), clientTimeout * 1000);
    try {
      const response = await this.#client.open({
        path: this.#path,
        query: {
          watch: "true",
          allowWatchBookmarks: "true",
          resourceVersion: from || undefined,
          ...(listing ? STREAMING_QUERY : {}),
          timeoutSeconds: this.#settings.serverTimeout ?? undefined,
          labelSelector: this.#options.labelSelector,
          fieldSelector: this.#options.fieldSelector,
          shardSelector: this.#shardSelector,
        },
        verb: "watch",
        resource: this.#resource.plural,
        connectTimeout: this.#settings.connectTimeout ?? undefined,
        signal,
      });
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

/** Asks a watch request opened amid a listing for its next event; never rejects. */
function nextStep(watch: AsyncGenerator<WatchEvent, Outcome, undefined>): Promise<WatchStep> {
  return watch.next().then((watched) => ({ watched }), (failed: unknown) => ({ failed }));
}
