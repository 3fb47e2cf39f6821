/**
 * The resources an operator serves, and their handlers: resolved from the handlers' selectors by
 * discovery at start, and again for a CRD's group whenever that CRD appears, changes or goes.
 *
 * @module
 */

import { getLogger } from "@logtape/logtape";
import { type CrdBody, crdReflected, type Discovery } from "../api/discovery.ts";
import { describeCause } from "../api/errors.ts";
import type { BackgroundHandler, ChangeHandler, EventHandler } from "../handling/handlers.ts";
import type { Registry } from "../handling/registry.ts";
import { type Resource, resourceName } from "../model/resource.ts";
import type { Selector } from "../model/selector.ts";
import { sleep } from "../utils/sleep.ts";
import type { ServedResource } from "./orchestration.ts";

const logger = getLogger(["kopf", "discovery"]);

/** A served resource with its handlers by kind (index handlers are found per resource by the indexes). */
export interface ResourceHandlers extends ServedResource {
  /** Event handlers. */
  readonly events: EventHandler[];
  /** Change handlers. */
  readonly changes: ChangeHandler[];
  /** Daemons and timers. */
  readonly background: BackgroundHandler[];
}

/** Rescans of one CRD's group until discovery shows the CRD as it is (discovery lags behind CRDs; about 2 min in all). */
const RESCAN_DELAYS = [0.5, 1, 2, 4, 8, 10, 10, 10, 20, 30, 30];

interface PendingCrd {
  readonly crd: CrdBody;
  readonly deleted: boolean;
  attempts: number;
}

/**
 * Resolves the registry's selectors with a {@linkcode Discovery} and keeps the result current:
 * {@linkcode ServedResources.crdChanged} rescans the CRD's group (unless discovery already shows
 * the CRD as it is) and reports the new set of served resources to `onChange` if it differs.
 *
 * @example
 * ```ts ignore
 * const served = new ServedResources(registry, discovery, { onChange: (all) => orchestrator.update({ resources: all }) });
 * const initial = await served.resolve(signal);
 * served.crdChanged("ADDED", crd, signal); // from a CRD watch
 * ```
 */
export class ServedResources {
  readonly #registry: Registry;
  readonly #discovery: Discovery;
  readonly #selectors: Selector[];
  readonly #patching: Selector[];
  readonly #logged = new Set<string>();
  readonly #onChange: (resources: ResourceHandlers[]) => void | Promise<unknown>;
  readonly #onRescan: ((resources: readonly Resource[]) => void | Promise<unknown>) | undefined;
  readonly #pending = new Map<string, PendingCrd>();
  #current = new Map<string, ResourceHandlers>();
  #rescanning: Promise<void> | undefined;

  /** Prepares it; nothing is requested until {@linkcode resolve}. */
  constructor(
    registry: Registry,
    discovery: Discovery,
    options: {
      onChange: (resources: ResourceHandlers[]) => void | Promise<unknown>;
      /** Called after each rescan with everything discovery knows now (e.g. for admission webhooks' rules). */
      onRescan?: (resources: readonly Resource[]) => void | Promise<unknown>;
    },
  ) {
    this.#registry = registry;
    this.#discovery = discovery;
    this.#selectors = registry.selectors;
    // Stateful handlers keep their state on the objects: their resources must be patchable.
    const stateful = new Set(["change", "daemon", "timer"]);
    this.#patching = registry.handlers.filter((handler) => stateful.has(handler.kind)).map((handler) =>
      handler.selector
    );
    this.#onChange = options.onChange;
    this.#onRescan = options.onRescan;
  }

  /** The served resources now. */
  get current(): ResourceHandlers[] {
    return [...this.#current.values()];
  }

  /** Resolves the selectors against the cached discovery (scanning first if needed); returns the served resources. */
  async resolve(signal?: AbortSignal): Promise<ResourceHandlers[]> {
    const { served } = await this.#discovery.resolve(this.#selectors, {
      patching: this.#patching,
      signal,
      logged: this.#logged,
    });
    // Handlers with equal selectors share one resolution; the registry lists each selector once.
    const resolved = new Map([...served].map(([selector, resources]) => [selector.toString(), resources]));
    const handlers = this.#registry.handlers;
    const byResource = new Map<string, ResourceHandlers & { ids: number[] }>();
    handlers.forEach((handler, position) => {
      for (const resource of resolved.get(handler.selector.toString()) ?? []) {
        const key = resourceName(resource);
        const entry = byResource.get(key) ??
          { resource, signature: "", events: [], changes: [], background: [], ids: [] };
        if (handler.kind === "event") entry.events.push(handler);
        else if (handler.kind === "change") entry.changes.push(handler);
        else if (handler.kind === "daemon" || handler.kind === "timer") entry.background.push(handler);
        // Index handlers only need the stream: the indexes find them per resource.
        entry.ids.push(position);
        byResource.set(key, entry);
      }
    });
    const previous = this.#current;
    this.#current = new Map(
      [...byResource].map(([key, { ids, ...entry }]) => [key, { ...entry, signature: ids.join(",") }]),
    );
    if (previous.size > 0 || this.#rescanning) {
      const added = [...this.#current.keys()].filter((key) => !previous.has(key));
      const removed = [...previous.keys()].filter((key) => !this.#current.has(key));
      if (added.length) logger.info("Resources are served from now on: {names}", { names: added.join(", ") });
      if (removed.length) logger.info("Resources are no longer served: {names}", { names: removed.join(", ") });
    }
    return this.current;
  }

  /**
   * Takes a CRD's watch event: unless discovery already shows the CRD as it now is, its group
   * is rescanned (again after a while if discovery still lags behind), the selectors are
   * resolved again, and `onChange` gets the served resources if they changed.
   */
  crdChanged(type: "ADDED" | "MODIFIED" | "DELETED", crd: CrdBody, signal: AbortSignal): void {
    const name = crd.metadata.name;
    const group = crd.spec?.group;
    if (name === undefined || group === undefined) return;
    const groups = this.#discovery.groups;
    if (groups !== null && !groups.includes(group)) return;
    const deleted = type === "DELETED";
    if (crdReflected(crd, this.#discovery.cached ?? [], deleted)) {
      this.#pending.delete(name);
      return;
    }
    logger.debug("CRD {name} is {type}: rescanning the group {group}.", { name, type, group });
    this.#pending.set(name, { crd, deleted, attempts: 0 });
    this.#rescanning ??= this.#rescan(signal).finally(() => this.#rescanning = undefined);
  }

  /** Resolves once no rescan is running or due (for tests and the operator's exit). */
  async settled(): Promise<void> {
    while (this.#rescanning) await this.#rescanning;
  }

  async #rescan(signal: AbortSignal): Promise<void> {
    while (this.#pending.size > 0 && !signal.aborted) {
      const batch = [...this.#pending];
      const groups = [...new Set(batch.map(([, pending]) => pending.crd.spec!.group!))];
      try {
        await this.#discovery.refresh({ groups, signal });
        await this.#onRescan?.(this.#discovery.cached ?? []);
        const before = JSON.stringify(this.current.map((entry) => [resourceName(entry.resource), entry.signature]));
        const after = await this.resolve(signal);
        if (JSON.stringify(after.map((entry) => [resourceName(entry.resource), entry.signature])) !== before) {
          await this.#onChange(after);
        }
      } catch (error) {
        if (signal.aborted) return;
        logger.warn("Rescanning the API groups {groups} has failed: {error}", {
          groups: groups.join(", "),
          error: describeCause(error),
        });
      }
      let delay = Infinity;
      for (const [name, pending] of batch) {
        if (this.#pending.get(name) !== pending) continue; // a newer event came meanwhile
        if (crdReflected(pending.crd, this.#discovery.cached ?? [], pending.deleted)) {
          this.#pending.delete(name);
        } else if (pending.attempts >= RESCAN_DELAYS.length) {
          this.#pending.delete(name);
          logger.warn("Discovery does not show CRD {name} as it is after {count} rescans; leaving it as it is.", {
            name,
            count: pending.attempts + 1,
          });
        } else {
          delay = Math.min(delay, RESCAN_DELAYS[pending.attempts++]);
        }
      }
      // New events (not yet tried) are rescanned at once; lagging ones after their delay.
      const fresh = [...this.#pending.values()].some((pending) => pending.attempts === 0);
      if (!fresh && delay !== Infinity) await sleep(delay, signal);
    }
  }
}
