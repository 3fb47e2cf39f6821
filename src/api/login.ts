/**
 * The ready-made logins: from a kubeconfig and from the pod's service account. The operator uses
 * both when no login handler is registered; login handlers may call them too.
 *
 * @module
 */

import { CredentialsError } from "./credentials.ts";
import { type ConnectionInfo, connectionInfoOf } from "./connection_info.ts";
import { defaultKubeconfigPath, loadKubeconfig } from "./kubeconfig.ts";
import { LoginError } from "./login_error.ts";
import { loadServiceAccount, SERVICE_ACCOUNT_ROOT } from "./service_account.ts";

/** The priority of {@linkcode loginWithKubeconfig}'s credentials unless told otherwise. */
export const KUBECONFIG_PRIORITY = 10;

/** The priority of {@linkcode loginWithServiceAccount}'s credentials unless told otherwise. */
export const SERVICE_ACCOUNT_PRIORITY = 20;

/** Options of {@linkcode loginWithKubeconfig}. */
export interface KubeconfigLoginOptions {
  /** The kubeconfig file; default: the `KUBECONFIG` list, else `~/.kube/config`. */
  path?: string;
  /** The context; default: the kubeconfig's `current-context`. */
  context?: string;
  /** The credentials' priority; default {@linkcode KUBECONFIG_PRIORITY} (10). */
  priority?: number;
}

/**
 * Logs in with a kubeconfig, as kubectl does: the `KUBECONFIG` list or `~/.kube/config` (or the
 * given file), the current context (or the given one), with exec credential plugins, auth
 * providers and token files. The returned info describes the credentials as they are now, and
 * also carries them live: tokens of exec plugins and token files keep being refreshed.
 *
 * @example A login handler that picks a context
 * ```ts
 * import * as kopf from "@kopf/kopf";
 * kopf.on.login(function staging() {
 *   return kopf.loginWithKubeconfig({ context: "staging" });
 * });
 * ```
 *
 * @param options The file, the context and the priority, all optional.
 * @returns The connection info, or `null` when there is no kubeconfig at all (no file given, no
 *   `KUBECONFIG`, no `~/.kube/config`); rejects with a {@linkcode LoginError} naming the file and
 *   the problem if there is one but it cannot be used.
 */
export async function loginWithKubeconfig(options: KubeconfigLoginOptions = {}): Promise<ConnectionInfo | null> {
  const { path, context, priority = KUBECONFIG_PRIORITY } = options;
  if (!path && context === undefined && !Deno.env.get("KUBECONFIG")) {
    const home = defaultKubeconfigPath();
    if (!home || !await exists(home)) return null;
  }
  try {
    return await connectionInfoOf(await loadKubeconfig({ path, context }), priority);
  } catch (error) {
    if (error instanceof CredentialsError) throw new LoginError(error.message, { cause: error });
    throw error;
  }
}

/** Options of {@linkcode loginWithServiceAccount}. */
export interface ServiceAccountLoginOptions {
  /** The mounted service account folder; default {@linkcode SERVICE_ACCOUNT_ROOT}. */
  root?: string;
  /** The credentials' priority; default {@linkcode SERVICE_ACCOUNT_PRIORITY} (20). */
  priority?: number;
}

/**
 * Logs in with the pod's service account: the token, CA and namespace that Kubernetes mounts
 * into the pod, and the API server's address from `KUBERNETES_SERVICE_HOST`/`_PORT`. The token
 * is re-read as the kubelet rotates it.
 *
 * @example A login handler for pods only, with a higher priority
 * ```ts
 * import * as kopf from "@kopf/kopf";
 * kopf.on.login(function inPod() {
 *   return kopf.loginWithServiceAccount({ priority: 100 });
 * });
 * ```
 *
 * @param options The service account folder and the priority, both optional.
 * @returns The connection info, or `null` outside a pod (`KUBERNETES_SERVICE_HOST` unset or no
 *   token file); rejects with a {@linkcode LoginError} if the mounted files cannot be used.
 */
export async function loginWithServiceAccount(
  options: ServiceAccountLoginOptions = {},
): Promise<ConnectionInfo | null> {
  const root = (options.root ?? SERVICE_ACCOUNT_ROOT).replace(/\/+$/, "") || "/";
  if (!Deno.env.get("KUBERNETES_SERVICE_HOST") || !await exists(`${root}/token`)) return null;
  try {
    return await connectionInfoOf(await loadServiceAccount({ root }), options.priority ?? SERVICE_ACCOUNT_PRIORITY);
  } catch (error) {
    if (error instanceof CredentialsError) throw new LoginError(error.message, { cause: error });
    throw error;
  }
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
