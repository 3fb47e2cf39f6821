/**
 * Leader election with a `coordination.k8s.io/v1` Lease: replicas of one operator compete for
 * the Lease; the holder renews it every `retryPeriod` and leads, the others watch it and take
 * over when it is released or expires.
 *
 * Standbys write nothing and poll nothing while their watch works: the watch tells them the
 * moment the record changes, and they measure expiry from that moment on their own clock (clocks
 * of different machines disagree; each measures durations well). Their only writes are the
 * attempts to take the Lease: when it is missing, released, or expired.
 *
 * @module
 */

import { getLogger } from "@logtape/logtape";
import type { ApiClient } from "../api/client.ts";
import { ApiConflictError, ApiNotFoundError, describeCause } from "../api/errors.ts";
import { createLease, getLease, type LeaseTarget, replaceLease } from "../api/leases.ts";
import { podNamespace } from "../api/service_account.ts";
import {
  acquiredLeaseSpec,
  type Lease,
  leaseHolder,
  type LeaseTakeReason,
  leaseVerdict,
  releasedLeaseSpec,
  renewedLeaseSpec,
} from "../model/lease.ts";
import type { LeaderElectionSettings } from "../settings/leader_election.ts";
import type { WatchingSettings } from "../settings/watching.ts";
import { linkSignals } from "../utils/signals.ts";
import { sleep } from "../utils/sleep.ts";
import { LeaseSight } from "./lease_sight.ts";

const logger = getLogger(["kopf", "leadership"]);

/** What a {@linkcode LeaderElector} needs. */
export interface LeaderElectionOptions {
  /** The API client for the Lease's requests and watch. */
  client: ApiClient;
  /**
   * The Lease's name, namespace and durations, read once at start. A `null` namespace means the
   * pod's own (from the service account's `namespace` file), else `default`.
   */
  settings: LeaderElectionSettings;
  /** How the Lease's watch stream behaves. */
  watching: WatchingSettings;
  /** Who campaigns, as written to `holderIdentity`, e.g. `operatorIdentity()`. */
  identity: string;
  /** Called at every transition: `true` on becoming the leader, `false` on ceasing to be it. */
  onChange: (leading: boolean) => void;
  /**
   * Aborting stops everything at once WITHOUT releasing the Lease, as a crash would: the others
   * take over when it expires. `onChange(false)` is still called if it was leading.
   */
  signal?: AbortSignal;
}

/**
 * Campaigns for a Lease and, once it holds it, renews it until closed or until renewals fail for
 * `renewDeadline` seconds (then it stops leading and campaigns again).
 *
 * @example
 * ```ts ignore
 * const elector = LeaderElector.start({
 *   client,
 *   settings: settings.leaderElection,
 *   watching: settings.watching,
 *   identity: operatorIdentity(),
 *   onChange: (leading) => console.log(leading ? "leading" : "standing by"),
 * });
 * // ...
 * await elector.close(); // releases the Lease if it holds it, so that a standby takes over at once
 * ```
 */
export class LeaderElector {
  readonly #client: ApiClient;
  readonly #target: LeaseTarget;
  readonly #identity: string;
  readonly #onChange: (leading: boolean) => void;
  readonly #leaseDuration: number;
  readonly #renewDeadline: number;
  readonly #retryPeriod: number;
  readonly #stop = new AbortController();
  readonly #sight: LeaseSight;
  readonly #now: () => number = () => performance.now();
  #leading = false;
  /** When (local clock, ms) the last successful acquisition or renewal was sent. */
  #renewedAt = 0;
  /** The holder last reported as standing by, to log each holder once. */
  #reportedHolder: string | null = null;
  #closing: Promise<void> | undefined;
  #task: Promise<void> = Promise.resolve();
  #watching: Promise<void> = Promise.resolve();

  private constructor(options: LeaderElectionOptions) {
    const { settings } = options;
    checkDurations(settings);
    this.#client = options.client;
    this.#identity = options.identity;
    this.#onChange = options.onChange;
    this.#leaseDuration = settings.leaseDuration;
    this.#renewDeadline = settings.renewDeadline;
    this.#retryPeriod = settings.retryPeriod;
    this.#target = { namespace: settings.leaseNamespace ?? podNamespace(), name: settings.leaseName };
    this.#sight = new LeaseSight({
      client: this.#client,
      target: this.#target,
      watching: options.watching,
      retryPeriod: this.#retryPeriod,
      // Half the margin between the holder giving up and the others taking over: safe against that much skew.
      trust: (this.#leaseDuration - this.#renewDeadline) * 500,
      signal: this.#stop.signal,
      now: this.#now,
    });
  }

  /**
   * Starts campaigning at once: watches the Lease and takes it if it is missing, released or
   * expired. Throws if the durations make no sense (`renewDeadline` must be shorter than
   * `leaseDuration`, `retryPeriod` above 0).
   */
  static start(options: LeaderElectionOptions): LeaderElector {
    const elector = new LeaderElector(options);
    const signal = options.signal;
    if (signal?.aborted) return elector;
    signal?.addEventListener("abort", () => elector.#stop.abort(), { once: true, signal: elector.#stop.signal });
    elector.#watching = elector.#sight.follow();
    elector.#task = elector.#run();
    return elector;
  }

  /** Whether this replica holds the Lease now. */
  get leading(): boolean {
    return this.#leading;
  }

  /** Where the Lease is: `"namespace/name"`. */
  get lease(): string {
    return this.#sight.name;
  }

  /**
   * Stops campaigning and renewing; if leading, releases the Lease (one write) so that a standby
   * takes over at once, then calls `onChange(false)`. Errors are logged, not thrown.
   */
  close(): Promise<void> {
    this.#closing ??= (async () => {
      const aborted = this.#stop.signal.aborted;
      this.#stop.abort();
      await Promise.all([this.#task, this.#watching]);
      if (!this.#leading) return;
      if (!aborted) await this.#release();
      this.#leading = false;
      this.#notify(false);
    })();
    return this.#closing;
  }

  /** Campaigns and leads in turn until stopped. */
  async #run(): Promise<void> {
    while (!this.#stop.signal.aborted) {
      try {
        if (this.#leading) await this.#lead();
        else await this.#campaign();
      } catch (error) {
        if (this.#stop.signal.aborted) break;
        logger.error("Leader election for the Lease {lease} failed unexpectedly ({problem}); retrying in {delay} s.", {
          lease: this.lease,
          problem: describeCause(error),
          delay: this.#retryPeriod,
        });
        await sleep(this.#retryPeriod, this.#stop.signal);
      }
    }
    // Stopped by the caller's signal (a crash, as far as the Lease is concerned): no release.
    if (this.#leading && !this.#closing) {
      this.#leading = false;
      logger.warn("Stopped leading with the Lease {lease} without releasing it (aborted).", { lease: this.lease });
      this.#notify(false);
    }
  }

  /** Waits for the Lease to be takeable and takes it; returns once leading or stopped. */
  async #campaign(): Promise<void> {
    while (!this.#stop.signal.aborted) {
      const version = this.#sight.version;
      const lease = this.#sight.lease;
      if (lease === undefined) {
        // Not seen yet: the watch's listing usually tells within moments; if not, read it.
        if (!await this.#sight.pause(this.#retryPeriod, version)) await this.#sight.refresh();
        continue;
      }
      const spec = lease === null ? null : lease.spec ?? {};
      const verdict = leaseVerdict(spec, this.#identity, this.#sight.observedAt, this.#now(), this.#leaseDuration);
      if (verdict.take) {
        if (await this.#acquire(lease, verdict.reason)) return;
        // Lost the race or failed: the watch shows the winner; read the Lease if it does not.
        if (!await this.#sight.pause(this.#retryPeriod, version)) await this.#sight.refresh();
        continue;
      }
      if (verdict.holder !== this.#reportedHolder) {
        this.#reportedHolder = verdict.holder;
        logger.info("Standing by: the Lease {lease} is held by {holder}.", {
          lease: this.lease,
          holder: verdict.holder,
        });
      }
      const remaining = (verdict.expiresAt - this.#now()) / 1000;
      const polling = !this.#sight.watchWorks();
      const changed = await this.#sight.pause(polling ? Math.min(remaining, this.#retryPeriod) : remaining, version);
      if (!changed && polling && this.#now() < verdict.expiresAt) await this.#sight.refresh();
    }
  }

  /** Renews the Lease every `retryPeriod`; returns once no longer leading or stopped. */
  async #lead(): Promise<void> {
    while (!this.#stop.signal.aborted) {
      const next = this.#now() + this.#retryPeriod * 1000;
      while (this.#now() < next) {
        const version = this.#sight.version;
        const other = this.#otherHolder();
        if (other !== null) return this.#stepDown(other);
        await this.#sight.pause((next - this.#now()) / 1000, version);
        if (this.#stop.signal.aborted) return;
      }
      const other = this.#otherHolder();
      if (other !== null) return this.#stepDown(other);
      await this.#renew();
      if (this.#stop.signal.aborted) return;
      const since = (this.#now() - this.#renewedAt) / 1000;
      if (since >= this.#renewDeadline) {
        return this.#stepDown(`no renewal succeeded for ${Math.round(since * 10) / 10} s (renewDeadline)`);
      }
    }
  }

  /** Why the Lease is no longer this replica's, from what was last seen; `null` while it is. */
  #otherHolder(): string | null {
    if (this.#sight.lease === null) return "the Lease was deleted";
    const holder = leaseHolder(this.#sight.lease?.spec);
    if (holder === this.#identity) return null;
    return holder ? `the Lease is held by ${holder} now` : "the Lease was released by somebody else";
  }

  /** Tries to take the Lease in one write; `true` if it succeeded. */
  async #acquire(lease: Lease | null, reason: LeaseTakeReason): Promise<boolean> {
    const sentAt = this.#now();
    try {
      const taken = lease === null
        ? await createLease(this.#client, this.#target, this.#acquiredSpec(null), this.#stop.signal)
        : await replaceLease(this.#client, lease, this.#acquiredSpec(lease), this.#stop.signal);
      this.#sight.succeeded();
      this.#sight.observe(taken);
      this.#renewedAt = sentAt;
      this.#leading = true;
      this.#reportedHolder = null;
      const why = {
        missing: "created it",
        released: "it was free",
        expired: `its holder ${leaseHolder(lease?.spec)} did not renew it within ${
          lease?.spec?.leaseDurationSeconds ?? this.#leaseDuration
        } s`,
        own: "it was held by this identity already",
      }[reason];
      logger.info("Became the leader with the Lease {lease} as {identity} ({why}; {transitions} transitions).", {
        lease: this.lease,
        identity: this.#identity,
        why,
        transitions: taken.spec?.leaseTransitions ?? 0,
      });
      this.#notify(true);
      return true;
    } catch (error) {
      if (this.#stop.signal.aborted) return false;
      if (error instanceof ApiConflictError) {
        logger.debug("Another replica took the Lease {lease} first.", { lease: this.lease });
        return false;
      }
      this.#sight.failed(lease === null ? "create" : "update", error);
      return false;
    }
  }

  #acquiredSpec(lease: Lease | null): ReturnType<typeof acquiredLeaseSpec> {
    return acquiredLeaseSpec(lease ? lease.spec ?? {} : null, this.#identity, this.#leaseDuration, new Date());
  }

  /** One renewal, given up when the renew deadline passes; a conflict re-reads the Lease. */
  async #renew(): Promise<void> {
    const lease = this.#sight.lease;
    if (!lease) return;
    const sentAt = this.#now();
    const left = this.#renewDeadline * 1000 - (sentAt - this.#renewedAt);
    const deadline = new AbortController();
    const timer = setTimeout(() => deadline.abort(new Error("the renew deadline passed")), Math.max(0, left));
    using linked = linkSignals(deadline.signal, this.#stop.signal);
    try {
      const spec = renewedLeaseSpec(lease.spec ?? {}, this.#leaseDuration, new Date());
      const renewed = await replaceLease(this.#client, lease, spec, linked.signal);
      this.#sight.succeeded();
      this.#sight.observe(renewed);
      this.#renewedAt = sentAt;
    } catch (error) {
      if (this.#stop.signal.aborted) return;
      if (error instanceof ApiNotFoundError) {
        this.#sight.observe(null);
        return;
      }
      if (error instanceof ApiConflictError) {
        // Somebody wrote the Lease: see whether it is still this replica's (then the next renewal
        // goes with the new resourceVersion) or another's (then the leading loop steps down).
        await this.#sight.refresh(linked.signal);
        return;
      }
      this.#sight.failed("update", error);
    } finally {
      clearTimeout(timer);
    }
  }

  /** Stops leading, says why, and tells the caller. */
  #stepDown(why: string): void {
    this.#leading = false;
    this.#reportedHolder = null;
    logger.warn("Lost the leadership with the Lease {lease}: {why}. Campaigning again.", { lease: this.lease, why });
    this.#notify(false);
  }

  /** Gives the Lease up in one write (two if a renewal raced with it), so a standby takes over at once. */
  async #release(): Promise<void> {
    for (let attempt = 0;; attempt++) {
      const lease = this.#sight.lease;
      if (!lease || leaseHolder(lease.spec) !== this.#identity) {
        logger.info("Not releasing the Lease {lease}: it is not held by {identity} any more.", {
          lease: this.lease,
          identity: this.#identity,
        });
        return;
      }
      try {
        this.#sight.observe(await replaceLease(this.#client, lease, releasedLeaseSpec(lease.spec ?? {}, new Date())));
        logger.info("Released the Lease {lease}.", { lease: this.lease });
        return;
      } catch (error) {
        let failure = error;
        if (error instanceof ApiConflictError && attempt === 0) {
          try {
            this.#sight.observe(await getLease(this.#client, this.#target));
            continue;
          } catch (reading) {
            failure = reading;
          }
        }
        logger.error(
          "Could not release the Lease {lease} ({problem}); the standbys take over when it expires, " +
            "{duration} s after the last renewal.",
          { lease: this.lease, problem: describeCause(failure), duration: this.#leaseDuration },
        );
        return;
      }
    }
  }

  /** Tells the caller about a transition; its errors are logged, not thrown into the election. */
  #notify(leading: boolean): void {
    try {
      this.#onChange(leading);
    } catch (error) {
      logger.error("The leadership callback failed ({problem}) on {transition}.", {
        problem: describeCause(error),
        transition: leading ? "becoming the leader" : "ceasing to be the leader",
      });
    }
  }
}

/**
 * The durations must be positive and ordered as client-go requires: a leader gives up before its
 * claim lapses, and renews more than once before it gives up.
 */
function checkDurations(settings: LeaderElectionSettings): void {
  const { leaseDuration, renewDeadline, retryPeriod } = settings;
  const positive = [leaseDuration, renewDeadline, retryPeriod].every((value) => Number.isFinite(value) && value > 0);
  if (!positive || !(leaseDuration > renewDeadline && renewDeadline > retryPeriod)) {
    throw new RangeError(
      `settings.leaderElection needs leaseDuration > renewDeadline > retryPeriod > 0 (seconds), but they are ` +
        `${leaseDuration} > ${renewDeadline} > ${retryPeriod}: e.g. 15, 10 and 2 (the defaults), or ` +
        `--leader-elect-lease-duration, --leader-elect-renew-deadline and --leader-elect-retry-period.`,
    );
  }
}
