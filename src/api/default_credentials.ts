/**
 * Picks the credentials an operator should use when not told exactly: a kubeconfig on a
 * developer's machine, the pod's service account inside a cluster.
 *
 * @module
 */

import { type Credentials, CredentialsError } from "./credentials.ts";
import { defaultKubeconfigPath, loadKubeconfig } from "./kubeconfig.ts";
import { loadServiceAccount, SERVICE_ACCOUNT_ROOT } from "./service_account.ts";

/** Options of {@linkcode loadDefaultCredentials}. */
export interface DefaultCredentialsOptions {
  /** A context of the kubeconfig; giving one forces the kubeconfig. */
  context?: string;
  /** A kubeconfig file; giving one forces the kubeconfig. */
  kubeconfig?: string;
  /** The service account folder (for tests); default {@linkcode SERVICE_ACCOUNT_ROOT}. */
  serviceAccountRoot?: string;
}

/**
 * Loads the credentials to use by default, in this order:
 * 1. a kubeconfig, if a kubeconfig file or a context is given, `KUBECONFIG` is set, or
 *    `~/.kube/config` exists (see `loadKubeconfig`);
 * 2. the in-cluster service account, if `KUBERNETES_SERVICE_HOST` is set and the token file
 *    exists (see `loadServiceAccount`);
 * 3. otherwise a {@linkcode CredentialsError} saying where it looked.
 *
 * @example
 * ```ts ignore
 * const credentials = await loadDefaultCredentials({ context: Deno.env.get("KOPF_CONTEXT") });
 * console.log(`Using ${credentials.source}.`);
 * ```
 *
 * @param options An explicit kubeconfig file or context, both optional.
 * @returns The credentials.
 */
export async function loadDefaultCredentials(
  options: DefaultCredentialsOptions = {},
): Promise<Credentials> {
  const kubeconfigEnv = Deno.env.get("KUBECONFIG");
  if (options.kubeconfig || options.context !== undefined || kubeconfigEnv) {
    return await loadKubeconfig({ path: options.kubeconfig, context: options.context });
  }
  const homeConfig = defaultKubeconfigPath();
  if (homeConfig && await exists(homeConfig)) {
    return await loadKubeconfig({ path: homeConfig });
  }
  const root = (options.serviceAccountRoot ?? SERVICE_ACCOUNT_ROOT).replace(/\/+$/, "") || "/";
  const host = Deno.env.get("KUBERNETES_SERVICE_HOST");
  const tokenPath = `${root}/token`;
  const hasToken = await exists(tokenPath);
  if (host && hasToken) {
    return await loadServiceAccount({ root });
  }
  const inCluster = !host ? "KUBERNETES_SERVICE_HOST is not set (not in a pod)" : `${tokenPath} not found`;
  throw new CredentialsError(
    "no Kubernetes credentials found",
    `KUBECONFIG is not set, ${homeConfig ?? "~/.kube/config (no HOME)"} does not exist, ` +
      `and no in-cluster service account: ${inCluster}; ` +
      "create a kubeconfig, set KUBECONFIG, or pass a kubeconfig path",
  );
}

async function exists(path: string): Promise<boolean> {
  try {
    await Deno.stat(path);
    return true;
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) return false;
    return true; // Exists but unreadable: let the loader report the exact problem.
  }
}
