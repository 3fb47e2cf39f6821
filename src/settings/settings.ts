/**
 * All operator settings, grouped as Kopf groups them, with Kopf's defaults.
 *
 * @module
 */

import { AdmissionSettings } from "./admission.ts";
import { BackgroundSettings } from "./background.ts";
import { BatchingSettings } from "./batching.ts";
import { ExecutionSettings } from "./execution.ts";
import { LeaderElectionSettings } from "./leader_election.ts";
import { ShardingSettings } from "./sharding.ts";
import { MetricsSettings } from "./metrics.ts";
import { NetworkingSettings } from "./networking.ts";
import { PeeringSettings } from "./peering.ts";
import { PersistenceSettings } from "./persistence.ts";
import { PostingSettings } from "./posting.ts";
import { ProcessSettings } from "./process.ts";
import { ScanningSettings } from "./scanning.ts";
import { WatchingSettings } from "./watching.ts";

/**
 * The settings of one operator; pass them to `kopf.operator({ settings })`.
 *
 * @example
 * ```ts
 * import * as kopf from "@kopf/kopf";
 * const settings = new kopf.Settings();
 * settings.watching.inactivityTimeout = 30;
 * settings.networking.errorBackoffs = [1, 2, 4];
 * ```
 */
export class Settings {
  /** Timeouts and retries of API requests. */
  readonly networking: NetworkingSettings = new NetworkingSettings();
  /** Watch streams. */
  readonly watching: WatchingSettings = new WatchingSettings();
  /** State kept on the objects. */
  readonly persistence: PersistenceSettings = new PersistenceSettings();
  /** Handler execution. */
  readonly execution: ExecutionSettings = new ExecutionSettings();
  /** Per-object processing. */
  readonly batching: BatchingSettings = new BatchingSettings();
  /** Per-object processing: Kopf 1.42's name for {@linkcode Settings.batching}, the same object. */
  get queueing(): BatchingSettings {
    return this.batching;
  }
  /** Kubernetes Events: explicit ones, and log lines (when `loggers` is on). */
  readonly posting: PostingSettings = new PostingSettings();
  /** Daemons and timers when they stop. */
  readonly background: BackgroundSettings = new BackgroundSettings();
  /** Stopping and the liveness endpoint. */
  readonly process: ProcessSettings = new ProcessSettings();
  /** The runtime observation of namespaces and CRDs. */
  readonly scanning: ScanningSettings = new ScanningSettings();
  /** Admission webhooks: the server and the managed webhook configurations. */
  readonly admission: AdmissionSettings = new AdmissionSettings();
  /** Keep-alives on the peering objects, priorities, pausing for peers. */
  readonly peering: PeeringSettings = new PeeringSettings();
  /** Leader election among replicas with a Lease (off by default). */
  readonly leaderElection: LeaderElectionSettings = new LeaderElectionSettings();
  /** Sharding: replicas with the same group split the objects between them. */
  readonly sharding: ShardingSettings = new ShardingSettings();
  /** The Prometheus metrics endpoint (off by default). */
  readonly metrics: MetricsSettings = new MetricsSettings();
}
