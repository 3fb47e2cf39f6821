/**
 * Watch streams that never stall silently: list (paginated) then watch from the list's
 * resourceVersion with bookmarks; resume from the last seen resourceVersion after any
 * disconnect; relist only when the server says 410 Gone, and then deliver the deletions that
 * happened meanwhile; detect a silent stream and resume it; back off on every kind of failure
 * (see `reconnect_backoff.ts`), log repeated failures at a bounded rate, never give up.
 *
 * @module
 */

import { linkSignals } from "../utils/signals.ts";
import { getLogger } from "@logtape/logtape";
import type { ApiClient } from "./client.ts";
import { ApiGoneError, ApiNotFoundError, ApiTooManyRequestsError, describeCause } from "./errors.ts";
import { FailureReports } from "./failure_reports.ts";
import { reconnectDelay } from "./reconnect_backoff.ts";
import { diagnoseTls } from "./tls_diagnosis.ts";
import { WatchHealth } from "./watch_health.ts";
import { LineReader } from "./lines.ts";
import { resourcePath } from "./paths.ts";
import type { KubernetesList, KubernetesObject } from "../model/body.ts";
import { apiVersionOf, type Resource, resourceName } from "../model/resource.ts";
import { WatchingSettings } from "../settings/watching.ts";
import { recordWatchEvent, recordWatchReconnect } from "../observability/stream_metrics.ts";
import { sleep } from "../utils/sleep.ts";

const logger = getLogger(["kopf", "watching"]);

/**
 * What a watch stream delivers:
 * - `type: null`: an object of the first listing (Kopf's convention for listed objects);
 * - `ADDED`, `MODIFIED`, `DELETED`: a change; `relisted: true` marks the changes found by
 *   comparing a relisting after 410 Gone with what was known (a relisted `DELETED` carries only
 *   the identity of the object: apiVersion, kind, name, namespace, uid, resourceVersion);
 * - `LISTED`: a listing has finished (the first one, or a relisting);
 * - with `confirmDeletions`, `left: true` marks a `MODIFIED` that replaces a `DELETED` of an
 *   object that still exists but no longer matches the label selector (its current state).
 */
export type WatchEvent =
  | { type: null; object: KubernetesObject }
  | { type: "ADDED" | "MODIFIED" | "DELETED"; object: KubernetesObject; relisted?: boolean; left?: boolean }
  | { type: "LISTED"; resourceVersion: string; relisted: boolean };

/** The identity of an object seen by a stream: enough to report its deletion after a relisting. */
export interface ObjectIdentity {
  apiVersion?: string;
  kind?: string;
  metadata: { name?: string; namespace?: string; uid?: string; resourceVersion?: string };
}

/** Where a stream stands: the resume point and the objects it knows. A new stream may start from it. */
export class WatchState {
  /** The resourceVersion to resume from; `null` means the next step is a (re)listing. */
  resourceVersion: string | null = null;
  /** The objects seen and not deleted, by uid. */
  readonly known: Map<string, ObjectIdentity> = new Map();
  /** Whether a listing has finished before (so that the next one is a relisting). */
  listed = false;
}

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
   * Which objects (by uid) the stream is for, fixed for its lifetime: the others are dropped where
   * they arrive, neither delivered nor remembered, so that a filter applied here costs no memory
   * per dropped object (e.g. the shard ranges, where the server does not filter).
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
   * `MODIFIED` with `left: true` and its current state.
   */
  confirmDeletions?: boolean;
}

type Outcome = "ended" | "gone" | "stalled";

/** A page of a listing as asked for with a continue token: the page, or why there is none. */
interface ListedPage {
  readonly token: string | undefined;
  readonly page?: KubernetesList;
  readonly error?: unknown;
}

/**
 * Seconds past `serverTimeout` that a watch request may stay silent before it counts as stalled:
 * the server ends it on schedule, so a longer silence is a connection that no longer delivers.
 */
const SERVER_END_GRACE = 10;

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
  readonly #reports: FailureReports;

  /** Prepares a stream; nothing is requested until it is iterated. */
  constructor(client: ApiClient, resource: Resource, options: WatchOptions = {}) {
    this.#client = client;
    this.#resource = resource;
    this.#options = options;
    this.#settings = options.settings ?? new WatchingSettings();
    this.#signal = options.signal ?? new AbortController().signal;
    this.state = options.state ?? new WatchState();
    this.health = new WatchHealth(this.#settings.unhealthyAfter, this.#settings);
    this.#reports = new FailureReports({ logger, interval: () => this.#settings.failureReportInterval });
    this.#path = resourcePath(resource, { namespace: options.namespace });
    this.#name = resourceName(resource) + (options.namespace ? ` in ${options.namespace}` : "");
  }

  /** Runs the stream: listing, watching, resuming, until the signal aborts. */
  async *[Symbol.asyncIterator](): AsyncGenerator<WatchEvent, void, undefined> {
    let watches = 0;
    while (!this.#signal.aborted) {
      try {
        if (this.state.resourceVersion === null) yield* this.#confirmed(this.#list());
        if (watches++) recordWatchReconnect(this.#resource.plural);
        const started = Date.now();
        const outcome = yield* this.#confirmed(this.#watch());
        if (this.#signal.aborted) return;
        if (outcome === "gone") {
          this.#gone();
          continue;
        }
        let delay = this.#settings.reconnectBackoff;
        if (outcome === "stalled") {
          this.health.stalls++;
          const { seconds, why } = this.#silenceBound();
          delay = this.#failure(new Error(`no event or bookmark for ${seconds} s (${why})`));
        } else if (Date.now() - started < this.#quickEnd()) {
          // A server or proxy that ends streams at once would make this a busy loop: a failure too.
          delay = this.#failure(new Error("the server ended the watch request at once"));
        } else {
          this.#alive(() => this.health.ended());
        }
        await sleep(delay, this.#signal);
      } catch (error) {
        if (this.#signal.aborted) return;
        if (error instanceof ApiGoneError) {
          this.#gone();
          continue;
        }
        await sleep(this.#failure(error), this.#signal);
      }
    }
  }

  /** Passes the events through, replacing deletions of objects that only left the selection (see `confirmDeletions`). */
  async *#confirmed<R>(events: AsyncGenerator<WatchEvent, R, undefined>): AsyncGenerator<WatchEvent, R, undefined> {
    if (!this.#options.confirmDeletions || !this.#options.labelSelector) return yield* events;
    try {
      for (;;) {
        const next = await events.next();
        if (next.done) return next.value;
        const event = next.value;
        const current = event.type === "DELETED" ? await this.#existing(event.object) : null;
        yield current ? { type: "MODIFIED", object: current, left: true } : event;
      }
    } finally {
      await events.return(undefined as R);
    }
  }

  /** The object's current state if it still exists (the same uid); `null` if it is gone or cannot be read. */
  async #existing(object: KubernetesObject): Promise<KubernetesObject | null> {
    const { name, namespace, uid } = object.metadata;
    if (!name) return null;
    try {
      const current = await this.#client.request<KubernetesObject>({
        path: resourcePath(this.#resource, { namespace, name }),
        resource: this.#resource.plural,
        signal: this.#signal,
      });
      return current.metadata.uid === uid ? current : null;
    } catch (error) {
      if (this.#signal.aborted) throw error;
      if (!(error instanceof ApiNotFoundError)) {
        logger.warn(
          "Cannot tell whether {name} of {stream} is deleted or only unmatched ({error}); taking it as deleted.",
          {
            name,
            stream: this.#name,
            error: describeCause(error),
          },
        );
      }
      return null;
    }
  }

  /** Lists all objects page by page; after a 410, reports what changed against the known objects. */
  async *#list(): AsyncGenerator<WatchEvent, void, undefined> {
    const relisting = this.state.listed;
    const listed = new Map<string, string | undefined>();
    let resourceVersion: string | undefined;
    let next: Promise<ListedPage> | undefined = this.#page(undefined);
    while (next) {
      const { token: asked, page, error } = await next;
      next = undefined;
      if (!page) {
        if (asked === undefined || !(error instanceof ApiGoneError)) throw error;
        // The continue token expired between pages: list again from the start. Objects already
        // delivered with the same resourceVersion are skipped, so nobody sees them twice.
        logger.info("The listing of {name} expired between pages; listing again.", { name: this.#name });
        next = this.#page(undefined);
        continue;
      }
      resourceVersion ??= page.metadata.resourceVersion;
      const token = page.metadata.continue || undefined;
      // The next page is on its way while this one's objects are handled (and their writes served).
      if (token) next = this.#page(token);
      const kind = page.kind?.replace(/List$/, "") || this.#resource.kind;
      const apiVersion = page.apiVersion || apiVersionOf(this.#resource);
      for (const object of page.items ?? []) {
        object.kind ??= kind;
        object.apiVersion ??= apiVersion;
        const uid = object.metadata.uid ?? identityKey(object);
        const version = object.metadata.resourceVersion;
        if (this.#options.accepts?.(uid) === false) continue;
        if (listed.has(uid) && listed.get(uid) === version) continue;
        listed.set(uid, version);
        const before = this.state.known.get(uid);
        this.state.known.set(uid, identityOf(object));
        if (!relisting) yield { type: null, object };
        else if (!before) yield { type: "ADDED", object, relisted: true };
        else if (before.metadata.resourceVersion !== version) yield { type: "MODIFIED", object, relisted: true };
      }
    }

    if (relisting) {
      for (const [uid, identity] of [...this.state.known]) {
        if (listed.has(uid)) continue;
        this.state.known.delete(uid);
        yield { type: "DELETED", object: structuredClone(identity) as KubernetesObject, relisted: true };
      }
    }
    this.state.resourceVersion = resourceVersion ?? "";
    this.state.listed = true;
    this.#alive(() => this.health.alive());
    yield { type: "LISTED", resourceVersion: this.state.resourceVersion, relisted: relisting };
  }

  /**
   * One page of the listing; never rejects (a page asked for ahead may be left unread when the
   * stream stops). Pages are part of the stream, like its watch: they do not queue for a slot of
   * `settings.networking.concurrentRequests` behind the writes of the objects listed before them.
   */
  #page(token: string | undefined): Promise<ListedPage> {
    return this.#client.request<KubernetesList>({
      path: this.#path,
      query: {
        limit: this.#settings.listPageSize ?? undefined,
        continue: token,
        labelSelector: this.#options.labelSelector,
        fieldSelector: this.#options.fieldSelector,
        shardSelector: this.#options.shardSelector,
      },
      verb: "list",
      resource: this.#resource.plural,
      signal: this.#signal,
      urgent: true,
    }).then((page) => ({ token, page }), (error: unknown) => ({ token, error }));
  }

  /** One watch request from the resume point, until it ends, stalls, or the server says 410. */
  async *#watch(): AsyncGenerator<WatchEvent, Outcome, undefined> {
    const request = new AbortController();
    using linked = linkSignals(request.signal, this.#signal);
    const signal = linked.signal;
    const clientTimeout = this.#settings.clientTimeout;
    const timer = clientTimeout === null ? undefined : setTimeout(() => request.abort(), clientTimeout * 1000);
    try {
      const response = await this.#client.open({
        path: this.#path,
        query: {
          watch: "true",
          allowWatchBookmarks: "true",
          resourceVersion: this.state.resourceVersion || undefined,
          timeoutSeconds: this.#settings.serverTimeout ?? undefined,
          labelSelector: this.#options.labelSelector,
          fieldSelector: this.#options.fieldSelector,
          shardSelector: this.#options.shardSelector,
        },
        verb: "watch",
        resource: this.#resource.plural,
        connectTimeout: this.#settings.connectTimeout ?? undefined,
        signal,
      });
      this.health.connected();
      if (!response.body) return "ended";
      using lines = new LineReader(response.body, this.#silenceBound().seconds, signal);
      for (;;) {
        const line = await lines.next();
        if (line === "aborted" || line === null) return "ended";
        if (line === "timeout") return "stalled";
        const outcome = this.#receive(line);
        if (outcome === "gone") return "gone";
        if (outcome) yield outcome;
      }
    } catch (error) {
      // The client timeout is a planned end of the request, not a failure.
      if (request.signal.aborted && !this.#signal.aborted) return "ended";
      throw error;
    } finally {
      clearTimeout(timer);
      request.abort();
    }
  }

  /** Decodes one line of a watch response; returns what to deliver, `"gone"`, or nothing. */
  #receive(line: string): WatchEvent | "gone" | undefined {
    const event = JSON.parse(line) as { type?: string; object?: KubernetesObject };
    const object = event.object;
    recordWatchEvent(this.health, this.#resource.plural, event.type ?? "", object);
    if (event.type === "ERROR") {
      // Not a sign of life: a server that answers every watch with an ERROR event is failing.
      const status = object as unknown as { code?: number; message?: string; reason?: string };
      if (status?.code === 410) return "gone";
      throw new Error(`the server sent an error in the stream: ${status?.code} ${status?.reason}: ${status?.message}`);
    }
    this.#alive(() => this.health.alive());
    if (!object?.metadata) {
      logger.warn("Ignoring a malformed watch event of {name}: {line}", { name: this.#name, line: line.slice(0, 200) });
      return undefined;
    }
    if (object.metadata.resourceVersion) this.state.resourceVersion = object.metadata.resourceVersion;
    const uid = object.metadata.uid ?? identityKey(object);
    if (event.type !== "BOOKMARK" && this.#options.accepts?.(uid) === false) return undefined;
    switch (event.type) {
      case "BOOKMARK":
        return undefined;
      case "ADDED":
      case "MODIFIED":
        remember(this.state.known, uid, object);
        return { type: event.type, object };
      case "DELETED":
        this.state.known.delete(uid);
        return { type: "DELETED", object };
      default:
        logger.warn("Ignoring an unsupported event type {type} of {name}.", { type: event.type, name: this.#name });
        return undefined;
    }
  }

  /** Records a sign of life; logs the end of a run of failures once. */
  #alive(record: () => void): void {
    const failing = this.health.failingSince !== null;
    record();
    if (failing && this.health.failingSince === null) {
      this.#reports.recovered("The stream of {name} works again after {seconds} s and {failures} failures.", {
        name: this.#name,
      });
    }
  }

  /**
   * Records a failure, logs it at a bounded rate (a rejected certificate at error level, with what
   * to do), and returns the pause before the next attempt.
   */
  #failure(error: unknown): number {
    const described = describeCause(error);
    const fresh = this.health.failed(described);
    const failingFor = (Date.now() - (this.health.failingSince ?? Date.now())) / 1000;
    let delay = reconnectDelay(this.health.backoffFailures, failingFor, this.#settings);
    if (error instanceof ApiTooManyRequestsError) delay = Math.max(delay, error.retryAfter ?? 1);
    const credentials = this.#client.vault.peek()?.credentials;
    const tls = credentials ? diagnoseTls(error, credentials.server, credentials.source) : undefined;
    this.#reports.failed({
      level: tls ? "error" : "warning",
      message: tls
        ? "The stream of {name} cannot connect: {diagnosis} Retrying in {delay} s."
        : "The stream of {name} failed ({problem}); resuming in {delay} s.",
      properties: { name: this.#name, problem: described, diagnosis: tls?.message, delay: Math.round(delay * 10) / 10 },
    }, fresh);
    return delay;
  }

  /** How long a watch request may stay silent before it counts as stalled, and which setting says so. */
  #silenceBound(): { seconds: number; why: string } {
    const { inactivityTimeout, serverTimeout } = this.#settings;
    if (serverTimeout !== null && serverTimeout + SERVER_END_GRACE < inactivityTimeout) {
      return {
        seconds: serverTimeout + SERVER_END_GRACE,
        why: `settings.watching.serverTimeout + ${SERVER_END_GRACE} s`,
      };
    }
    return { seconds: inactivityTimeout, why: "settings.watching.inactivityTimeout" };
  }

  /** A watch request shorter than this is a failure, not an end on schedule. */
  #quickEnd(): number {
    const serverTimeout = this.#settings.serverTimeout;
    return Math.min(1000, serverTimeout === null ? 1000 : serverTimeout * 500);
  }

  #gone(): void {
    logger.info("The resourceVersion of {name} is gone (410); relisting.", { name: this.#name });
    this.state.resourceVersion = null;
    this.health.relists++;
  }
}

/**
 * Keeps an object's identity, updating the one already known in place: only its resourceVersion
 * changes from event to event, and a new identity per event was garbage for the old generation
 * (the map outlives every young collection).
 */
function remember(known: Map<string, ObjectIdentity>, uid: string, object: KubernetesObject): void {
  const identity = known.get(uid);
  if (identity && identity.metadata.name === object.metadata.name) {
    identity.metadata.resourceVersion = object.metadata.resourceVersion;
  } else {
    known.set(uid, identityOf(object));
  }
}

/** The identity kept for an object: what a deletion event found by relisting carries. */
function identityOf(object: KubernetesObject): ObjectIdentity {
  const { name, namespace, uid, resourceVersion } = object.metadata;
  return { apiVersion: object.apiVersion, kind: object.kind, metadata: { name, namespace, uid, resourceVersion } };
}

/** A key for objects without a uid (Kopf's fallback), so they are tracked too. */
function identityKey(object: KubernetesObject): string {
  const meta = object.metadata;
  return [object.kind, object.apiVersion, meta.name, meta.namespace, meta.creationTimestamp].map((part) => part ?? "-")
    .join("//");
}
