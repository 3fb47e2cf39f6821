/**
 * The set of watch streams as desired state: which (resource × namespace) streams should run,
 * given the served resources and the served namespaces, and starting or stopping streams so
 * that the running set matches -- when namespaces appear or go, when CRDs appear, change or go,
 * when the operator pauses, resumes or exits.
 *
 * It knows nothing of watching or handling: a starter function makes the streams.
 *
 * @module
 */

import { getLogger } from "@logtape/logtape";
import type { WatchHealth } from "../api/watching.ts";
import type { StopCause } from "../handling/stopping.ts";
import { type Resource, resourceName } from "../model/resource.ts";

const logger = getLogger(["kopf", "orchestration"]);

/** One stream's scope: a resource, and a namespace (`null`: cluster-wide or cluster-scoped). */
export interface StreamScope {
  /** The discovered resource. */
  readonly resource: Resource;
  /** The namespace; `null` for all namespaces and for cluster-scoped resources. */
  readonly namespace: string | null;
}

/** A served resource and what its streams depend on besides the resource itself. */
export interface ServedResource {
  /** The discovered resource. */
  readonly resource: Resource;
  /**
   * Whatever else defines its streams (e.g. the ids of its handlers): a running stream whose
   * signature differs from the desired one is restarted.
   */
  readonly signature: string;
}

/** A running stream, as a starter returns it. */
export interface StreamHandle {
  /** A name for logs and health: `kopfexamples.v1.kopf.dev in ns1`. */
  readonly name: string;
  /** The health of its watch. */
  readonly health: WatchHealth;
  /** Resolves once its first listing is done (or it stopped before). */
  readonly listed: Promise<void>;
  /**
   * Stops it: the watch ends, the objects' daemons and timers stop for the cause (daemons
   * without their own `cancellationTimeout` get `grace` seconds), the queued work gets
   * `settings.batching.exitTimeout`. Resolves with the objects left unprocessed.
   */
  stop(cause: StopCause, grace: number): Promise<string[]>;
  /**
   * Takes a new partition of the objects (sharding) without stopping: the objects no longer in it
   * stop being handled (their daemons and timers stop for the cause, with `grace` as in
   * {@linkcode StreamHandle.stop}), those newly in it are listed. Resolves once the objects lost are
   * no longer handled. A stream without it is restarted instead.
   */
  rescope?(cause: StopCause, grace: number): Promise<void>;
}

/**
 * Makes and starts a stream. `instance` counts the streams started for the same scope (1 for
 * the first), e.g. to tell a restarted stream from its predecessor.
 */
export type StreamStarter = (scope: StreamScope, instance: number) => StreamHandle;

/** Options of an {@linkcode Orchestrator}. */
export interface OrchestratorOptions {
  /** Makes and starts one stream. */
  start: StreamStarter;
  /** Seconds daemons without a `cancellationTimeout` get when their stream stops. */
  grace: number;
  /**
   * A map to keep the running streams' health in, by stream name (e.g. the one that the liveness
   * endpoint reads); a new map otherwise.
   */
  streams?: Map<string, WatchHealth>;
}

interface Running {
  readonly scope: StreamScope;
  readonly signature: string;
  readonly handle: StreamHandle;
  /** The partition it serves (sharding). */
  partition: string | undefined;
}

/**
 * Keeps the running streams equal to the desired ones: one per served resource and served
 * namespace (one cluster-wide for cluster-scoped resources, and for all resources when the
 * namespaces are `null`). Changes are applied one after another, each from the latest desired
 * state; streams that are no longer desired stop (their daemons and timers too) before new
 * ones start. A new partition of the objects (sharding) goes to the running streams, which keep
 * the objects they still serve.
 *
 * Pausing stops every stream and keeps the desired state; resuming starts them again (new
 * streams: they list again). Closing stops everything for good.
 *
 * @example
 * ```ts ignore
 * const orchestrator = new Orchestrator({ start: (scope) => serve(scope), grace: 5 });
 * await orchestrator.update({ resources: [{ resource: kex, signature: "" }], namespaces: ["ns1"] });
 * await orchestrator.update({ namespaces: ["ns1", "dyn-1"] }); // a namespace appeared
 * await orchestrator.pause();   // e.g. another operator with a higher priority appeared
 * await orchestrator.resume();
 * await orchestrator.close("operatorExiting");
 * ```
 */
export class Orchestrator {
  /** The health of the running streams, by name; changes as streams start and stop. */
  readonly streams: Map<string, WatchHealth>;
  readonly #options: OrchestratorOptions;
  readonly #running = new Map<string, Running>();
  readonly #instances = new Map<string, number>();
  #resources = new Map<string, ServedResource>();
  #namespaces: ReadonlySet<string> | null = null;
  #paused = false;
  #closed = false;
  /** The part of the objects to serve (sharding): `""` serves none; `undefined` (no sharding) all. */
  #partition: string | undefined;
  #queue: Promise<unknown> = Promise.resolve();

  /** Creates it with nothing desired and nothing running. */
  constructor(options: OrchestratorOptions) {
    this.#options = options;
    this.streams = options.streams ?? new Map();
  }

  /** Whether {@linkcode pause} was called without a {@linkcode resume} since. */
  get paused(): boolean {
    return this.#paused;
  }

  /** The running streams, by name. */
  get running(): ReadonlyMap<string, StreamHandle> {
    return new Map([...this.#running.values()].map(({ handle }) => [handle.name, handle]));
  }

  /**
   * Changes the desired state -- the served resources, the served namespaces (`null`: all,
   * cluster-wide), the partition of the objects under sharding (`""`: none, no streams), or
   * several -- and starts and stops streams to match. Resolves with the streams started by this
   * change, once it is applied.
   */
  update(
    desired: { resources?: Iterable<ServedResource>; namespaces?: Iterable<string> | null; partition?: string },
  ): Promise<StreamHandle[]> {
    if (desired.partition !== undefined) this.#partition = desired.partition;
    if (desired.resources !== undefined) {
      this.#resources = new Map([...desired.resources].map((served) => [resourceName(served.resource), served]));
    }
    if (desired.namespaces !== undefined) {
      this.#namespaces = desired.namespaces === null ? null : new Set(desired.namespaces);
    }
    return this.#apply("operatorPausing");
  }

  /**
   * Stops all streams (their objects' daemons and timers stop with the cause `operatorPausing`)
   * and keeps the desired state; changes to it while paused are remembered, not applied.
   */
  async pause(): Promise<void> {
    this.#paused = true;
    await this.#apply("operatorPausing");
  }

  /** Starts the desired streams again after a {@linkcode pause}; resolves with the streams started. */
  resume(): Promise<StreamHandle[]> {
    this.#paused = false;
    return this.#apply("operatorPausing");
  }

  /**
   * Stops all streams for good (e.g. with `operatorExiting` when the operator exits); resolves
   * with the objects left unprocessed (already logged as a warning).
   */
  async close(cause: StopCause): Promise<string[]> {
    this.#closed = true;
    const left: string[] = [];
    await this.#enqueue(async () => left.push(...await this.#stop([...this.#running.keys()], cause)));
    return left;
  }

  /** The desired streams, by key. */
  #desired(): Map<string, { scope: StreamScope; signature: string }> {
    const desired = new Map<string, { scope: StreamScope; signature: string }>();
    if (this.#paused || this.#closed || this.#partition === "") return desired;
    for (const { resource, signature } of this.#resources.values()) {
      const namespaces = resource.namespaced && this.#namespaces !== null ? [...this.#namespaces] : [null];
      for (const namespace of namespaces) {
        desired.set(keyOf(resource, namespace), { scope: { resource, namespace }, signature });
      }
    }
    return desired;
  }

  #apply(cause: StopCause): Promise<StreamHandle[]> {
    return this.#enqueue(async () => {
      const desired = this.#desired();
      const obsolete = [...this.#running].filter(([key, running]) =>
        desired.get(key)?.signature !== running.signature ||
        JSON.stringify(desired.get(key)?.scope.resource) !== JSON.stringify(running.scope.resource) ||
        (running.partition !== this.#partition && !running.handle.rescope)
      ).map(([key]) => key);
      await this.#stop(obsolete, cause);
      await Promise.all([...this.#running.values()].map(async (running) => {
        if (running.partition === this.#partition) return;
        running.partition = this.#partition;
        await running.handle.rescope!(cause, this.#options.grace);
      }));
      // The starts happen in one go: a starter may rely on no stream of this batch having begun
      // before all of them are made (e.g. to expect all of their listings at once).
      const started: StreamHandle[] = [];
      for (const [key, { scope, signature }] of this.#desired()) {
        if (this.#running.has(key)) continue;
        const instance = (this.#instances.get(key) ?? 0) + 1;
        this.#instances.set(key, instance);
        const handle = this.#options.start(scope, instance);
        this.#running.set(key, { scope, signature, handle, partition: this.#partition });
        this.streams.set(handle.name, handle.health);
        logger.debug("Stream {name} has started.", { name: handle.name });
        started.push(handle);
      }
      return started;
    });
  }

  async #stop(keys: string[], cause: StopCause): Promise<string[]> {
    const stops = keys.map(async (key) => {
      const running = this.#running.get(key);
      if (!running) return [];
      this.#running.delete(key);
      this.streams.delete(running.handle.name);
      const left = await running.handle.stop(cause, this.#options.grace);
      logger.debug("Stream {name} has stopped.", { name: running.handle.name });
      return left;
    });
    return (await Promise.all(stops)).flat();
  }

  #enqueue<T>(step: () => Promise<T>): Promise<T> {
    const run = this.#queue.then(step);
    this.#queue = run.catch(() => undefined);
    return run;
  }
}

function keyOf(resource: Resource, namespace: string | null): string {
  return JSON.stringify([resourceName(resource), namespace]);
}
