/**
 * Which resource a client call addresses: a selector (as handlers name resources) or an object
 * (by its apiVersion and kind), resolved against discovered resources -- the operator's discovery
 * first, then a discovery of the client's own, each scanned once and rescanned only when a name
 * is not found (e.g. a CRD created since).
 *
 * @module
 */

import type { Discovery } from "./discovery.ts";
import type { Resource } from "../model/resource.ts";
import { resourceName } from "../model/resource.ts";
import { Selector, type SelectorInput } from "../model/selector.ts";

/** Where discovered resources come from: the operator's discovery (if any) and one's own. */
export interface LookupSources {
  /** The operator's discovery, read only from its cache (it scans only the groups of its handlers). */
  shared?: () => { readonly cached: readonly Resource[] | undefined } | undefined;
  /** A discovery of all groups, scanned on first need and rescanned when a name is missing. */
  own: Discovery;
}

/** Resolves resource arguments and objects to discovered resources. */
export class ResourceLookup {
  readonly #sources: LookupSources;
  readonly #selectors = new Map<string, Selector>();

  /** Creates it; nothing is requested until the first lookup. */
  constructor(sources: LookupSources) {
    this.#sources = sources;
  }

  /** The one resource a selector names; throws a `TypeError` if it names none or several. */
  async bySelector(input: SelectorInput, signal?: AbortSignal): Promise<Resource> {
    const selector = this.#selector(input);
    if (selector.everything || selector.category !== undefined) {
      throw new TypeError(`${selector} selects several resources; name one resource (e.g. "configmaps").`);
    }
    const pick = (resources: readonly Resource[] | undefined): Resource[] | string | undefined => {
      if (!resources) return undefined;
      const { resources: found, ambiguous } = selector.select(resources);
      if (ambiguous.length > 0) {
        return `${selector} is ambiguous: ${ambiguous.map(resourceName).join(", ")}; name the group too`;
      }
      return found.length > 0 ? found : undefined;
    };
    const found = await this.#find(pick, signal);
    if (typeof found === "string") throw new TypeError(`${found}.`);
    if (!found) {
      throw new TypeError(`${selector} names no resource the API server serves; check the name, or create its CRD.`);
    }
    if (found.length > 1) {
      throw new TypeError(`${selector} names several resources: ${found.map(resourceName).join(", ")}; name one.`);
    }
    return found[0];
  }

  /** The resource of an object's apiVersion and kind; throws a `TypeError` if there is none. */
  async byObject(object: { apiVersion?: string; kind?: string }, signal?: AbortSignal): Promise<Resource> {
    const { apiVersion, kind } = object;
    if (!apiVersion || !kind) {
      throw new TypeError('The object has no apiVersion or kind: set both (e.g. apiVersion: "v1", kind: "ConfigMap").');
    }
    const slash = apiVersion.lastIndexOf("/");
    const group = slash < 0 ? "" : apiVersion.slice(0, slash);
    const version = apiVersion.slice(slash + 1);
    const pick = (resources: readonly Resource[] | undefined): Resource[] | undefined => {
      const found = resources?.filter((r) => r.group === group && r.version === version && r.kind === kind);
      return found?.length ? found : undefined;
    };
    const found = await this.#find(pick, signal);
    if (!found) {
      throw new TypeError(`The API server serves no kind ${kind} in ${apiVersion}; check both, or create its CRD.`);
    }
    return found[0];
  }

  /** Tries the shared cache, then the own discovery's cache (scanning once), then a rescan. */
  async #find<T>(
    pick: (resources: readonly Resource[] | undefined) => T | undefined,
    signal: AbortSignal | undefined,
  ): Promise<T | undefined> {
    const shared = pick(this.#sources.shared?.()?.cached);
    if (shared !== undefined) return shared;
    const own = this.#sources.own;
    const scanned = own.cached === undefined;
    const cached = pick(await own.resources(signal));
    if (cached !== undefined || scanned) return cached;
    return pick(await own.refresh({ signal }));
  }

  #selector(input: SelectorInput): Selector {
    if (typeof input !== "string") return new Selector(input);
    let selector = this.#selectors.get(input);
    if (!selector) this.#selectors.set(input, selector = new Selector(input));
    return selector;
  }
}
