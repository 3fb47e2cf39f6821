/**
 * One watch stream of one resource in one namespace (or cluster-wide) and the processing of its
 * objects: per-object queues, the objects' memories, daemons and timers, indexing, throttling
 * after unexpected errors, wake-ups — and stopping all of that when the stream stops.
 *
 * @module
 */

import { getLogger } from "@logtape/logtape";
import type { ApiClient } from "../api/client.ts";
import { Watcher } from "../api/watching.ts";
import { ObjectBackground } from "../engines/background.ts";
import type { OperatorIndexes } from "../engines/indexing.ts";
import { ObjectQueues } from "../engines/queueing.ts";
import { recordProcessingStart, registerStream } from "../observability/stream_metrics.ts";
import { traceCycle } from "../observability/tracing.ts";
import type { Memo } from "../handling/context.ts";
import type { BackgroundHandler, ChangeHandler, EventHandler, IndexHandler } from "../handling/handlers.ts";
import { serverLabelSelector } from "../handling/label_pushdown.ts";
import type { Lifecycle } from "../handling/lifecycles.ts";
import type { StopCause } from "../handling/stopping.ts";
import { ObjectLogger } from "../logging/object_logger.ts";
import type { KubernetesObject } from "../model/body.ts";
import { type Resource, resourceName } from "../model/resource.ts";
import type { Settings } from "../settings/settings.ts";
import { sensitiveFieldsOf } from "../state/sensitive.ts";
import type { Gate } from "../utils/gate.ts";
import type { StreamHandle } from "./orchestration.ts";
import { newMemory, type ObjectMemory, type ObjectWork, processObject } from "./processing.ts";

const logger = getLogger(["kopf", "operator"]);

/** What {@linkcode serveResource} needs. */
export interface ServeDeps {
  /** The API client. */
  client: ApiClient;
  /** The resource to watch. */
  resource: Resource;
  /** The namespace; `null` for all namespaces and for cluster-scoped resources. */
  namespace: string | null;
  /** The operator's settings. */
  settings: Settings;
  /** Which due handlers run per cycle. */
  lifecycle: Lifecycle;
  /** The operator's memo: each object's memo starts as a shallow copy of it. */
  memo: Memo;
  /** The resource's event handlers. */
  events: EventHandler[];
  /** The resource's change handlers. */
  changes: ChangeHandler[];
  /** The resource's daemons and timers. */
  background: BackgroundHandler[];
  /** The operator's indexes. */
  indexes: OperatorIndexes;
  /**
   * The key under which the stream's initial listing is reported to the indexes (if the
   * resource is indexed); the caller has already `expect`ed it.
   */
  indexKey: string;
  /**
   * While closed (e.g. a replica standing by for the leadership), the stream watches and indexes
   * but handles nothing: it keeps the latest state of each object, and hands all of them to the
   * handlers as listed objects when the gate opens. Always open when absent.
   */
  gate?: Gate;
}

/**
 * Starts one stream and the processing of its objects; returns its handle, whose `stop()` ends
 * the stream, stops the objects' daemons and timers, gives the queued work
 * `settings.batching.exitTimeout` to finish, and (unless the operator exits) removes the
 * stream's objects from the indexes.
 */
export function serveResource(deps: ServeDeps): StreamHandle {
  const { client, resource, namespace, settings } = deps;
  const controller = new AbortController();
  const signal = controller.signal;
  const name = streamName(resource, namespace);
  const indexKey = deps.indexKey;
  const { indexes } = deps;
  const indexers: IndexHandler[] = indexes.handlersFor(resource);
  const labelSelector = serverLabelSelector([...deps.events, ...deps.changes, ...deps.background, ...indexers]);
  if (labelSelector) {
    logger.debug("Watching {name} with labelSelector {labelSelector}: every handler filters by it.", {
      name,
      labelSelector,
    });
  }
  // Objects that leave the selection are handled as changes (e.g. daemons stop for filtersMismatch), then forgotten.
  const watcher = new Watcher(client, resource, {
    namespace,
    labelSelector,
    confirmDeletions: true,
    settings: settings.watching,
    signal,
  });
  const sensitive = sensitiveFieldsOf(resource, settings.persistence.sensitiveFields);
  const handled = deps.events.length + deps.changes.length + deps.background.length > 0;
  const memories = new Map<string, ObjectMemory & { throttles?: number; throttledUntil?: number }>();
  const wakeups = new Map<string, ReturnType<typeof setTimeout>>();
  const cycle = {
    client,
    resource,
    settings,
    lifecycle: deps.lifecycle,
    eventHandlers: deps.events,
    changeHandlers: deps.changes,
    backgroundHandlers: deps.background,
    indices: indexes.indices,
    sensitive,
    signal,
  };
  const backgroundFor = (uid: string, memory: ObjectMemory, object: KubernetesObject) =>
    new ObjectBackground(object, {
      client,
      resource,
      memo: memory.memo,
      indices: indexes.indices,
      defaultBackoff: settings.execution.defaultBackoff,
      handlerTimeout: settings.execution.handlerTimeout,
      settings: settings.background,
      sensitive,
      // Another look at the object, e.g. to release the finalizer once its daemons have exited.
      wake: () => {
        if (signal.aborted || memories.get(uid) !== memory) return;
        queues.push(uid, { kind: "wakeup", object: memory.background?.live.current ?? object });
      },
    });
  const wakeLater = (uid: string, object: KubernetesObject, seconds: number) => {
    clearTimeout(wakeups.get(uid));
    wakeups.set(uid, setTimeout(() => queues.push(uid, { kind: "wakeup", object }), seconds * 1000));
  };

  const memoryOf = (uid: string, work: ObjectWork): ObjectMemory & { throttles?: number; throttledUntil?: number } => {
    let memory = memories.get(uid);
    if (!memory) {
      memories.set(uid, memory = newMemory(deps.memo, work.kind === "event" && work.type === null));
      if (deps.background.length) memory.background = backgroundFor(uid, memory, work.object);
    }
    return memory;
  };

  const queues: ObjectQueues<ObjectWork> = new ObjectQueues<ObjectWork>(
    async (uid, work, more) => {
      // Handlers never see a partial index: they wait until every indexed stream has been listed.
      if (!indexes.isReady) await indexes.whenReady(signal).catch(() => {});
      if (signal.aborted) return;
      recordProcessingStart(resource.plural, work.object);
      const memory = memoryOf(uid, work);
      clearTimeout(wakeups.get(uid));
      wakeups.delete(uid);
      if (work.kind === "event" && work.type === "DELETED") {
        memories.delete(uid);
        void memory.background?.stop("resourceDeleted");
        await processObject(work, memory, cycle).catch((error) => reportError(work.object, error));
        return;
      }
      // After an unexpected error, the object rests for a while; newer events wait for the end of it.
      if (memory.throttledUntil !== undefined && Date.now() < memory.throttledUntil) {
        wakeLater(uid, work.object, (memory.throttledUntil - Date.now()) / 1000);
        return;
      }
      let outcome;
      try {
        outcome = await traceCycle(
          resource.plural,
          work.object,
          work.kind === "event" ? work.type ?? "LISTED" : work.kind,
          () => processObject(work, memory, cycle, more),
        );
        // Unseen from now on (its changes and deletion no longer reach this stream): forgotten once handled.
        if (work.kind === "event" && work.left && memories.get(uid) === memory) memories.delete(uid);
        if (memory.throttles) {
          new ObjectLogger(work.object).info("Throttling is over. Switching back to normal operations.");
        }
        memory.throttles = memory.throttledUntil = undefined;
      } catch (error) {
        if (signal.aborted) return;
        const delays = settings.batching.errorDelays;
        if (delays.length === 0) {
          reportError(work.object, error);
          return;
        }
        const delay = delays[Math.min(memory.throttles ?? 0, delays.length - 1)];
        memory.throttles = (memory.throttles ?? 0) + 1;
        memory.throttledUntil = Date.now() + delay * 1000;
        reportError(work.object, error, delay);
        wakeLater(uid, work.object, delay);
        return;
      }
      if (outcome.wakeupAfter !== undefined && !signal.aborted) {
        // Re-check the latest state of the object later: retries of delayed handlers, or a
        // consistency wait whose echo never came. No write is needed to wake up.
        wakeLater(uid, work.object, outcome.wakeupAfter);
      }
    },
    (uid, error) => logger.error("Processing of {uid} failed: {error}", { uid, error }),
    {
      limit: settings.batching.workerLimit,
    },
  );

  // The latest state of each object seen while the gate is closed: handled when it opens.
  const parked = new Map<string, KubernetesObject>();
  const unsubscribe = deps.gate?.subscribe((open) => {
    if (!open || signal.aborted) return;
    for (const [uid, object] of parked) queues.push(uid, { kind: "event", type: null, object });
    parked.clear();
  });

  const unregister = registerStream({
    resource: resource.plural,
    namespace,
    stream: watcher.health,
    healthy: () => watcher.health.healthy,
    objects: () => watcher.state.known.size,
    depth: () => queues.depth,
  });
  let markListed: () => void = () => {};
  const listed = new Promise<void>((resolve) => markListed = resolve);
  const done = (async () => {
    for await (const event of watcher) {
      if (event.type === "LISTED") {
        // Indexing happens right here, in the stream's order: the listing is fully indexed now.
        if (indexers.length) indexes.listed(indexKey);
        markListed();
        continue;
      }
      const uid = event.object.metadata.uid;
      if (!uid) continue;
      const left = event.type === "MODIFIED" && event.left === true;
      if (indexers.length) {
        const work: ObjectWork = { kind: "event", type: event.type, object: event.object };
        const memo = event.type === "DELETED" ? memories.get(uid)?.memo ?? {} : memoryOf(uid, work).memo;
        await indexes.indexObject(indexers, event.type, event.object, { memo, resource });
      }
      if (!handled) {
        if (event.type === "DELETED" || left) memories.delete(uid);
        continue;
      }
      if (deps.gate && !deps.gate.isOpen) {
        if (event.type === "DELETED") {
          parked.delete(uid);
          memories.delete(uid);
        } else {
          parked.set(uid, event.object);
        }
        continue;
      }
      // A newer state supersedes the state a pending wake-up carries.
      const pending = wakeups.get(uid);
      if (pending !== undefined) {
        clearTimeout(pending);
        wakeups.delete(uid);
      }
      queues.push(uid, { kind: "event", type: event.type, object: event.object, left });
    }
    for (const timer of wakeups.values()) clearTimeout(timer);
  })().finally(() => {
    // A stream that stops before its listing must not hold the other handlers (or `ready`) back for ever.
    if (indexers.length) indexes.listed(indexKey);
    markListed();
  });
  const stop = async (cause: StopCause, grace: number): Promise<string[]> => {
    controller.abort(new Error(`the stream ${name} is stopping (${cause})`));
    unsubscribe?.();
    unregister();
    // Daemons and timers learn of the stop at once; the queues drain meanwhile.
    const stopping = Promise.all([...memories.values()].map((memory) => memory.background?.shutdown(cause, grace)));
    await done;
    const exitTimeout = settings.batching.exitTimeout;
    const left = await queues.drain(AbortSignal.timeout(exitTimeout * 1000));
    await stopping;
    for (const timer of wakeups.values()) clearTimeout(timer);
    memories.clear();
    parked.clear();
    // Objects no longer served leave the indexes; when the operator exits, nobody reads them.
    if (indexers.length && cause !== "operatorExiting") {
      for (const identity of watcher.state.known.values()) indexes.forget(identity as KubernetesObject);
    }
    return [...left.values()].map((work) => describe(work[0].object));
  };
  return { name, health: watcher.health, listed, stop };
}

/** The name of a stream: its resource, and its namespace unless it watches all of them. */
export function streamName(resource: Resource, namespace: string | null): string {
  return resourceName(resource) + (namespace ? ` in ${namespace}` : "");
}

/** An object as `namespace/name` (or `name`) for log lines about several objects. */
function describe(body: KubernetesObject): string {
  const { namespace, name } = body.metadata;
  return namespace ? `${namespace}/${name}` : `${name}`;
}

/** Logs an unexpected error of a cycle with the object's reference. */
function reportError(body: KubernetesObject, error: unknown, delay?: number): void {
  const message = delay === undefined
    ? "An unexpected error while processing the object."
    : `Throttling for ${delay} seconds due to an unexpected error.`;
  new ObjectLogger(body).exception(message, error);
}
