/**
 * One watch stream of one resource in one namespace (or cluster-wide) and the processing of its
 * objects: per-object queues, the objects' memories, daemons and timers, indexing, throttling
 * after unexpected errors, wake-ups -- and stopping all of that when the stream stops.
 *
 * @module
 */

import { getLogger } from "@logtape/logtape";
import { Watcher, type WatchEvent, type WatchHealth } from "../api/watching.ts";
import { ObjectBackground } from "../engines/background.ts";
import { ObjectQueues } from "../engines/queueing.ts";
import type { HistogramSeries } from "../observability/exposition.ts";
import { kopfMetrics } from "../observability/metrics.ts";
import { registerStream } from "../observability/stream_metrics.ts";
import { traceCycle, tracingEnabled } from "../observability/tracing.ts";
import type { IndexHandler } from "../handling/handlers.ts";
import { serverLabelSelector } from "../handling/label_pushdown.ts";
import type { StopCause } from "../handling/stopping.ts";
import type { KubernetesObject } from "../model/body.ts";
import { movedRanges } from "../model/shard_range.ts";
import { sensitiveFieldsOf } from "../state/sensitive.ts";
import { untilSettledOrAborted } from "../utils/signals.ts";
import type { StreamHandle } from "./orchestration.ts";
import type { ShardFilter } from "./shard_scope.ts";
import { ErrorThrottle, reportUnexpectedError } from "./error_throttle.ts";
import { ObjectMemories } from "./object_memories.ts";
import { takeOwnEcho } from "./own_echoes.ts";
import { ParkedObjects } from "./parked_objects.ts";
import { type CycleDeps, type CycleOutcome, type ObjectMemory, type ObjectWork, processObject } from "./processing.ts";
import { squashChanges } from "./squashed_events.ts";
import { describe, type ServeDeps, streamName } from "./stream_deps.ts";
import { Wakeups } from "./wakeups.ts";

const logger = getLogger(["kopf", "operator"]);

// Re-exported: whoever starts a stream (running.ts) finds what it takes here, beside serveResource().
export { type ServeDeps, streamName };

/**
 * Starts one stream and the processing of its objects; returns its handle, whose `stop()` ends
 * the stream, stops the objects' daemons and timers, gives the queued work
 * `settings.batching.exitTimeout` to finish, and (unless the operator exits) removes the
 * stream's objects from the indexes.
 */
export function serveResource(deps: ServeDeps): StreamHandle {
  return new ResourceStream(deps);
}

/** A watch event about one object (not the end of a listing). */
type ObjectEvent = Exclude<WatchEvent, { type: "LISTED" }>;

/**
 * One stream: the watch feeds each object's events (after indexing them) into its memory and its
 * queue, or parks them while the gate is closed; the queue runs the object's cycles one at a time,
 * with rests after unexpected errors and wake-ups when the cycle asks for them.
 */
class ResourceStream implements StreamHandle {
  readonly name: string;
  readonly health: WatchHealth;
  readonly listed: Promise<void>;
  readonly #deps: ServeDeps;
  readonly #controller = new AbortController();
  readonly #watcher: Watcher;
  readonly #indexers: IndexHandler[];
  /** Whether an index holds every object (`sharded: false`): then the stream watches all of them. */
  readonly #unsharded: boolean;
  /** The part of the objects handled here (sharding), as last taken from the scope. */
  #shard: ShardFilter | undefined;
  /** Whether the stream has handlers (indexers aside): otherwise its objects are only indexed. */
  readonly #handled: boolean;
  readonly #cycle: CycleDeps;
  readonly #memories: ObjectMemories;
  readonly #throttle: ErrorThrottle;
  readonly #wakeups: Wakeups<KubernetesObject>;
  readonly #queues: ObjectQueues<ObjectWork>;
  readonly #parked: ParkedObjects;
  readonly #unregister: () => void;
  readonly #done: Promise<void>;
  /** The series of the queue latency metric for this resource, kept once its first event is processed. */
  #latency: HistogramSeries | undefined;
  /** The series of the cycles' counter for this resource, kept once its first cycle runs. */
  #cycles: { value: number } | undefined;

  constructor(deps: ServeDeps) {
    const { client, resource, namespace, settings } = deps;
    const signal = this.#controller.signal;
    this.#deps = deps;
    this.name = streamName(resource, namespace);
    this.#indexers = deps.indexes.handlersFor(resource);
    const labelSelector = serverLabelSelector([...deps.events, ...deps.changes, ...deps.background, ...this.#indexers]);
    if (labelSelector) {
      logger.debug("Watching {name} with labelSelector {labelSelector}: every handler filters by it.", {
        name: this.name,
        labelSelector,
      });
    }
    this.#unsharded = this.#indexers.some((indexer) => indexer.options.sharded === false);
    this.#shard = deps.shard?.filter();
    // Objects that leave the selection are handled as changes (e.g. daemons stop for filtersMismatch), then forgotten.
    this.#watcher = new Watcher(client, resource, {
      namespace,
      labelSelector,
      shardSelector: this.#unsharded ? undefined : this.#shard?.selector,
      // Other replicas' objects cost nothing here, whether the server filters or not.
      accepts: this.#unsharded || !this.#shard ? undefined : this.#accepting(this.#shard.owns),
      confirmDeletions: true,
      settings: settings.watching,
      signal,
    });
    this.health = this.#watcher.health;
    this.#handled = deps.events.length + deps.changes.length + deps.background.length > 0;
    this.#cycle = {
      client,
      resource,
      settings,
      lifecycle: deps.lifecycle,
      eventHandlers: deps.events,
      changeHandlers: deps.changes,
      backgroundHandlers: deps.background,
      indices: deps.indexes.indices,
      sensitive: sensitiveFieldsOf(resource, settings.persistence.sensitiveFields),
      signal,
    };
    const startBackground = deps.background.length ? this.#startBackground.bind(this) : undefined;
    this.#memories = new ObjectMemories(deps.memo, startBackground);
    this.#throttle = new ErrorThrottle(settings.batching);
    this.#wakeups = new Wakeups((uid, object) => this.#queues.push(uid, { kind: "wakeup", object }));
    this.#queues = new ObjectQueues<ObjectWork>(
      // Bound, not wrapped in an arrow: one function less on every object's path
      // (docs/performance/cpu.md, "Fewer functions, a second pass").
      this.#process.bind(this),
      (uid, error) => logger.error("Processing of {uid} failed: {error}", { uid, error }),
      {
        limit: settings.batching.workerLimit,
        backlog: settings.batching.backlogLimit,
        congestion: client.congestion,
        activity: deps.activity,
        // Event handlers see every event; otherwise only an object's newest waiting change is kept.
        squash: deps.events.length ? undefined : squashChanges,
      },
    );
    this.#parked = new ParkedObjects(deps.gate, (uid, object) => {
      if (!signal.aborted) this.#queues.push(uid, { kind: "event", type: null, object, arrived: performance.now() });
    });
    this.#unregister = registerStream({
      resource: resource.plural,
      namespace,
      lastEvent: () => this.health.lastEvent,
      healthy: () => this.health.healthy,
      objects: () => this.#watcher.state.known.size,
      depth: () => this.#queues.depth,
    });
    const listing = Promise.withResolvers<void>();
    this.listed = listing.promise;
    this.#done = this.#watch(listing.resolve).finally(() => {
      // A stream that stops before its listing must not hold the other handlers (or `ready`) back for ever.
      if (this.#indexers.length) deps.indexes.listed(deps.indexKey);
      listing.resolve();
    });
  }

  /**
   * Stops the stream; the daemons and timers stop while the queues drain, then everything is
   * forgotten. Resolves with the objects whose work was left unprocessed.
   */
  async stop(cause: StopCause, grace: number): Promise<string[]> {
    const { settings, indexes } = this.#deps;
    this.#controller.abort(new Error(`the stream ${this.name} is stopping (${cause})`));
    this.#parked[Symbol.dispose]();
    this.#unregister();
    // Daemons and timers learn of the stop at once; the queues drain meanwhile.
    const stopping = this.#memories.shutdown(cause, grace);
    await this.#done;
    const left = await this.#queues.drain(AbortSignal.timeout(settings.batching.exitTimeout * 1000));
    await stopping;
    this.#wakeups.clear();
    this.#memories.clear();
    // Objects no longer served leave the indexes; when the operator exits, nobody reads them.
    if (this.#indexers.length && cause !== "operatorExiting") {
      for (const identity of this.#watcher.state.known.values()) indexes.forget(identity as KubernetesObject);
    }
    return [...left.values()].map((work) => describe(work[0].object));
  }

  /**
   * The shard's test of ownership, telling the idle collection of each object turned away: when the
   * server does not filter, the other members' writes arrive here too, and their events' garbage
   * needs its collection as much as the queues' work does.
   */
  #accepting(owns: (uid: string) => boolean): (uid: string) => boolean {
    const passed = this.#deps.activity?.passed?.bind(this.#deps.activity);
    if (!passed) return owns;
    return (uid) => {
      if (owns(uid)) return true;
      passed();
      return false;
    };
  }

  /**
   * Takes the scope's current ranges: the objects no longer this replica's stop being handled
   * (their daemons and timers stop for the cause, their work not yet started is dropped, the cycle
   * in progress gets `settings.batching.exitTimeout`) and leave the sharded indexes; the watch goes
   * on with the new selector, listing again if ranges were gained (their objects come as listed).
   * Resolves once the objects lost are no longer handled. The other objects' daemons, timers and
   * queues go on undisturbed.
   */
  async rescope(cause: StopCause, grace: number): Promise<void> {
    const before = this.#shard;
    const after = this.#deps.shard?.filter();
    if (!before || !after) return;
    this.#shard = after;
    const gained = movedRanges(before.ranges, after.ranges).gained.length > 0;
    const lostIdentities = this.#unsharded
      ? [...this.#watcher.state.known].filter(([uid]) => before.owns(uid) && !after.owns(uid)).map(([, id]) => id)
      : [];
    lostIdentities.push(
      ...this.#watcher.rescope(
        this.#unsharded
          // Objects gained were seen (for the unsharded indexes), not handled: the listing delivers them again.
          ? { relist: gained, revisit: (uid) => after.owns(uid) && !before.owns(uid) }
          : { shardSelector: after.selector, accepts: this.#accepting(after.owns), relist: gained },
      ),
    );
    const lost = new Set(
      [...this.#memories.keys(), ...this.#queues.keys()].filter((uid) => before.owns(uid) && !after.owns(uid)),
    );
    const { settings, indexes } = this.#deps;
    const deadline = AbortSignal.timeout(settings.batching.exitTimeout * 1000);
    const left: string[] = [];
    await Promise.all([...lost].map(async (uid) => {
      this.#wakeups.cancel(uid);
      const memory = this.#memories.get(uid);
      const stopping = memory?.background?.shutdown(cause, grace);
      if (!await this.#queues.discard(uid, deadline)) left.push(uid);
      await stopping;
      this.#wakeups.cancel(uid);
      this.#memories.forget(uid, memory);
    }));
    const sharded = this.#indexers.filter((indexer) => indexer.options.sharded !== false);
    if (sharded.length) {
      for (const identity of lostIdentities) {
        indexes.forget(identity as KubernetesObject, sharded);
      }
    }
    if (left.length) {
      logger.warn(
        "Objects of {name} now handled elsewhere were still in work after {seconds} s " +
          "(settings.batching.exitTimeout), not waited for: {uids}",
        { name: this.name, seconds: settings.batching.exitTimeout, uids: left },
      );
    }
  }

  /** The watch: each event is indexed, remembered and queued (or parked) in the stream's order. */
  async #watch(markListed: () => void): Promise<void> {
    for await (const event of this.#watcher) {
      if (event.type === "LISTED") {
        // Indexing happens right here, in the stream's order: the listing is fully indexed now.
        if (this.#indexers.length) this.#deps.indexes.listed(this.#deps.indexKey);
        markListed();
        continue;
      }
      const uid = event.object.metadata.uid;
      if (uid) await this.#see(uid, event);
      // Reading on while the queues are full would hold every object listed or changed meanwhile at once.
      // Not while the indexes wait for a listing (maybe this one): the cycles wait for the indexes then.
      const room = this.#deps.indexes.isReady ? this.#queues.room() : undefined;
      if (room) await untilSettledOrAborted(room, this.#controller.signal);
    }
    this.#wakeups.clear();
  }

  /** Takes one object's event from the watch: indexes it, then forgets, parks or queues it. */
  async #see(uid: string, event: ObjectEvent): Promise<void> {
    // The event's arrival, for the queues' wait: before its indexing, as the watch delivered it.
    const arrived = performance.now();
    const left = event.type === "MODIFIED" && event.left === true;
    const owned = this.#shard?.owns(uid) ?? true;
    const indexers = owned ? this.#indexers : this.#indexers.filter((indexer) => indexer.options.sharded === false);
    if (indexers.length) {
      const { indexes, resource } = this.#deps;
      const work: ObjectWork = { kind: "event", type: event.type, object: event.object };
      const memo = event.type === "DELETED"
        ? this.#memories.get(uid)?.memo ?? {}
        : this.#memories.recall(uid, work).memo;
      await indexes.indexObject(indexers, event.type, event.object, { memo, resource });
    }
    if (!this.#handled || !owned) {
      if (event.type === "DELETED" || left) this.#memories.forget(uid);
      return;
    }
    if (this.#parked.closed) {
      if (event.type === "DELETED") this.#memories.forget(uid);
      this.#parked.park(uid, event.type, event.object);
      return;
    }
    // Daemons and timers see the newest state at once, not when its cycle's turn comes: a timer that
    // wrote its result must see the echo before its next tick, however long the queue.
    if (this.#deps.background.length) this.#memories.get(uid)?.background?.live.replace(event.object);
    // A newer state supersedes the state a pending wake-up carries.
    this.#wakeups.cancel(uid);
    const relisted = "relisted" in event && event.relisted === true;
    this.#queues.push(uid, { kind: "event", type: event.type, object: event.object, left, relisted, arrived });
  }

  /** The queue's work on one object: a cycle, unless the object rests after an unexpected error. */
  async #process(uid: string, work: ObjectWork, more: boolean): Promise<void> {
    const { indexes, resource } = this.#deps;
    const signal = this.#controller.signal;
    // Work that was queued (or a wake-up that fired) before the object became another replica's.
    if (this.#shard && !this.#shard.owns(uid)) return;
    // Handlers never see a partial index: they wait until every indexed stream has been listed.
    if (!indexes.isReady) await indexes.whenReady(signal).catch(() => {});
    if (signal.aborted) return;
    // The wait of an event since it arrived, into the series kept here: not looked up by labels per event.
    if (work.kind === "event" && work.arrived !== undefined) {
      (this.#latency ??= kopfMetrics.queueLatency.seriesOf([resource.plural])).observe(
        (performance.now() - work.arrived) / 1000,
      );
    }
    const memory = this.#memories.recall(uid, work);
    if (takeOwnEcho(work, memory)) return;
    this.#wakeups.cancel(uid);
    if (work.kind === "event" && work.type === "DELETED") {
      this.#memories.forget(uid);
      void memory.background?.stop("resourceDeleted");
      this.#countCycle();
      await processObject(work, memory, this.#cycle).catch((error) => reportUnexpectedError(work.object, error));
      return;
    }
    // After an unexpected error, the object rests for a while; newer events wait for the end of it.
    // The throttle asked only about an object that erred: nearly none has.
    const resting = memory.rest === undefined ? undefined : this.#throttle.resting(memory);
    if (resting !== undefined) {
      this.#wakeups.schedule(uid, work.object, resting);
      return;
    }
    let outcome: CycleOutcome;
    this.#countCycle();
    try {
      // Without tracing, no span's wrapper and callback: two functions fewer in every cycle.
      outcome = tracingEnabled
        ? await traceCycle(
          resource.plural,
          work.object,
          work.kind === "event" ? work.type ?? "LISTED" : work.kind,
          () => processObject(work, memory, this.#cycle, more),
        )
        : await processObject(work, memory, this.#cycle, more);
    } catch (error) {
      if (signal.aborted) return;
      const delay = this.#throttle.failed(memory, work.object, error);
      if (delay !== undefined) this.#wakeups.schedule(uid, work.object, delay);
      return;
    }
    // Unseen from now on (its changes and deletion no longer reach this stream): forgotten once handled.
    if (work.kind === "event" && work.left) this.#memories.forget(uid, memory);
    if (memory.rest !== undefined) this.#throttle.succeeded(memory, work.object);
    if (outcome.wakeupAfter !== undefined && !signal.aborted) {
      // Re-check the latest state of the object later: retries of delayed handlers, or a
      // consistency wait whose echo never came. No write is needed to wake up.
      this.#wakeups.schedule(uid, work.object, outcome.wakeupAfter);
    }
  }

  /** One more cycle in `kopf_cycles_total` (an echo taken, a rest or a wake-up scheduled is none). */
  #countCycle(): void {
    (this.#cycles ??= kopfMetrics.cycles.seriesOf([this.#deps.resource.plural])).value++;
  }

  /** The daemons and timers of an object seen for the first time. */
  #startBackground(uid: string, memory: ObjectMemory, object: KubernetesObject): ObjectBackground {
    const { client, resource, settings, indexes } = this.#deps;
    const signal = this.#controller.signal;
    return new ObjectBackground(object, {
      client,
      resource,
      memo: memory.memo,
      indices: indexes.indices,
      defaultBackoff: settings.execution.defaultBackoff,
      handlerTimeout: settings.execution.handlerTimeout,
      settings: settings.background,
      sensitive: this.#cycle.sensitive,
      // Another look at the object, e.g. to release the finalizer once its daemons have exited.
      wake: () => {
        if (signal.aborted || !this.#memories.holds(uid, memory)) return;
        this.#queues.push(uid, { kind: "wakeup", object: memory.background?.live.current ?? object });
      },
    });
  }
}
