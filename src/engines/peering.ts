/**
 * The running peering of an operator: it finds out whether the peering CRD of its scope exists,
 * watches the peering object(s) named `settings.peering.name`, writes its own keep-alive record
 * there, removes the records of dead peers, and tells the operator when to pause (a live peer of
 * a higher or the same priority, or mandatory peering without its CRD or object) and to resume.
 * It never creates peering objects; on close it removes its own records.
 *
 * @example
 * ```ts ignore
 * const peering = await Peering.start({
 *   client, settings: settings.peering, watching: settings.watching, identity: operatorIdentity(),
 *   namespaces: ["default"], onChange: (paused) => console.log(paused ? "pausing" : "resuming"),
 * });
 * // ... run while !peering.paused ...
 * await peering.close();
 * ```
 *
 * @module
 */

import { getLogger } from "@logtape/logtape";
import type { ApiClient } from "../api/client.ts";
import { discoverResources } from "../api/discovery.ts";
import { describeCause } from "../api/errors.ts";
import type { Resource } from "../model/resource.ts";
import type { PeeringSettings } from "../settings/peering.ts";
import type { WatchingSettings } from "../settings/watching.ts";
import { type LinkedSignal, linkSignals } from "../utils/signals.ts";
import { sleep } from "../utils/sleep.ts";
import {
  PeeringNotFoundError,
  peeringResource,
  type PeeringTarget,
  peeringTargets,
  removePeer,
} from "./peering_records.ts";
import { type PeeringConfig, TargetPeering, where } from "./peering_target.ts";

const logger = getLogger(["kopf", "peering"]);

/** How often a missing CRD is looked for again while peering is mandatory (seconds). */
const MISSING_CRD_RECHECK = 30;
/** After a CRD change, discovery may lag behind: look again after 1, 2, 4, ... 32 s until it differs. */
const CRD_CHANGE_RECHECKS = 6;
/** How long close() waits for the removal of own records (seconds). */
const REMOVAL_TIMEOUT = 10;

/** What {@linkcode Peering.start} needs. */
export interface PeeringOptions {
  /** The API client. */
  client: ApiClient;
  /** The peering settings; read once, at start. */
  settings: PeeringSettings;
  /** Timing of the watch streams of the peering objects. */
  watching: WatchingSettings;
  /** This operator's identity: the key of its record (see `operatorIdentity()`). */
  identity: string;
  /** The served namespaces; ignored when `settings.clusterwide`. */
  namespaces: readonly string[];
  /** Called on every change of {@linkcode Peering.paused} after start (not for the initial value). */
  onChange: (paused: boolean) => void;
  /**
   * Aborting interrupts the start and ends the loops; close() still removes own records, since a
   * keep-alive may have been written before the abort.
   */
  signal?: AbortSignal;
}

/** What is known of the peering CRD of the scope. */
type CrdState = "unknown" | "found" | "missing" | "standalone";

/**
 * The peering of one running operator. Start it with {@linkcode Peering.start}, read
 * {@linkcode Peering.paused} (or react to `onChange`), and close it at the end.
 */
export class Peering {
  readonly #client: ApiClient;
  readonly #config: PeeringConfig;
  readonly #watching: WatchingSettings;
  readonly #identity: string;
  readonly #onChange: (paused: boolean) => void;
  /** Aborted by close(). */
  readonly #own = new AbortController();
  /** Aborted by close() or by the caller's signal: ends every loop. */
  readonly #stop: LinkedSignal;
  readonly #targets = new Map<string, TargetPeering>();
  readonly #tasks = new Set<Promise<unknown>>();
  #namespaces: string[];
  #crd: CrdState = "unknown";
  #paused = false;
  #started = false;
  #closing: Promise<void> | undefined;
  #wake: (() => void) | undefined;
  #wakeRequested = false;
  /** Rechecks left after a CRD change, and the state when it happened; undefined when none is due. */
  #burst: { step: number; from: CrdState } | undefined;
  #legacyLogged = false;

  private constructor(options: PeeringOptions) {
    const s = options.settings;
    this.#client = options.client;
    this.#config = {
      name: s.name,
      priority: s.priority,
      lifetime: s.lifetime,
      mandatory: s.mandatory,
      standalone: s.standalone,
      stealth: s.stealth,
      clusterwide: s.clusterwide,
    };
    this.#watching = options.watching;
    this.#identity = options.identity;
    this.#onChange = options.onChange;
    this.#namespaces = [...options.namespaces];
    this.#stop = linkSignals(options.signal, this.#own.signal);
  }

  /**
   * Starts detection, watching and keep-alives; resolves after the first evaluation, when
   * {@linkcode Peering.paused} is right (or at once when the signal aborts).
   *
   * @param options The client, settings, identity, scope and the callback of pauses.
   * @returns The running peering.
   */
  static async start(options: PeeringOptions): Promise<Peering> {
    const peering = new Peering(options);
    await peering.#begin();
    return peering;
  }

  /** Whether the operator must pause now: any peering object says so, or mandatory peering lacks its CRD. */
  get paused(): boolean {
    return this.#paused;
  }

  /** Whether peering is in use: its CRD was found, or peering is mandatory (and then it waits for it). */
  get active(): boolean {
    if (this.#crd === "standalone") return false;
    return this.#crd === "found" || this.#config.mandatory;
  }

  /**
   * The served namespaces changed: starts watching and keep-alives in new ones, stops them (and
   * removes own records) in those no longer served. Ignored for cluster-wide peering.
   *
   * @param namespaces All the namespaces served now.
   */
  updateNamespaces(namespaces: Iterable<string>): void {
    this.#namespaces = [...namespaces];
    if (this.#config.clusterwide || this.#closing) return;
    this.#syncTargets(true);
  }

  /** A CRD of group kopf.dev (or zalando.org) appeared, changed or vanished: detects the peering CRD again. */
  crdChanged(): void {
    if (this.#closing || this.#crd === "standalone") return;
    this.#burst = { step: 0, from: this.#crd };
    this.#wakeUp();
  }

  /**
   * Stops everything, then removes own records (`status.<identity>: null`) from every peering
   * object (unless `keepRecords`: a record that others write too, as the replicas of a leader
   * election do); failures are logged, not thrown. The first call decides.
   *
   * @param options `keepRecords`: stop without removing own records; they expire by themselves.
   */
  close(options: { keepRecords?: boolean } = {}): Promise<void> {
    this.#closing ??= this.#shutdown(options.keepRecords ?? false);
    return this.#closing;
  }

  async #shutdown(keepRecords: boolean): Promise<void> {
    const removing = !keepRecords && this.#crd === "found";
    this.#own.abort();
    this.#wakeUp();
    const targets = [...this.#targets.values()];
    this.#targets.clear();
    await Promise.all(targets.map((target) => target.stop()));
    await Promise.allSettled([...this.#tasks]);
    if (removing) await Promise.all(targets.map((target) => this.#removeOwn(target.target)));
    this.#stop[Symbol.dispose]();
  }

  async #begin(): Promise<void> {
    if (this.#config.standalone) {
      this.#crd = "standalone";
      this.#started = true;
      logger.debug("Peering is off: the operator is standalone.");
      return;
    }
    let ready = () => {};
    const first = new Promise<void>((resolve) => ready = resolve);
    this.#track(this.#detectLoop(ready));
    await Promise.race([
      first,
      new Promise<void>((resolve) => this.#stop.signal.addEventListener("abort", () => resolve())),
    ]);
    this.#paused = this.#computePaused();
    this.#started = true;
  }

  /** Detects the CRD now and whenever told (crdChanged), or periodically while it matters. */
  async #detectLoop(ready: () => void): Promise<void> {
    let failures = 0;
    let first = true;
    const signal = this.#stop.signal;
    while (!signal.aborted) {
      this.#wakeRequested = false;
      const before = this.#crd;
      try {
        this.#crd = await this.#detect(signal);
        failures = 0;
      } catch (error) {
        if (signal.aborted) break;
        failures++;
        logger.error(
          "Cannot tell whether the peering resource {plural}.kopf.dev exists; trying again in {delay} s: {error}",
          { plural: this.#resource().plural, delay: this.#retryDelay(failures), error: describeCause(error) },
        );
      }
      if (signal.aborted) break;
      this.#applyCrdState(before);
      if (first) {
        first = false;
        await Promise.race([
          Promise.all([...this.#targets.values()].map((target) => target.firstEvaluation)),
          new Promise<void>((resolve) => signal.addEventListener("abort", () => resolve(), { once: true })),
        ]);
        ready();
      }
      let delay = failures
        ? this.#retryDelay(failures)
        : this.#crd === "missing" && this.#config.mandatory
        ? MISSING_CRD_RECHECK
        : undefined;
      if (this.#burst) {
        if (this.#burst.from !== this.#crd || this.#burst.step >= CRD_CHANGE_RECHECKS) this.#burst = undefined;
        else delay = Math.min(delay ?? Infinity, 2 ** this.#burst.step++);
      }
      if (!this.#wakeRequested) await this.#sleepOrWake(delay);
    }
    ready();
  }

  #retryDelay(failures: number): number {
    return Math.min(MISSING_CRD_RECHECK, 2 ** failures);
  }

  /** Sleeps until woken (crdChanged, close), or for `seconds` when given. */
  async #sleepOrWake(seconds: number | undefined): Promise<void> {
    const woken = new Promise<void>((resolve) => this.#wake = resolve);
    const stop = new AbortController();
    try {
      await Promise.race([woken, seconds === undefined ? new Promise(() => {}) : sleep(seconds, stop.signal)]);
    } finally {
      stop.abort();
      this.#wake = undefined;
    }
  }

  #wakeUp(): void {
    this.#wakeRequested = true;
    this.#wake?.();
  }

  /** The peering resource of the scope. */
  #resource(): Resource {
    return peeringResource({ name: this.#config.name, namespace: this.#config.clusterwide ? null : "" });
  }

  /** Whether the API serves the peering resource of the scope (group kopf.dev, version v1). */
  async #detect(signal: AbortSignal): Promise<CrdState> {
    const wanted = this.#resource();
    const resources = await discoverResources(this.#client, { groups: [wanted.group, "zalando.org"], signal });
    const served = (group: string) =>
      resources.some((resource) => resource.group === group && resource.plural === wanted.plural);
    if (resources.some((r) => r.group === wanted.group && r.version === wanted.version && r.plural === wanted.plural)) {
      return "found";
    }
    if (served("zalando.org") && !this.#legacyLogged) {
      this.#legacyLogged = true;
      logger.warn(
        "Only the legacy peering resource {plural}.zalando.org exists, which is not supported: install the " +
          "current peering CRDs with `kubectl apply -f peering.yaml` (from @kopf/kopf).",
        { plural: wanted.plural },
      );
    }
    return "missing";
  }

  /** Starts or stops the targets after a detection, and says what changed. */
  #applyCrdState(before: CrdState): void {
    const now = this.#crd;
    if (now !== before) {
      const target: PeeringTarget = {
        name: this.#config.name,
        namespace: this.#config.clusterwide ? null : (this.#namespaces[0] ?? "<namespace>"),
      };
      if (now === "found") {
        logger.debug("The peering resource {plural}.kopf.dev exists: peering is active.", {
          plural: this.#resource().plural,
        });
      } else if (now === "missing" && this.#config.mandatory) {
        logger.warn("{message} Operations are paused until then (peering is mandatory).", {
          message: new PeeringNotFoundError(target, true).message,
        });
      } else if (now === "missing") {
        logger.debug("The peering resource {plural}.kopf.dev does not exist: peering is off.", {
          plural: this.#resource().plural,
        });
      }
    }
    this.#syncTargets(false);
  }

  /** Runs a TargetPeering for each peering object of the scope (none unless the CRD exists). */
  #syncTargets(removeGone: boolean): void {
    const wanted = this.#crd === "found" && !this.#stop.signal.aborted
      ? peeringTargets(this.#config.name, { clusterwide: this.#config.clusterwide, namespaces: this.#namespaces })
      : [];
    const keys = new Set<string>();
    for (const target of wanted) {
      const key = target.namespace ?? "";
      keys.add(key);
      if (this.#targets.has(key)) continue;
      const running = new TargetPeering(target, {
        client: this.#client,
        config: this.#config,
        watching: this.#watching,
        identity: this.#identity,
        signal: this.#stop.signal,
        evaluated: () => this.#update(),
      });
      this.#targets.set(key, running);
      running.start();
    }
    for (const [key, running] of [...this.#targets]) {
      if (keys.has(key)) continue;
      this.#targets.delete(key);
      this.#track(running.stop().then(() => removeGone ? this.#removeOwn(running.target) : undefined));
    }
    this.#update();
  }

  /** Removes own record from a peering object; a missing one is fine, other failures are logged. */
  async #removeOwn(target: PeeringTarget): Promise<void> {
    const timeout = new AbortController();
    const timer = setTimeout(() => timeout.abort(), REMOVAL_TIMEOUT * 1000);
    try {
      await removePeer(this.#client, target, this.#identity, timeout.signal);
      logger.debug("Removed own peering record in {where}.", { where: where(target) });
    } catch (error) {
      if (error instanceof PeeringNotFoundError) return;
      logger.warn("Cannot remove own peering record in {where}; it expires by itself: {error}", {
        where: where(target),
        error: describeCause(error),
      });
    } finally {
      clearTimeout(timer);
    }
  }

  #computePaused(): boolean {
    if (this.#crd === "standalone") return false;
    if (this.#crd !== "found") return this.#config.mandatory;
    for (const running of this.#targets.values()) {
      if (running.paused ?? this.#config.mandatory) return true;
    }
    return false;
  }

  /** Recomputes `paused`; tells the operator of a change once started. */
  #update(): void {
    if (!this.#started || this.#closing) return;
    const paused = this.#computePaused();
    if (paused === this.#paused) return;
    this.#paused = paused;
    try {
      this.#onChange(paused);
    } catch (error) {
      logger.error("The callback of peering pauses failed: {error}", { error });
    }
  }

  #track(task: Promise<unknown>): void {
    const tracked = task.catch((error) => {
      logger.error("Peering failed unexpectedly: {error}", { error });
    }).finally(() => this.#tasks.delete(tracked));
    this.#tasks.add(tracked);
  }
}
