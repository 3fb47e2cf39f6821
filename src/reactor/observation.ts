/**
 * Runtime observation of the cluster: which namespaces exist (for namespace patterns) and
 * which CRDs come, change and go (for resources served by CRDs), reported to callbacks.
 *
 * @module
 */

import { getLogger } from "@logtape/logtape";
import type { ApiClient } from "../api/client.ts";
import { ApiForbiddenError, describeCause } from "../api/errors.ts";
import { resourcePath } from "../api/paths.ts";
import { Watcher, WatchState } from "../api/watching.ts";
import type { KubernetesList, KubernetesObject } from "../model/body.ts";
import type { NamespacePatterns } from "../model/namespace_patterns.ts";
import type { Resource } from "../model/resource.ts";
import type { WatchingSettings } from "../settings/watching.ts";

const logger = getLogger(["kopf", "observation"]);

/** Namespaces, as the observer lists and watches them. */
export const NAMESPACES: Resource = {
  group: "",
  version: "v1",
  plural: "namespaces",
  kind: "Namespace",
  singular: "namespace",
  namespaced: false,
  preferred: true,
  shortcuts: ["ns"],
  categories: [],
  verbs: ["list", "watch"],
  subresources: [],
};

/** CustomResourceDefinitions (the preferred and only version of `apiextensions.k8s.io`). */
export const CRDS: Resource = {
  group: "apiextensions.k8s.io",
  version: "v1",
  plural: "customresourcedefinitions",
  kind: "CustomResourceDefinition",
  singular: "customresourcedefinition",
  namespaced: false,
  preferred: true,
  shortcuts: ["crd"],
  categories: [],
  verbs: ["list", "watch"],
  subresources: [],
};

/**
 * A label selector that no object matches (a label both absent and present): the permission to
 * watch does not depend on it, and a probe with it gets no objects back.
 */
const NOTHING = "!kopf.dev/probe,kopf.dev/probe";

/**
 * Opens and closes one watch request to learn whether watching is permitted: the watcher never
 * gives up on errors, but a 403 must end an observation with a warning instead. Resolves with
 * `false` on 403, `true` otherwise (other failures are the watcher's to retry). The request
 * selects nothing: a watch without a resourceVersion starts with every existing object, which the
 * API server would otherwise encode and send only for the probe to drop (all CRDs, schemas
 * included, at every start).
 */
async function mayWatch(
  client: ApiClient,
  resource: Resource,
  signal: AbortSignal,
  resourceVersion?: string,
): Promise<boolean> {
  // Its own signal, aborted once the probe is done: a stream counts on its connection until then.
  const probe = new AbortController();
  const follow = () => probe.abort(signal.reason);
  if (signal.aborted) follow();
  else signal.addEventListener("abort", follow, { once: true });
  try {
    const response = await client.open({
      path: resourcePath(resource),
      query: { watch: "true", labelSelector: NOTHING, timeoutSeconds: 1, resourceVersion },
      verb: "watch",
      resource: resource.plural,
      signal: probe.signal,
    });
    await response.body?.cancel().catch(() => {});
  } catch (error) {
    if (error instanceof ApiForbiddenError) return false;
    if (!signal.aborted) {
      logger.warn("The first request to watch {plural} has failed ({error}); retrying.", {
        plural: resource.plural,
        error: describeCause(error),
      });
    }
  } finally {
    signal.removeEventListener("abort", follow);
    probe.abort();
  }
  return true;
}

/** What the observers need. */
export interface ObserverOptions {
  /** The API client. */
  client: ApiClient;
  /** Watch settings (the operator's). */
  settings: WatchingSettings;
  /** Ends the observation. */
  signal: AbortSignal;
}

/** A namespace observation that has started: its initial set is known. */
export interface NamespaceObservation {
  /** The namespaces served now. */
  readonly initial: ReadonlySet<string>;
  /** Whether changes are watched (false: exact names only, e.g. after a 403). */
  readonly watching: boolean;
  /** Resolves when the observation ends (with the signal). */
  readonly done: Promise<void>;
}

/**
 * Finds the namespaces to serve and follows them. If every pattern is an exact name, those are
 * served without any request. Otherwise the namespaces are listed (403: a warning, and only the
 * exact names are served, assumed to exist), the matching ones that are not terminating are
 * served, and a watch reports those that appear (`onChange` with the whole new set), become
 * terminating or are deleted (403 for the watch: a warning, and the listed ones stay served).
 *
 * Resolves once the initial set is known; `done` resolves when the signal ends the watch.
 */
export async function observeNamespaces(
  options: ObserverOptions & {
    patterns: NamespacePatterns;
    /** Whether to list and watch namespaces at all (`settings.scanning.disabled` turns it off). */
    scanning: boolean;
    onChange: (namespaces: ReadonlySet<string>) => void;
  },
): Promise<NamespaceObservation> {
  const { client, patterns, signal } = options;
  const exact = new Set(patterns.exact);
  if (patterns.allExact || !options.scanning) {
    return { initial: exact, watching: false, done: Promise.resolve() };
  }
  const state = new WatchState();
  const served = new Set<string>();
  const wanted = (body: KubernetesObject) =>
    body.metadata.name !== undefined && !body.metadata.deletionTimestamp && patterns.matches(body.metadata.name);
  try {
    let token: string | undefined;
    do {
      const page: KubernetesList = await client.request<KubernetesList>({
        path: resourcePath(NAMESPACES),
        query: { limit: options.settings.listPageSize ?? undefined, continue: token },
        verb: "list",
        resource: NAMESPACES.plural,
        signal,
      });
      state.resourceVersion ??= page.metadata.resourceVersion ?? "";
      token = page.metadata.continue || undefined;
      for (const body of page.items ?? []) {
        const { name, uid, resourceVersion } = body.metadata;
        if (uid) {
          state.known.set(uid, { apiVersion: "v1", kind: "Namespace", metadata: { name, uid, resourceVersion } });
        }
        if (wanted(body)) served.add(name!);
      }
    } while (token);
    state.listed = true;
  } catch (error) {
    if (!(error instanceof ApiForbiddenError)) throw error;
    logger.warn(
      "Not enough permissions to list namespaces. Falling back to a list of namespaces which are assumed to exist: " +
        "{namespaces}",
      { namespaces: [...exact].join(", ") || "(none)" },
    );
    return { initial: exact, watching: false, done: Promise.resolve() };
  }

  const initial = new Set(served);
  if (!await mayWatch(client, NAMESPACES, signal, state.resourceVersion ?? undefined)) {
    logger.warn(
      "Not enough permissions to watch namespaces: namespaces created or deleted later will not be noticed; " +
        "serving those that exist now: {namespaces}",
      { namespaces: [...initial].join(", ") || "(none)" },
    );
    return { initial, watching: false, done: Promise.resolve() };
  }
  const watcher = new Watcher(client, NAMESPACES, { settings: options.settings, signal, state });
  const done = (async () => {
    for await (const event of watcher) {
      if (event.type === "LISTED" || event.type === null) continue;
      const name = event.object.metadata.name;
      if (name === undefined) continue;
      const serve = event.type !== "DELETED" && wanted(event.object);
      if (serve === served.has(name)) continue;
      if (serve) served.add(name);
      else served.delete(name);
      logger.info(
        serve ? "Namespace {name} is served from now on." : "Namespace {name} is no longer served ({reason}).",
        { name, reason: event.type === "DELETED" ? "deleted" : "terminating" },
      );
      options.onChange(new Set(served));
    }
  })().catch((error) => {
    logger.error("The observation of namespaces has failed; namespaces are no longer followed: {error}", {
      error: describeCause(error),
    });
  });
  return { initial, watching: true, done };
}

/**
 * Follows the CRDs: every CRD that is added, modified or deleted after the start is reported to
 * `onChange` (including those that existed at the start: the watch begins with them, as
 * `ADDED`; the callback decides whether anything changed). Without the permission to watch CRDs
 * (403), a warning says that changes will not be noticed, and it ends.
 *
 * It does not list: the first watch request (without a resourceVersion) delivers the existing
 * CRDs, and later requests resume from where it stopped. Before it, one short watch request that
 * selects nothing checks the permission (as for namespaces).
 */
export async function observeCrds(
  options: ObserverOptions & { onChange: (type: "ADDED" | "MODIFIED" | "DELETED", crd: KubernetesObject) => void },
): Promise<void> {
  const { client, signal } = options;
  if (!await mayWatch(client, CRDS, signal)) {
    logger.warn(
      "Not enough permissions to watch for resources: changes (creation/deletion/updates) of CRDs will not be " +
        "noticed; only the resources found at start are served.",
    );
    return;
  }
  if (signal.aborted) return;
  const state = new WatchState();
  state.resourceVersion = ""; // no listing: watch from "now", getting the existing CRDs first
  state.listed = true; // a relisting after 410 reports the differences to what the watch has seen
  // The watch starts without a listing's resourceVersion: until the first bookmark, it would
  // resume from the last CRD's own resourceVersion, which may be too old (410, a relisting). So
  // its requests are not cut short by the timeouts meant for the resource streams.
  const settings = Object.assign(Object.create(Object.getPrototypeOf(options.settings)), options.settings, {
    serverTimeout: null,
    clientTimeout: null,
  }) as WatchingSettings;
  const watcher = new Watcher(client, CRDS, { settings, signal, state });
  try {
    for await (const event of watcher) {
      if (event.type === "LISTED" || event.type === null) continue;
      options.onChange(event.type, event.object);
    }
  } catch (error) {
    logger.error("The observation of CRDs has failed; CRD changes are no longer noticed: {error}", {
      error: describeCause(error),
    });
  }
}
