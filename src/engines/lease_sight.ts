/**
 * A Lease as one replica sees it: followed by a watch (read with a GET where the watch cannot be
 * relied on), with the moment its record last changed measured on the replica's own clock, and a
 * wait that ends as soon as it changes. The requests about it are reported here too: a refusal by
 * RBAC once with the rule to add, other failures as warnings.
 *
 * @module
 */

import { getLogger } from "@logtape/logtape";
import type { ApiClient } from "../api/client.ts";
import { ApiForbiddenError, ApiNotFoundError, describeCause } from "../api/errors.ts";
import { getLease, LEASES, type LeaseTarget } from "../api/leases.ts";
import { Watcher } from "../api/watching.ts";
import { type Lease, renewalAge, sameLeaseRecord } from "../model/lease.ts";
import type { WatchingSettings } from "../settings/watching.ts";
import { linkSignals } from "../utils/signals.ts";
import { sleep } from "../utils/sleep.ts";

const logger = getLogger(["kopf", "leadership"]);

/** What a {@linkcode LeaseSight} needs. */
export interface LeaseSightOptions {
  client: ApiClient;
  target: LeaseTarget;
  watching: WatchingSettings;
  /** Seconds between two attempts, for the log lines. */
  retryPeriod: number;
  /** How much of a record's renewal age (ms) to believe: the rest may be clock skew. */
  trust: number;
  /** Ends the watch and every wait. */
  signal: AbortSignal;
  /** The local clock (ms). */
  now: () => number;
}

/** The Lease as last seen, and when its record last changed. */
export class LeaseSight {
  readonly #options: LeaseSightOptions;
  readonly #watcher: Watcher;
  /** The Lease as last seen: `undefined` before the first sight, `null` while it does not exist. */
  #lease: Lease | null | undefined = undefined;
  /** When (local clock, ms) the record was last seen to change: expiry counts from here. */
  #observedAt = 0;
  /** Counts the record's changes, so that a wait notices a change made before it began. */
  #version = 0;
  #changed = Promise.withResolvers<void>();
  /** RBAC refuses the requests: logged once until a request succeeds. */
  #forbidden = false;

  constructor(options: LeaseSightOptions) {
    this.#options = options;
    this.#watcher = new Watcher(options.client, LEASES, {
      namespace: options.target.namespace,
      fieldSelector: `metadata.name=${options.target.name}`,
      settings: options.watching,
      signal: options.signal,
    });
  }

  /** The Lease as last seen: `undefined` before the first sight, `null` while it does not exist. */
  get lease(): Lease | null | undefined {
    return this.#lease;
  }

  /** When (local clock, ms) the record was last seen to change. */
  get observedAt(): number {
    return this.#observedAt;
  }

  /** How many times the record has changed: a wait given it notices a change made since. */
  get version(): number {
    return this.#version;
  }

  /** `"namespace/name"`, for the log lines. */
  get name(): string {
    return `${this.#options.target.namespace}/${this.#options.target.name}`;
  }

  /** Follows the Lease with a watch until the signal aborts: every change is observed the moment it happens. */
  async follow(): Promise<void> {
    try {
      for await (const event of this.#watcher) {
        if (event.type === "LISTED") {
          if (this.#watcher.state.known.size === 0) this.observe(null);
          continue;
        }
        if (event.object.metadata.name !== this.#options.target.name) continue;
        this.observe(event.type === "DELETED" ? null : event.object as unknown as Lease);
      }
    } catch (error) {
      // The watcher retries by itself; it ends only with the signal. Polling takes over if not.
      if (!this.#options.signal.aborted) {
        logger.error("The watch of the Lease {lease} ended ({problem}); reading it every {delay} s instead.", {
          lease: this.name,
          problem: describeCause(error),
          delay: this.#options.retryPeriod,
        });
      }
    }
  }

  /** Whether the watch has listed the Lease and is not failing: if it is, the Lease is polled instead. */
  watchWorks(): boolean {
    return this.#watcher.state.listed && this.#watcher.health.failingSince === null && !this.#options.signal.aborted;
  }

  /** Reads the Lease (when the watch cannot be relied on); failures are logged. */
  async refresh(signal: AbortSignal = this.#options.signal): Promise<void> {
    try {
      const lease = await getLease(this.#options.client, this.#options.target, signal);
      this.succeeded();
      this.observe(lease);
    } catch (error) {
      if (signal.aborted) return;
      if (error instanceof ApiNotFoundError) {
        this.succeeded();
        this.observe(null);
        return;
      }
      this.failed("get", error);
    }
  }

  /** Takes in the Lease as seen; restarts the expiry countdown if its record changed. */
  observe(lease: Lease | null): void {
    const before = this.#lease;
    const changed = before === undefined || (before === null) !== (lease === null) ||
      !sameLeaseRecord(before?.spec, lease?.spec);
    this.#lease = lease;
    if (!changed) return;
    this.#observedAt = this.#options.now() - renewalAge(lease?.spec, Date.now(), this.#options.trust);
    this.#version++;
    const changedNow = this.#changed;
    this.#changed = Promise.withResolvers<void>();
    changedNow.resolve();
  }

  /**
   * Waits for some seconds, or until the record changes (or has changed since `version`), or until
   * stopped; `true` if it changed.
   */
  async pause(seconds: number, version: number): Promise<boolean> {
    if (this.#version !== version) return true;
    const timer = new AbortController();
    using linked = linkSignals(timer.signal, this.#options.signal);
    const changed = this.#changed.promise.then(() => true);
    const slept = sleep(Math.max(0, seconds), linked.signal).then(() => false);
    const result = await Promise.race([changed, slept]);
    timer.abort();
    return result || this.#version !== version;
  }

  /** A request about the Lease succeeded: a refusal by RBAC is logged again if it comes back. */
  succeeded(): void {
    this.#forbidden = false;
  }

  /** Logs a failed request: a 403 once with the missing RBAC rule, anything else as a warning. */
  failed(verb: string, error: unknown): void {
    const delay = this.#options.retryPeriod;
    if (error instanceof ApiForbiddenError) {
      if (!this.#forbidden) {
        logger.error(
          "RBAC forbids to {verb} the Lease {lease} ({problem}). Grant the operator's service account the verbs " +
            "get, list, watch, create, update on leases.coordination.k8s.io in the namespace {namespace} " +
            "(a Role and a RoleBinding there). Retrying every {delay} s.",
          { verb, lease: this.name, problem: describeCause(error), namespace: this.#options.target.namespace, delay },
        );
      }
      this.#forbidden = true;
      return;
    }
    logger.warn("Could not {verb} the Lease {lease} ({problem}); retrying in {delay} s.", {
      verb,
      lease: this.name,
      problem: describeCause(error),
      delay,
    });
  }
}
