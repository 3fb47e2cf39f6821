/**
 * Whether this operator handles objects now: peering may pause it in favour of other operators
 * (Kopf's priorities, `kopf freeze`), and with leader election only the replica that holds the
 * Lease handles objects while the others stand by with their streams watching.
 *
 * Pausing (peering) stops the streams, their daemons and timers; standing by (leadership) keeps
 * the streams running behind a closed {@linkcode Gate}. With leader election, only the leader
 * takes part in peering, and under one identity shared by the replicas of its Lease
 * ({@linkcode leasePeeringIdentity}): they share a priority, and Kopf's peering pauses for a live
 * record of the same priority -- a new leader would pause for its dead predecessor's record until
 * it expired. With one identity, a new leader takes over its predecessor's record instead; it is
 * removed at a graceful stop, and left to the next leader when the leadership is lost.
 *
 * @module
 */

import { getLogger } from "@logtape/logtape";
import { kopfMetrics } from "../observability/metrics.ts";
import type { ApiClient } from "../api/client.ts";
import type { LeaderElector } from "../engines/leader_election.ts";
import type { Peering } from "../engines/peering.ts";
import type { Settings } from "../settings/settings.ts";
import { Gate } from "../utils/gate.ts";
import type { Orchestrator } from "./orchestration.ts";
import type { Sharding } from "./sharding.ts";

const logger = getLogger(["kopf", "activation"]);

/** The groups whose CRDs define the peering resources. */
const PEERING_GROUPS = new Set(["kopf.dev", "zalando.org"]);

/**
 * The peering identity of whichever replica leads with this Lease: one record per elected group,
 * whoever holds it, e.g. `lease:kopf-system/kopf`.
 *
 * @param lease The Lease as `namespace/name`.
 */
export function leasePeeringIdentity(lease: string): string {
  return `lease:${lease}`;
}

/** What {@linkcode Activation.start} needs. */
export interface ActivationOptions {
  /** The API client. */
  client: ApiClient;
  /** The operator's settings (`peering`, `leaderElection`, `watching`), read at start. */
  settings: Settings;
  /**
   * This operator's identity in the Lease, and in peering records without leader election (with
   * it, the leader's records are the Lease's: {@linkcode leasePeeringIdentity}). Asked for only
   * when one of them starts: a standalone operator never makes it (the default one reads the clock,
   * random numbers and the host's name, whose code costs an idle operator ~0.7 MiB:
   * docs/performance/memory.md, "What brought the binary's pages in").
   */
  identity: () => string;
  /** The streams to pause and resume. */
  orchestrator: Orchestrator;
  /** The namespaces served now (for namespaced peering); empty when cluster-wide. */
  namespaces: readonly string[];
  /**
   * The operator's stop: it interrupts a start that cannot finish (e.g. while the API is down);
   * afterwards, {@linkcode Activation.close} stops everything and releases what it holds.
   */
  signal: AbortSignal;
}

/**
 * Pauses and resumes the operator's streams for peering, and opens and closes the gate of the
 * streams for leader election.
 */
export class Activation {
  /**
   * The gate the streams wait at: open while this replica leads; absent without leader
   * election (the streams then handle objects whenever they run).
   */
  readonly gate: Gate | undefined;
  readonly #options: ActivationOptions;
  #namespaces: readonly string[];
  #peering: Peering | undefined;
  #elector: LeaderElector | undefined;
  #sharding: Sharding | undefined;
  /** The identity of peering records, when it is not this operator's own (leader election, sharding). */
  #peeringIdentity: string | undefined;
  #closed = false;
  /** Transitions, one after another: each one awaits the streams' stops and starts. */
  #queue: Promise<unknown> = Promise.resolve();
  /** The start of peering after the last win of the leadership, while it may still run. */
  #peeringStart: Promise<void> | undefined;

  private constructor(options: ActivationOptions) {
    this.#options = options;
    this.#namespaces = options.namespaces;
    this.gate = options.settings.leaderElection.enabled ? new Gate(false) : undefined;
  }

  /**
   * Starts leader election (if enabled) or peering (unless standalone). Resolves once the
   * initial state is known: with peering, whether the operator starts paused (the orchestrator
   * is paused then); with leader election at once, standing by until the Lease is won.
   */
  static async start(options: ActivationOptions): Promise<Activation> {
    const activation = new Activation(options);
    const { settings } = options;
    kopfMetrics.leader.set([], settings.leaderElection.enabled ? 0 : 1);
    // Leader election, sharding and peering load with their first use: a standalone operator
    // without them does not keep their code (~1 MiB of RSS) for its lifetime.
    if (settings.leaderElection.enabled) {
      const { LeaderElector } = await import("../engines/leader_election.ts");
      const identity = options.identity();
      activation.#elector = LeaderElector.start({
        client: options.client,
        settings: settings.leaderElection,
        watching: settings.watching,
        identity,
        onChange: (leading) => activation.#enqueue(() => activation.#lead(leading)),
      });
      activation.#peeringIdentity = leasePeeringIdentity(activation.#elector.lease);
      logger.info("Standing by for the leadership (Lease {lease}) as {identity}.", {
        lease: activation.#elector.lease,
        identity,
      });
    } else {
      if (settings.sharding.group !== null) {
        const { Sharding } = await import("./sharding.ts");
        activation.#sharding = await Sharding.start(options);
        // The members share a priority, and peering pauses for a peer of the same one: one record for the group.
        activation.#peeringIdentity = activation.#sharding.peeringIdentity;
      }
      if (!settings.peering.standalone) await activation.#startPeering();
    }
    return activation;
  }

  /** The sharding of this replica, if it is a member of a shard group. */
  get sharding(): Sharding | undefined {
    return this.#sharding;
  }

  /** The served namespaces have changed: namespaced peering follows them. */
  updateNamespaces(namespaces: Iterable<string>): void {
    this.#namespaces = [...namespaces];
    this.#peering?.updateNamespaces(this.#namespaces);
  }

  /** A CRD has appeared, changed or gone: peering detects its resources again if it is one of theirs. */
  crdChanged(group: string | undefined): void {
    if (group !== undefined && PEERING_GROUPS.has(group)) this.#peering?.crdChanged();
  }

  /** Stops peering (removing this operator's records) and leader election (releasing the Lease). */
  async close(): Promise<void> {
    this.#closed = true;
    await this.#queue;
    // A leader that has just won may still be starting its peering (and writing its record): wait for it.
    await this.#peeringStart?.catch(() => {});
    // The group's record stays while other members keep it alive.
    await this.#peering?.close({ keepRecords: this.#sharding?.othersAlive ?? false });
    this.#peering = undefined;
    await this.#elector?.close();
    await this.#sharding?.close();
  }

  async #startPeering(): Promise<void> {
    const { client, settings, orchestrator, signal } = this.#options;
    const { Peering } = await import("../engines/peering.ts");
    // Only a start is interrupted by the stop: later, close() stops peering and removes the records.
    const starting = new AbortController();
    const interrupt = () => starting.abort(signal.reason);
    signal.addEventListener("abort", interrupt, { once: true });
    let peering: Peering;
    try {
      peering = await Peering.start({
        client,
        settings: settings.peering,
        watching: settings.watching,
        identity: this.#peeringIdentity ?? this.#options.identity(),
        namespaces: this.#namespaces,
        signal: starting.signal,
        onChange: (paused) => {
          kopfMetrics.peeringPaused.set([], paused ? 1 : 0);
          this.#enqueue(() => paused ? orchestrator.pause() : orchestrator.resume());
        },
      });
    } finally {
      signal.removeEventListener("abort", interrupt);
    }
    this.#peering = peering;
    kopfMetrics.peeringPaused.set([], peering.paused ? 1 : 0);
    if (peering.paused) await orchestrator.pause();
  }

  async #lead(leading: boolean): Promise<void> {
    const { orchestrator } = this.#options;
    if (this.#closed || this.#options.signal.aborted) return;
    kopfMetrics.leader.set([], leading ? 1 : 0);
    if (leading) {
      this.#peeringStart = this.#startPeering();
      await this.#peeringStart;
      this.gate!.set(true);
      return;
    }
    this.gate!.set(false);
    // The record is the group's: the next leader (maybe holding the Lease already) keeps it alive.
    await this.#peering?.close({ keepRecords: true });
    this.#peering = undefined;
    // New streams behind the closed gate: the daemons and timers of the old ones stop
    // (operatorPausing), and the objects' work is left to the new leader.
    await orchestrator.pause();
    await orchestrator.resume();
  }

  #enqueue(step: () => Promise<unknown>): void {
    this.#queue = this.#queue.then(step).catch((error) => {
      logger.error("Pausing or resuming the operator has failed: {error}", { error });
    });
  }
}
