/**
 * What `kopf generate` and `kopf build` need from the library: the handled resources resolved by
 * discovery, the RBAC rules and manifests computed from them, and the Deployment.
 *
 * @module
 */

import { ApiClient } from "../api/client.ts";
import { discoverResources, resolveSelectors } from "../api/discovery.ts";
import { openVault } from "../handling/login.ts";
import { defaultRegistry, Registry } from "../handling/registry.ts";
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
export { DENO_UID, deploymentManifest, type DeploymentOptions, LIVENESS_PORT } from "./deployment.ts";
export { defaultRegistry, Registry };

/** Options of {@linkcode resolveHandledResources}. */
export interface ResolveHandledOptions {
  /** The kubeconfig context; the current one by default. */
  context?: string;
  /** Cancels the discovery. */
  signal?: AbortSignal;
}

/**
 * Resolves the selectors of every handler (resource and admission handlers) against the cluster's
 * discovery, logging in as `kopf run` does (the kubeconfig or the pod's service account).
 * Selectors that resolve to nothing are an error: their rules cannot be known.
 *
 * @param registry The handlers; the default registry by default.
 * @param options The context.
 */
export async function resolveHandledResources(
  registry: Registry = defaultRegistry,
  options: ResolveHandledOptions = {},
): Promise<ResolvedSelectors> {
  const vault = await openVault(
    { registry: new Registry(), settings: new Settings(), memo: {}, signal: options.signal, context: options.context },
    undefined,
    () => {},
  );
  using client = new ApiClient(vault);
  const selectors = new Set<Selector>([
    ...registry.handlers.map((handler) => handler.selector),
    ...registry.webhooks.map((webhook) => webhook.selector),
  ]);
  const resources = await discoverResources(client, { groups: groupsToScan(selectors), signal: options.signal });
  const resolution = resolveSelectors(selectors, resources);
  if (resolution.unresolved.length || resolution.ambiguous.size) {
    const names = [...resolution.unresolved, ...resolution.ambiguous.keys()].map((selector) => selector.toString());
    throw new Error(
      `The resources of ${names.join(", ")} are not found (or are ambiguous) in the cluster: apply their CRDs ` +
        `first, or name them fully (plural.version.group), so that their rules can be computed.`,
    );
  }
  return resolution.served;
}
