/**
 * Settings of sharding: replicas of one operator with the same group split the objects of every
 * served resource between them, each holding a `coordination.k8s.io/v1` Lease in the group.
 *
 * @module
 */

/**
 * Sharding across replicas (beyond Kopf, which keeps one active operator): `kopf run --shard-group
 * NAME` turns it on. Each replica handles the objects whose `metadata.uid` hashes (64-bit FNV-1a)
 * into its ranges of the hash space; the API server filters lists and watches by those ranges
 * where it can (Kubernetes 1.36's `ShardedListAndWatch`), the replica filters them itself where not.
 *
 * @example
 * ```ts
 * import * as kopf from "@kopf/kopf";
 * kopf.on.startup(function configure({ settings }) {
 *   settings.sharding.group = "my-operator";
 *   settings.sharding.leaseDuration = 15;
 * });
 * ```
 */
export class ShardingSettings {
  /** The group's name; `null` (the default): no sharding, this replica handles every object. */
  group: string | null = null;
  /**
   * The namespace of the members' Leases; `null`: the pod's own namespace when running in a
   * cluster (from the service account), else `default`.
   */
  namespace: string | null = null;
  /** This member's identity in the group; `null`: `$POD_NAME`, else the host name and the process id. */
  identity: string | null = null;
  /**
   * Seconds a member's claim lasts after its last renewal: the longest the others wait before they
   * take over the ranges of a member that died without a word. Default: 15.
   */
  leaseDuration = 15;
  /**
   * Whether lists and watches ask the API server to filter by the member's ranges: `"auto"` (the
   * default) when the server is found to support it, `"always"`, or `"never"` (the replica filters
   * every object itself). The replica filters client-side in any case, so behaviour is the same;
   * only the bandwidth differs.
   */
  serverSide: "auto" | "always" | "never" = "auto";
}
