/**
 * Settings of leader election: replicas of one operator compete for a `coordination.k8s.io/v1`
 * Lease; the holder handles objects, the others stand by with their watch streams running.
 *
 * @module
 */

/**
 * Leader election with a Lease (beyond Kopf: its peering pauses all replicas of the same
 * priority). `kopf run --leader-elect` turns it on; the durations are controller-runtime's
 * defaults.
 *
 * @example
 * ```ts
 * import * as kopf from "@kopf/kopf";
 * kopf.on.startup(function configure({ settings }) {
 *   settings.leaderElection.enabled = true;
 *   settings.leaderElection.leaseName = "my-operator";
 *   settings.leaderElection.leaseNamespace = "operators";
 * });
 * ```
 */
export class LeaderElectionSettings {
  /** Whether replicas elect a leader; only the leader handles objects. Default: `false`. */
  enabled = false;
  /** The name of the Lease. Give each operator its own: operators sharing a Lease share one leader. */
  leaseName = "kopf";
  /**
   * The namespace of the Lease; `null`: the pod's own namespace when running in a cluster (from
   * the service account), else `default`.
   */
  leaseNamespace: string | null = null;
  /**
   * Seconds a leader's claim lasts after its last renewal: the longest a dead leader's replicas
   * wait before one of them takes over. Default: 15.
   */
  leaseDuration = 15;
  /**
   * Seconds a leader keeps trying to renew before it gives up leading (it then stops handling
   * objects and campaigns again). Shorter than `leaseDuration`. Default: 10.
   */
  renewDeadline = 10;
  /** Seconds between renewals by the leader, and between attempts by the others. Default: 2. */
  retryPeriod = 2;
}
