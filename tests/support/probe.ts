/**
 * Knowing that the operator is done with an object before asserting that something did NOT
 * happen (a handler not called, nothing written), without sleeping: an event handler added to the
 * test's registry notes every state the watch delivers, and the `kopf_queue_depth` metric says
 * when no object's cycle is queued or running. An event stays in its object's queue until its
 * cycle ends, so once the probe has seen the object's current state and the queues are empty, the
 * cycle of that state is over; if the object is still in that state then, the cycle wrote nothing.
 * A probe in a registry that several operators use one after another remembers what the earlier
 * ones saw: ask it once the later operator is ready (its listed objects are queued by then).
 * The metrics are the process's: the queues of every operator running in the test count, and
 * `kopf_background_running` likewise says when daemons and timers have ended.
 *
 * @module
 */

import * as kopf from "@kopf/kopf";
import { resourcePath } from "../../src/api/paths.ts";
import type { KubernetesObject } from "../../src/model/body.ts";
import type { Resource } from "../../src/model/resource.ts";
import { kopfMetrics, metricsRegistry } from "../../src/observability/metrics.ts";
import "../../src/observability/stream_metrics.ts";
import { KOPFEXAMPLES, testCluster } from "./cluster.ts";
import { eventually } from "./eventually.ts";

/**
 * Waits until the operator's streams of a resource (in this process) have no cycle queued or
 * running. Call it once the event in question is known to be delivered (a handler has seen it):
 * from then on, the event's cycle is queued or running until it is over.
 */
export async function queuesDrained(resource: Resource = KOPFEXAMPLES): Promise<void> {
  await eventually(`the queues of ${resource.plural} to drain`, () => queuesEmpty(resource));
}

/** How many daemons or timers run in this process (the `kopf_background_running` metric). */
export function backgroundRunning(kind: "daemon" | "timer"): number {
  return kopfMetrics.background.get([kind]);
}

/** Waits until no daemon or timer of the kind runs in this process: each has returned, failed for good, or stopped. */
export async function backgroundEnded(kind: "daemon" | "timer"): Promise<void> {
  await eventually(`every ${kind} to end`, () => backgroundRunning(kind) === 0);
}

/** How many events and wake-ups the operator's streams of a resource (in this process) hold queued or in progress. */
export function queueDepth(resource: Resource = KOPFEXAMPLES): number {
  metricsRegistry.render(); // the gauge is collected from the streams when rendered
  return kopfMetrics.queueDepth.get([resource.plural]);
}

function queuesEmpty(resource: Resource): boolean {
  return queueDepth(resource) === 0;
}

/** An `on.event` handler that notes what the operator's watch delivers; see the module's description. */
export class EventProbe {
  readonly #resource: Resource;
  /** The resourceVersions delivered, by `namespace/name`. */
  readonly #seen = new Map<string, Set<string>>();
  /** The objects whose DELETED event was delivered, as `namespace/name`. */
  readonly #deleted = new Set<string>();

  /** Adds the probe to the registry (before the operator starts); it sees every object of the resource. */
  constructor(registry: kopf.Registry, resource: Resource = KOPFEXAMPLES) {
    this.#resource = resource;
    kopf.on.event(resource.plural, { registry, id: "eventProbe" }, ({ body, type }) => {
      const key = `${body.metadata.namespace}/${body.metadata.name}`;
      if (type === "DELETED") this.#deleted.add(key);
      const versions = this.#seen.get(key) ?? new Set();
      versions.add(body.metadata.resourceVersion ?? "");
      this.#seen.set(key, versions);
    });
  }

  /**
   * Waits until the operator has handled the object's current state and written nothing since;
   * returns the object as it is then.
   */
  async caughtUp(namespace: string, name: string): Promise<KubernetesObject> {
    const { client } = await testCluster();
    const path = resourcePath(this.#resource, { namespace, name });
    const read = () => client.request<KubernetesObject>({ path });
    return await eventually(`the operator to catch up with ${namespace}/${name}`, async () => {
      const body = await read();
      const version = body.metadata.resourceVersion ?? "";
      if (!this.#seen.get(`${namespace}/${name}`)?.has(version)) {
        throw new Error(`the watch has not delivered resourceVersion ${version} yet`);
      }
      if (!queuesEmpty(this.#resource)) throw new Error("a cycle is queued or running");
      const again = await read();
      return again.metadata.resourceVersion === version ? again : undefined;
    });
  }

  /** Waits until the watch has delivered the object's deletion and its cycle is over. */
  async deleted(namespace: string, name: string): Promise<void> {
    await eventually(`the operator to handle the deletion of ${namespace}/${name}`, () => {
      if (!this.#deleted.has(`${namespace}/${name}`)) throw new Error("the watch has not delivered DELETED yet");
      return queuesEmpty(this.#resource);
    });
  }
}
