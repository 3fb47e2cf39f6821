/**
 * What a watch stream is started with ({@linkcode ServeDeps}), and the names that log lines give to
 * a stream and to its objects.
 *
 * @module
 */

import type { ApiClient } from "../api/client.ts";
import type { OperatorIndexes } from "../engines/indexing.ts";
import type { QueueActivity } from "../engines/queueing.ts";
import type { Memo } from "../handling/context.ts";
import type { BackgroundHandler, ChangeHandler, EventHandler } from "../handling/handlers.ts";
import type { Lifecycle } from "../handling/lifecycles.ts";
import type { KubernetesObject } from "../model/body.ts";
import { type Resource, resourceName } from "../model/resource.ts";
import type { Settings } from "../settings/settings.ts";
import type { Gate } from "../utils/gate.ts";
import type { ShardScope } from "./shard_scope.ts";

/** What `serveResource()` (serving.ts) needs to start a stream. */
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
  /**
   * With sharding: the part of the objects this replica handles, taken when the stream starts and
   * again on `StreamHandle.rescope()`. Other objects reach only the indexes declared
   * `{ sharded: false }` (with such an index, the stream watches the resource unsharded).
   */
  shard?: ShardScope;
  /** Told when the stream's queues get work and run out of it (the idle collection). */
  activity?: QueueActivity;
}

/** The name of a stream: its resource, and its namespace unless it watches all of them. */
export function streamName(resource: Resource, namespace: string | null): string {
  return resourceName(resource) + (namespace ? ` in ${namespace}` : "");
}

/** An object as `namespace/name` (or `name`) for log lines about several objects. */
export function describe(body: KubernetesObject): string {
  const { namespace, name } = body.metadata;
  return namespace ? `${namespace}/${name}` : `${name}`;
}
