/**
 * Reading the server's discovery documents: aggregated discovery (kube-apiserver >= 1.30; v2beta1
 * since 1.27) answers for the whole cluster in two requests (`/api`, `/apis`); older servers
 * answer with the classic group lists, and then each group version is read on its own.
 *
 * @module
 */

import { getLogger } from "@logtape/logtape";
import type { ApiClient } from "./client.ts";
import { ApiNotFoundError, ApiServerError } from "./errors.ts";
import type { Resource } from "../model/resource.ts";

const logger = getLogger(["kopf", "discovery"]);

// The aggregated form first; servers without it ignore these media types and send the classic one.
const ACCEPT = [
  "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList",
  "application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList",
  "application/json",
].join(",");

/** What discovery needs of an API client: only its `request` method (an `ApiClient` fits). */
export type DiscoveryClient = Pick<ApiClient, "request">;

/** Options of {@linkcode discoverResources}. */
export interface DiscoverOptions {
  /**
   * The API groups to scan (`""` for the core group); `null` or absent for all groups. Scanning all
   * groups also reads aggregated APIs (e.g. metrics), which may be slow or down.
   */
  groups?: readonly string[] | null;
  /** Cancels the scan. */
  signal?: AbortSignal;
}

/**
 * Reads the resources that the server serves in the given groups, all versions, with their
 * subresources attached to their parents. A group version that is gone (404) or whose aggregated
 * API is unavailable (5xx, or marked stale) is left out with a warning.
 *
 * @example
 * ```ts ignore
 * const resources = await discoverResources(client, { groups: ["", "kopf.dev"] });
 * ```
 */
export async function discoverResources(client: DiscoveryClient, options: DiscoverOptions = {}): Promise<Resource[]> {
  const groups = options.groups ?? null;
  const wanted = (group: string): boolean => groups === null || groups.includes(group);
  const scan = { client, wanted, signal: options.signal };
  const [core, named] = await Promise.all([
    wanted("") ? readCore(scan) : [],
    groups === null || groups.some((group) => group !== "") ? readNamed(scan) : [],
  ]);
  return [...core, ...named];
}

// -- The documents, as far as they are read here. -----------------------------------------------

interface GroupVersionKind {
  group?: string;
  version?: string;
  kind?: string;
}

interface AggregatedResource {
  resource: string;
  responseKind?: GroupVersionKind | null;
  scope?: "Cluster" | "Namespaced";
  singularResource?: string;
  verbs?: string[] | null;
  shortNames?: string[] | null;
  categories?: string[] | null;
  subresources?: { subresource: string }[] | null;
}

interface AggregatedGroup {
  metadata?: { name?: string };
  versions?: { version: string; resources?: AggregatedResource[] | null; freshness?: "Current" | "Stale" }[] | null;
}

interface ClassicResource {
  name: string;
  singularName?: string;
  namespaced?: boolean;
  kind: string;
  verbs?: string[] | null;
  shortNames?: string[] | null;
  categories?: string[] | null;
}

interface DiscoveryDocument {
  kind?: string;
  /** `APIGroupDiscoveryList` */
  items?: AggregatedGroup[] | null;
  /** `APIVersions` (`/api`, classic) */
  versions?: string[] | null;
  /** `APIGroupList` (`/apis`, classic) */
  groups?: {
    name: string;
    versions?: { version: string }[] | null;
    preferredVersion?: { version: string };
  }[] | null;
  /** `APIResourceList` (`/api/v1`, `/apis/<group>/<version>`) */
  resources?: ClassicResource[] | null;
}

interface Scan {
  client: DiscoveryClient;
  wanted: (group: string) => boolean;
  signal: AbortSignal | undefined;
}

async function readCore(scan: Scan): Promise<Resource[]> {
  const doc = await scan.client.request<DiscoveryDocument>({ path: "/api", accept: ACCEPT, signal: scan.signal });
  if (doc?.kind === "APIGroupDiscoveryList") return fromAggregated(doc.items ?? [], scan.wanted);
  if (!Array.isArray(doc?.versions)) throw unexpected("/api", "APIVersions", doc);
  const preferred = corePreferred(doc.versions);
  const lists = doc.versions.map((version) => readGroupVersion(scan, "", version, version === preferred));
  return (await Promise.all(lists)).flat();
}

async function readNamed(scan: Scan): Promise<Resource[]> {
  const doc = await scan.client.request<DiscoveryDocument>({ path: "/apis", accept: ACCEPT, signal: scan.signal });
  if (doc?.kind === "APIGroupDiscoveryList") {
    // Only the core group is served at /api; a "" here would be a server bug, not the core group.
    return fromAggregated(doc.items ?? [], (group) => group !== "" && scan.wanted(group));
  }
  if (!Array.isArray(doc?.groups)) throw unexpected("/apis", "APIGroupList", doc);
  const lists: Promise<Resource[]>[] = [];
  for (const group of doc.groups) {
    if (!group.name || !scan.wanted(group.name)) continue;
    const versions = group.versions ?? [];
    const preferred = group.preferredVersion?.version ?? versions[0]?.version;
    for (const { version } of versions) {
      lists.push(readGroupVersion(scan, group.name, version, version === preferred));
    }
  }
  return (await Promise.all(lists)).flat();
}

async function readGroupVersion(scan: Scan, group: string, version: string, preferred: boolean): Promise<Resource[]> {
  const path = group ? `/apis/${group}/${version}` : `/api/${version}`;
  const groupVersion = group ? `${group}/${version}` : version;
  let doc: DiscoveryDocument;
  try {
    doc = await scan.client.request<DiscoveryDocument>({ path, signal: scan.signal });
  } catch (error) {
    if (error instanceof ApiNotFoundError) {
      // Between listing the groups and reading one, its last CRD may have been deleted.
      logger.warn("API group version {groupVersion} is gone (HTTP 404); it has no resources now.", { groupVersion });
      return [];
    }
    if (error instanceof ApiServerError) {
      logger.warn(
        "API group version {groupVersion} is unavailable, probably its aggregated API server is down; " +
          "its resources will not be served until a rescan finds it: {error}",
        { groupVersion, error: error.message },
      );
      return [];
    }
    throw error;
  }
  return fromResourceList(doc?.resources ?? [], group, version, preferred);
}

function fromResourceList(list: ClassicResource[], group: string, version: string, preferred: boolean): Resource[] {
  // Subresources are listed as "<plural>/<subresource>" entries of their own.
  const subresources = new Map<string, string[]>();
  for (const entry of list) {
    const slash = entry.name.indexOf("/");
    if (slash < 0) continue;
    const parent = entry.name.slice(0, slash);
    subresources.set(parent, [...subresources.get(parent) ?? [], entry.name.slice(slash + 1)]);
  }
  return list.filter((entry) => !entry.name.includes("/")).map((entry) => ({
    group,
    version,
    plural: entry.name,
    kind: entry.kind,
    // K3s leaves the singular of builtins empty; the lower-cased kind is what kubectl would accept.
    singular: entry.singularName || entry.kind.toLowerCase(),
    namespaced: entry.namespaced ?? false,
    preferred,
    shortcuts: entry.shortNames ?? [],
    categories: entry.categories ?? [],
    verbs: entry.verbs ?? [],
    subresources: subresources.get(entry.name) ?? [],
  }));
}

function fromAggregated(items: AggregatedGroup[], wanted: (group: string) => boolean): Resource[] {
  const resources: Resource[] = [];
  for (const item of items) {
    const group = item.metadata?.name ?? "";
    if (!wanted(group)) continue;
    const versions = item.versions ?? [];
    // Versions come in the order of preference; the core group's v1 is preferred regardless.
    const preferred = group === "" ? corePreferred(versions.map((v) => v.version)) : versions[0]?.version;
    for (const { version, resources: entries, freshness } of versions) {
      const groupVersion = group ? `${group}/${version}` : version;
      if (freshness === "Stale") {
        logger.warn(
          "API group version {groupVersion} is unavailable (discovery marks it stale), probably its aggregated " +
            "API server is down; its resources will not be served until a rescan finds it.",
          { groupVersion },
        );
        continue;
      }
      for (const entry of entries ?? []) {
        const kind = entry.responseKind?.kind;
        if (!kind) {
          // Only its subresources are served (e.g. by some aggregated APIs): nothing to watch.
          logger.debug("Resource {plural} of {groupVersion} has no kind; it is skipped.", {
            plural: entry.resource,
            groupVersion,
          });
          continue;
        }
        resources.push({
          group,
          version,
          plural: entry.resource,
          kind,
          singular: entry.singularResource || kind.toLowerCase(),
          namespaced: entry.scope === "Namespaced",
          preferred: version === preferred,
          shortcuts: entry.shortNames ?? [],
          categories: entry.categories ?? [],
          verbs: entry.verbs ?? [],
          subresources: (entry.subresources ?? []).map((sub) => sub.subresource),
        });
      }
    }
  }
  return resources;
}

function corePreferred(versions: string[]): string | undefined {
  return versions.includes("v1") ? "v1" : versions[0];
}

function unexpected(path: string, expected: string, doc: unknown): Error {
  const kind = doc && typeof doc === "object" && "kind" in doc ? String(doc.kind) : typeof doc;
  return new Error(
    `GET ${path} returned an unexpected document (${kind}), neither an APIGroupDiscoveryList nor an ${expected}; ` +
      `is the server URL pointing at a Kubernetes API server (not a proxy or a web page)?`,
  );
}
