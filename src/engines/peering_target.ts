/**
 * The peering on one peering object (the `ClusterKopfPeering`, or the `KopfPeering` of one
 * namespace): its watch stream, the keep-alives of this operator's record, the removal of dead
 * peers' records, and the verdict whether the operator must pause for the peers seen there.
 * `peering.ts` runs one per peering object of the scope and combines their verdicts.
 *
 * @module
 */

import { getLogger } from "@logtape/logtape";
import type { ApiClient } from "../api/client.ts";
import { describeCause } from "../api/errors.ts";
import { Watcher } from "../api/watching.ts";
import type { KubernetesObject } from "../model/body.ts";
import { buildPeerRecord, parsePeers, type Peer } from "../model/peering.ts";
import { findConflicts } from "../model/peering_conflicts.ts";
import type { WatchingSettings } from "../settings/watching.ts";
import { type LinkedSignal, linkSignals } from "../utils/signals.ts";
import { sleep } from "../utils/sleep.ts";
import { PeeringNotFoundError, peeringResource, type PeeringTarget, touchPeer, writePeers } from "./peering_records.ts";

const logger = getLogger(["kopf", "peering"]);

/** How long a stop waits for a keep-alive in flight before it aborts it (seconds). */
const KEEP_ALIVE_GRACE = 5;

/** The peering settings as read at start: later changes to the settings object do not matter. */
export interface PeeringConfig {
  name: string;
  priority: number;
  lifetime: number;
  mandatory: boolean;
  standalone: boolean;
  stealth: boolean;
  clusterwide: boolean;
}

/**
 * Seconds until the next keep-alive: `lifetime` minus a random 5...10 s, at least 1 s, so that the
 * record is refreshed before it expires even with some delay on the way.
 *
 * @example
 * ```ts
 * import { keepAliveInterval } from "./peering_target.ts";
 * keepAliveInterval(60, () => 0); // 55
 * keepAliveInterval(7, () => 0); // 2
 * keepAliveInterval(7, () => 0.99); // 1 (never less)
 * ```
 *
 * @param lifetime The lifetime of the record, in seconds.
 * @param random A random generator in [0, 1).
 * @returns The interval in seconds.
 */
export function keepAliveInterval(lifetime: number, random: () => number = Math.random): number {
  const margin = 5 + Math.floor(random() * 6);
  return Math.max(1, lifetime - margin);
}

/** How a peering object is named in keep-alive messages: `'default' cluster-wide` or `'default' in 'ns'`. */
export function where(target: PeeringTarget): string {
  return target.namespace === null ? `'${target.name}' cluster-wide` : `'${target.name}' in '${target.namespace}'`;
}

export function identities(peers: readonly Peer[]): string {
  return `[${peers.map((peer) => peer.identity).join(", ")}]`;
}

/** What a TargetPeering needs from the operator's peering. */
export interface TargetContext {
  client: ApiClient;
  config: PeeringConfig;
  watching: WatchingSettings;
  identity: string;
  signal: AbortSignal;
  /** Called after every evaluation, so that the operator's `paused` is recomputed. */
  evaluated: () => void;
}

/** Why one peering object pauses the operator, or not: for messages on changes only. */
type Verdict =
  | { state: "running" | "absent-ok" }
  | { state: "absent" }
  | { state: "higher" | "same"; peers: string };

/** The peering on one peering object: its watch stream, its keep-alives, and its verdict. */
export class TargetPeering {
  /** The peering object. */
  readonly target: PeeringTarget;
  /** Resolves after the first evaluation (or when stopped). */
  readonly firstEvaluation: Promise<void>;
  /** Whether this peering object pauses the operator; undefined until the first evaluation. */
  paused: boolean | undefined;
  readonly #context: TargetContext;
  /** Aborted by stop(). */
  readonly #own = new AbortController();
  /** Aborted by stop() or when the operator's peering stops: ends the loops. */
  readonly #abort: LinkedSignal;
  readonly #removing = new Set<string>();
  readonly #tasks = new Set<Promise<unknown>>();
  #evaluatedOnce: () => void = () => {};
  #body: KubernetesObject | undefined;
  #listed = false;
  #verdict: Verdict | undefined;
  #recheck: ReturnType<typeof setTimeout> | undefined;
  /** The last keep-alive found no peering object: write the next one as soon as the object appears. */
  #missing = false;
  /** Ends the sleep between keep-alives early. */
  #nap: AbortController | undefined;
  /**
   * Aborts a keep-alive in flight, a moment after the stop: an aborted request may still be applied
   * by the server, after the removal of the record that follows the stop, and bring the record back.
   */
  readonly #writes = new AbortController();
  #writesGrace: ReturnType<typeof setTimeout> | undefined;

  /** Prepares it; nothing runs until {@linkcode TargetPeering.start}. */
  constructor(target: PeeringTarget, context: TargetContext) {
    this.target = target;
    this.#context = context;
    this.firstEvaluation = new Promise((resolve) => this.#evaluatedOnce = resolve);
    this.#abort = linkSignals(context.signal, this.#own.signal);
    // A pending recheck must not outlive the peering, also when only the caller's signal aborts.
    this.#abort.signal.addEventListener("abort", () => {
      clearTimeout(this.#recheck);
      this.#writesGrace = setTimeout(() => this.#writes.abort(), KEEP_ALIVE_GRACE * 1000);
    }, { once: true });
  }

  /** Starts the watch stream and the keep-alives. */
  start(): void {
    this.#track(this.#watch());
    this.#track(this.#keepAlive());
  }

  /**
   * Stops the watch stream and the keep-alives, after a keep-alive in flight (for up to
   * {@linkcode KEEP_ALIVE_GRACE} s); the record stays: removing it is the caller's choice.
   */
  async stop(): Promise<void> {
    this.#own.abort();
    clearTimeout(this.#recheck);
    this.#evaluatedOnce();
    while (this.#tasks.size) await Promise.allSettled([...this.#tasks]);
    clearTimeout(this.#writesGrace);
    this.#abort[Symbol.dispose]();
  }

  /** Follows the peering object; the Watcher resumes by itself, this only guards against the unexpected. */
  async #watch(): Promise<void> {
    const signal = this.#abort.signal;
    const { client, watching, config } = this.#context;
    while (!signal.aborted) {
      try {
        const watcher = new Watcher(client, peeringResource(this.target), {
          namespace: this.target.namespace,
          fieldSelector: `metadata.name=${config.name}`,
          settings: watching,
          signal,
        });
        for await (const event of watcher) {
          if (event.type === "LISTED") {
            this.#listed = true;
            this.#evaluate();
            continue;
          }
          if (event.object.metadata.name !== config.name) continue;
          this.#body = event.type === "DELETED" ? undefined : event.object;
          // Peers see this operator only once its record is there: no need to wait for the next interval.
          if (this.#body && this.#missing) this.#nap?.abort();
          if (this.#listed) this.#evaluate();
        }
      } catch (error) {
        if (signal.aborted) return;
        logger.error("The watch of the peering in {where} failed; restarting it in 1 s: {error}", {
          where: where(this.target),
          error,
        });
        await sleep(1, signal);
      }
    }
  }

  /** Writes own record now and then every keepAliveInterval() seconds. */
  async #keepAlive(): Promise<void> {
    const signal = this.#abort.signal;
    const { client, config, identity } = this.#context;
    while (!signal.aborted) {
      try {
        const record = buildPeerRecord({ priority: config.priority, lifetime: config.lifetime });
        await touchPeer(client, this.target, identity, record, this.#writes.signal);
        this.#missing = false;
        if (!config.stealth) logger.debug("Keep-alive in {where}: ok.", { where: where(this.target) });
      } catch (error) {
        if (signal.aborted) return;
        if (error instanceof PeeringNotFoundError) {
          this.#missing = true;
          logger.debug("Keep-alive in {where}: not found.", { where: where(this.target) });
        } else {
          logger.error("Keep-alive in {where} failed; trying again at the next interval: {error}", {
            where: where(this.target),
            error: describeCause(error),
          });
        }
      }
      this.#nap = new AbortController();
      await sleep(keepAliveInterval(config.lifetime), AbortSignal.any([signal, this.#nap.signal]));
    }
  }

  /** Judges the last seen state of the peering object; removes dead peers; plans a recheck. */
  #evaluate(): void {
    if (this.#abort.signal.aborted) return;
    clearTimeout(this.#recheck);
    this.#recheck = undefined;
    const { config, identity } = this.#context;
    const previous = this.#verdict;
    let verdict: Verdict;
    if (!this.#body) {
      verdict = { state: config.mandatory ? "absent" : "absent-ok" };
    } else {
      const now = new Date();
      const conflicts = findConflicts({
        peers: parsePeers(this.#body.status, now),
        identity,
        priority: config.priority,
        now,
      });
      if (conflicts.dead.length) this.#removeDead(conflicts.dead);
      verdict = conflicts.higher.length
        ? { state: "higher", peers: identities(conflicts.higher) }
        : conflicts.same.length
        ? { state: "same", peers: identities(conflicts.same) }
        : { state: "running" };
      if (conflicts.recheckAt) {
        // The blocking peers expire then unless refreshed: look again (a refresh brings an event anyway).
        const delay = Math.max(0, conflicts.recheckAt.getTime() - Date.now()) + 10;
        this.#recheck = setTimeout(() => this.#evaluate(), delay);
      }
    }
    this.#verdict = verdict;
    this.#report(previous, verdict);
    this.paused = verdict.state === "absent" || verdict.state === "higher" || verdict.state === "same";
    this.#evaluatedOnce();
    this.#context.evaluated();
  }

  /** Logs a change of the verdict (not the same one again on every event). */
  #report(previous: Verdict | undefined, verdict: Verdict): void {
    const same = previous?.state === verdict.state &&
      (!("peers" in verdict) || ("peers" in previous && previous.peers === verdict.peers));
    if (same) return;
    switch (verdict.state) {
      case "absent":
        logger.warn("{message} Operations are paused until then (peering is mandatory).", {
          message: new PeeringNotFoundError(this.target, false).message,
        });
        return;
      case "absent-ok":
        logger.debug("There is no peering object in {where}: not paused by peers there.", {
          where: where(this.target),
        });
        return;
      case "higher":
        logger.info("Pausing operations in favour of {peers}.", { peers: verdict.peers });
        return;
      case "same":
        logger.warn("Possibly conflicting operators with the same priority: {peers}.", { peers: verdict.peers });
        logger.warn("Pausing all operators, including self: {peers}.", { peers: verdict.peers });
        return;
      case "running":
        if (previous?.state === "higher") {
          logger.info("Resuming operations after the pause. The operators of a higher priority are gone: {peers}.", {
            peers: previous.peers,
          });
        } else if (previous?.state === "same") {
          logger.info(
            "Resuming operations after the pause. Conflicting operators with the same priority are gone: {peers}.",
            { peers: previous.peers },
          );
        } else if (previous?.state === "absent") {
          logger.info("Resuming operations after the pause. The peering object in {where} exists now.", {
            where: where(this.target),
          });
        }
        return;
    }
  }

  /** Removes the records of dead peers in one merge-patch (not again while one is under way). */
  #removeDead(dead: readonly Peer[]): void {
    const fresh = dead.filter((peer) => !this.#removing.has(peer.identity));
    if (!fresh.length) return;
    for (const peer of fresh) this.#removing.add(peer.identity);
    const records = Object.fromEntries(fresh.map((peer) => [peer.identity, null]));
    logger.debug("Removing the records of dead peers in {where}: {peers}.", {
      where: where(this.target),
      peers: identities(fresh),
    });
    const signal = this.#abort.signal;
    this.#track(
      writePeers(this.#context.client, this.target, records, signal).catch((error) => {
        if (signal.aborted) return;
        if (error instanceof PeeringNotFoundError) {
          logger.debug("The dead peers in {where} are gone with their peering object.", { where: where(this.target) });
        } else {
          logger.error("Cannot remove the records of dead peers in {where}; trying again on the next event: {error}", {
            where: where(this.target),
            error: describeCause(error),
          });
        }
      }).finally(() => {
        for (const peer of fresh) this.#removing.delete(peer.identity);
      }),
    );
  }

  #track(task: Promise<unknown>): void {
    const tracked = task.catch((error) => {
      logger.error("Peering in {where} failed unexpectedly: {error}", { where: where(this.target), error });
    }).finally(() => this.#tasks.delete(tracked));
    this.#tasks.add(tracked);
  }
}
