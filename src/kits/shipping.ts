/**
 * What `kopf generate` and `kopf build` need from the library: the handled resources resolved by
 * discovery, the RBAC rules and manifests computed from them, and the Deployment.
 *
 * @module
 */

import { ApiClient } from "../api/client.ts";
import { compareVersionPriority, type CrdBody, discoverResources, resolveSelectors } from "../api/discovery.ts";
import { openVault } from "../handling/login.ts";
import { defaultRegistry, Registry } from "../handling/registry.ts";
import type { KubernetesObject } from "../model/body.ts";
import type { Resource } from "../model/resource.ts";
import { groupsToScan, type Selector } from "../model/selector.ts";
import { Settings } from "../settings/settings.ts";
import type { ResolvedSelectors } from "./rbac.ts";

export {
  type NeededRule,
  neededRules,
  type PolicyRule,
  rbacManifests,
  type RbacOptions,
  type ResolvedSelectors,
} from "./rbac.ts";
export { DENO_UID, deploymentManifest, type DeploymentOptions, LIVENESS_PORT, METRICS_PORT } from "./deployment.ts";
export { defaultRegistry, Registry };

/** Options of {@linkcode resolveHandledResources}. */
export interface ResolveHandledOptions {
  /** The kubeconfig context; the current one by default. */
  context?: string;
  /**
   * CRDs to resolve against instead of the cluster's discovery (their objects, as in `crd.yaml`):
   * no cluster is needed then, and selectors of other resources are an error.
   */
  crds?: readonly KubernetesObject[];
  /** Cancels the discovery. */
  signal?: AbortSignal;
}

/**
 * Resolves the selectors of every handler (resource and admission handlers) against the cluster's
 * discovery, logging in as `kopf run` does (the kubeconfig or the pod's service account), or
 * against the given CRDs. Selectors that resolve to nothing are an error: their rules cannot be known.
 *
 * @param registry The handlers; the default registry by default.
 * @param options The context, or the CRDs.
 */
export async function resolveHandledResources(
  registry: Registry = defaultRegistry,
  options: ResolveHandledOptions = {},
): Promise<ResolvedSelectors> {
  const selectors = new Set<Selector>([
    ...registry.handlers.map((handler) => handler.selector),
    ...registry.webhooks.map((webhook) => webhook.selector),
    ...registry.converters.map((converter) => converter.selector),
  ]);
  let resources: Resource[];
  if (options.crds) {
    resources = options.crds.flatMap(resourcesOfCrd);
  } else {
    const vault = await openVault(
      {
        registry: new Registry(),
        settings: new Settings(),
        memo: {},
        signal: options.signal,
        context: options.context,
      },
      undefined,
      () => {},
    );
    using client = new ApiClient(vault);
    resources = await discoverResources(client, { groups: groupsToScan(selectors), signal: options.signal });
  }
  const resolution = resolveSelectors(selectors, resources);
  if (resolution.unresolved.length || resolution.ambiguous.size) {
    const names = [
      ...new Set([...resolution.unresolved, ...resolution.ambiguous.keys()].map((selector) => selector.toString())),
    ];
    const where = options.crds ? "the given CRDs" : "the cluster";
    throw new Error(
      `The resources of ${names.join(", ")} are not found (or are ambiguous) in ${where}: apply their CRDs ` +
        `first (or give them), or name them fully (plural.version.group), so that their rules can be computed.`,
    );
  }
  return resolution.served;
}

/**
 * The resources that a CRD declares, one per served version, as discovery would report them
 * (the storage version preferred; `status` and `scale` subresources as declared).
 *
 * @param crd A CustomResourceDefinition object.
 */
export function resourcesOfCrd(crd: KubernetesObject): Resource[] {
  const spec = (crd as CrdBody).spec;
  if (crd.kind !== "CustomResourceDefinition" || !spec?.group || !spec.names?.plural || !spec.names.kind) {
    throw new Error(`${crd.metadata?.name ?? "An object"} is not a CustomResourceDefinition with a group and names.`);
  }
  const names = spec.names;
  const versions = ((spec.versions ?? []) as CrdVersion[]).filter((version) => version.served !== false);
  const preferred = versions.map((version) => version.name).sort(compareVersionPriority)[0];
  return versions.map((version) => ({
    group: spec.group!,
    version: version.name,
    plural: names.plural!,
    kind: names.kind!,
    singular: (names as { singular?: string }).singular ?? names.kind!.toLowerCase(),
    namespaced: spec.scope !== "Cluster",
    preferred: version.name === preferred,
    shortcuts: names.shortNames ?? [],
    categories: names.categories ?? [],
    verbs: ["create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"],
    subresources: Object.keys(version.subresources ?? {}),
  }));
}

interface CrdVersion {
  name: string;
  served?: boolean;
  subresources?: Record<string, unknown>;
}
