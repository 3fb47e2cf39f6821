/**
 * API discovery: which resources the server serves, in which versions, with which verbs (read by
 * `discovery_documents.ts`) -- and which of them the operator's selectors resolve to.
 *
 * @module
 */

import { getLogger } from "@logtape/logtape";
import { discoverResources, type DiscoveryClient } from "./discovery_documents.ts";
import { type Resource, resourceName } from "../model/resource.ts";
import { Selector } from "../model/selector.ts";

const logger = getLogger(["kopf", "discovery"]);

export { type DiscoverOptions, discoverResources, type DiscoveryClient } from "./discovery_documents.ts";

/** Options of {@linkcode resolveSelectors}. */
export interface ResolveOptions {
  /**
   * The selectors of handlers that keep state on objects (change handlers, daemons, timers):
   * resources without the `patch` verb are not served to them.
   */
  patching?: Iterable<Selector>;
  /**
   * Warnings already logged (e.g. by an earlier resolution, before a rescan): they are not logged
   * again, and those logged now are added.
   */
  logged?: Set<string>;
}

/** What selectors resolved to; the problems are already logged as warnings. */
export interface Resolution {
  /** The resources to serve, per selector (empty for unresolved or ambiguous selectors). */
  readonly served: Map<Selector, Resource[]>;
  /** Named selectors that matched several resources outside the core group: none is served. */
  readonly ambiguous: Map<Selector, Resource[]>;
  /** Selectors that matched nothing (e.g. their CRD does not exist yet). */
  readonly unresolved: Selector[];
  /** Matched resources without both `list` and `watch`: not served. */
  readonly nonwatchable: Resource[];
  /** Matched resources without `patch`, selected by a patching selector: not served to it. */
  readonly nonpatchable: Resource[];
}

/**
 * Resolves selectors against discovered resources and warns about those that cannot be served:
 * ambiguous, unresolved, non-watchable, non-patchable (Kopf's messages).
 *
 * @example
 * ```ts ignore
 * const kex = new Selector("kex");
 * const { served } = resolveSelectors([kex], await discoverResources(client));
 * served.get(kex); // [kopfexamples.v1.kopf.dev]
 * ```
 */
export function resolveSelectors(
  selectors: Iterable<Selector>,
  resources: Iterable<Resource>,
  options: ResolveOptions = {},
): Resolution {
  const all = [...resources];
  const patching = new Set(options.patching ?? []);
  const served = new Map<Selector, Resource[]>();
  const ambiguous = new Map<Selector, Resource[]>();
  const unresolved: Selector[] = [];
  const nonwatchable = new Map<string, Resource>();
  const nonpatchable = new Map<string, Resource>();
  for (const selector of selectors) {
    if (served.has(selector)) continue;
    const selection = selector.select(all);
    if (selection.ambiguous.length > 0) ambiguous.set(selector, selection.ambiguous);
    else if (selection.resources.length === 0) unresolved.push(selector);
    const usable = selection.resources.filter((resource) => {
      if (!resource.verbs.includes("list") || !resource.verbs.includes("watch")) {
        nonwatchable.set(resourceName(resource), resource);
        return false;
      }
      if (patching.has(selector) && !resource.verbs.includes("patch")) {
        nonpatchable.set(resourceName(resource), resource);
        return false;
      }
      return true;
    });
    served.set(selector, usable);
  }

  const warn = (message: string, details: string) => {
    const key = `${message}\n${details}`;
    if (options.logged?.has(key)) return;
    options.logged?.add(key);
    logger.warn(message, { details });
  };
  if (ambiguous.size > 0) {
    const details = [...ambiguous].map(([selector, found]) => `${selector} => ${names(found)}`).join("; ");
    warn("Ambiguous resources will not be served (try specifying API groups): {details}", details);
  }
  if (unresolved.length > 0) {
    warn("Unresolved resources cannot be served (try creating their CRDs): {details}", unresolved.join(", "));
  }
  if (nonwatchable.size > 0) {
    warn(
      "Non-watchable resources will not be served (no list and watch verbs): {details}",
      names(nonwatchable.values()),
    );
  }
  if (nonpatchable.size > 0) {
    warn("Non-patchable resources will not be served to stateful handlers: {details}", names(nonpatchable.values()));
  }
  return {
    served,
    ambiguous,
    unresolved,
    nonwatchable: [...nonwatchable.values()],
    nonpatchable: [...nonpatchable.values()],
  };
}

/** Options of a {@linkcode Discovery}. */
export interface DiscoveryOptions {
  /** The API groups to scan; `null` or absent for all. See {@linkcode DiscoverOptions.groups}. */
  groups?: readonly string[] | null;
}

/**
 * The discovered resources of a cluster, scanned once and kept until refreshed (e.g. when a CRD
 * appears, changes or goes), and the selectors resolved against them.
 *
 * @example
 * ```ts ignore
 * const discovery = new Discovery(client, { groups: groupsToScan(selectors) });
 * const { served } = await discovery.resolve(selectors);
 * await discovery.refresh({ groups: ["kopf.dev"] }); // after a CRD of kopf.dev changed
 * ```
 */
export class Discovery {
  /** The API groups it scans; `null` for all. */
  readonly groups: readonly string[] | null;
  readonly #client: DiscoveryClient;
  #resources: Resource[] | undefined;
  #initial: Promise<readonly Resource[]> | undefined;
  // Scans run one after another, so that an older scan never overwrites a newer one.
  #queue: Promise<unknown> = Promise.resolve();

  /** Creates it; nothing is requested until the resources are first needed. */
  constructor(client: DiscoveryClient, options: DiscoveryOptions = {}) {
    this.#client = client;
    this.groups = options.groups ?? null;
  }

  /** The resources of the latest scan; `undefined` before the first scan has finished. */
  get cached(): readonly Resource[] | undefined {
    return this.#resources;
  }

  /** The resources of the latest scan, scanning first if there was none yet. */
  resources(signal?: AbortSignal): Promise<readonly Resource[]> {
    if (this.#resources) return Promise.resolve(this.#resources);
    this.#initial ??= this.refresh({ signal }).catch((error) => {
      this.#initial = undefined;
      throw error;
    });
    return this.#initial;
  }

  /**
   * Scans again and replaces the cached resources: all of them, or only those of the given groups
   * (those outside the scanned groups are ignored). Returns all cached resources.
   */
  refresh(options: { groups?: readonly string[]; signal?: AbortSignal } = {}): Promise<readonly Resource[]> {
    const run = this.#queue.then(() => this.#scan(options.groups, options.signal));
    this.#queue = run.catch(() => undefined);
    return run;
  }

  /** Resolves selectors against the cached resources (scanning first if needed); see {@linkcode resolveSelectors}. */
  async resolve(
    selectors: Selector | Iterable<Selector>,
    options: ResolveOptions & { signal?: AbortSignal } = {},
  ): Promise<Resolution> {
    const resources = await this.resources(options.signal);
    return resolveSelectors(selectors instanceof Selector ? [selectors] : selectors, resources, options);
  }

  async #scan(only: readonly string[] | undefined, signal: AbortSignal | undefined): Promise<readonly Resource[]> {
    const all = this.groups;
    if (only === undefined || this.#resources === undefined) {
      this.#resources = await discoverResources(this.#client, { groups: all, signal });
      return this.#resources;
    }
    const groups = all === null ? [...only] : only.filter((group) => all.includes(group));
    if (groups.length === 0) return this.#resources;
    const fresh = await discoverResources(this.#client, { groups, signal });
    this.#resources = [...this.#resources.filter((resource) => !groups.includes(resource.group)), ...fresh];
    return this.#resources;
  }
}

/** A CustomResourceDefinition, as far as {@linkcode crdReflected} reads it. */
export interface CrdBody {
  metadata: { name?: string; deletionTimestamp?: string };
  spec?: {
    group?: string;
    scope?: string;
    names?: { plural?: string; kind?: string; shortNames?: string[]; categories?: string[] };
    versions?: { name: string; served?: boolean }[];
  };
  status?: { conditions?: { type: string; status: string }[] };
}

/**
 * Whether discovered resources already show what a CRD declares, so that a rescan of its group
 * would find nothing new: an established CRD's served versions are all there (with its kind,
 * scope, short names and categories) and no other version of it is; a CRD that is deleted or
 * not (yet) established has none of its resources there. The preferred version is compared too:
 * discovery may list a new version before it makes it the group's preferred one.
 *
 * @example
 * ```ts ignore
 * if (!crdReflected(event.object, discovery.cached ?? [], event.type === "DELETED")) {
 *   await discovery.refresh({ groups: [event.object.spec.group] });
 * }
 * ```
 */
export function crdReflected(crd: CrdBody, resources: Iterable<Resource>, deleted = false): boolean {
  const group = crd.spec?.group;
  const plural = crd.spec?.names?.plural;
  if (group === undefined || plural === undefined) return true;
  const found = [...resources].filter((resource) => resource.group === group && resource.plural === plural);
  const established = (crd.status?.conditions ?? []).some((c) => c.type === "Established" && c.status === "True");
  if (deleted || !established || crd.metadata.deletionTimestamp) return found.length === 0;
  const served = (crd.spec?.versions ?? []).filter((version) => version.served !== false).map((version) =>
    version.name
  );
  if (found.length !== served.length) return false;
  const names = crd.spec!.names!;
  const same = (a: readonly string[] | undefined, b: readonly string[]) =>
    JSON.stringify([...a ?? []].sort()) === JSON.stringify([...b].sort());
  // The group's preferred version is its highest-priority version, whichever CRD serves it.
  const groupVersions = [...resources].filter((resource) => resource.group === group).map((r) => r.version);
  const preferred = [...new Set([...groupVersions, ...served])].sort(compareVersionPriority)[0];
  return served.every((version) => {
    const resource = found.find((resource) => resource.version === version);
    return resource !== undefined && resource.kind === names.kind &&
      resource.namespaced === (crd.spec!.scope === "Namespaced") &&
      same(names.shortNames, resource.shortcuts) && same(names.categories, resource.categories) &&
      resource.preferred === (version === preferred);
  });
}

/**
 * Orders API versions by Kubernetes' priority, highest first: release versions (`v2` before
 * `v1`), then betas, then alphas (each by major, then minor number, higher first), then other
 * names alphabetically.
 */
export function compareVersionPriority(a: string, b: string): number {
  const rank = (version: string): [number, number, number, string] => {
    const match = version.match(/^v(\d+)(?:(alpha|beta)(\d+))?$/);
    if (!match) return [3, 0, 0, version];
    const stage = match[2] === undefined ? 0 : match[2] === "beta" ? 1 : 2;
    return [stage, -Number(match[1]), -Number(match[3] ?? 0), ""];
  };
  const [x, y] = [rank(a), rank(b)];
  for (let i = 0; i < 3; i++) if (x[i] !== y[i]) return (x[i] as number) - (y[i] as number);
  // Byte order, as Kubernetes compares them (Go strings), whatever the locale.
  return x[3] < y[3] ? -1 : x[3] > y[3] ? 1 : 0;
}

function names(resources: Iterable<Resource>): string {
  return [...resources].map(resourceName).join(", ");
}
