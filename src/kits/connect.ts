/**
 * `kopf.connect()`: the handlers' client for scripts and code outside handlers, with credentials
 * found as `kopf run` finds them -- the login handlers if any are registered, else the pod's
 * service account or the kubeconfig (its current context, or the one given).
 *
 * @module
 */

import { getLogger } from "@logtape/logtape";
import { ApiClient } from "../api/client.ts";
import { KubeApi } from "../api/kube_api.ts";
import { openVault } from "../handling/login.ts";
import { defaultRegistry, type Registry } from "../handling/registry.ts";
import { Settings } from "../settings/settings.ts";

const logger = getLogger(["kopf", "api"]);

/** Options of {@linkcode connect}. */
export interface ConnectOptions {
  /** The kubeconfig file (then the kubeconfig alone is used); default: `KUBECONFIG`, else `~/.kube/config`. */
  kubeconfig?: string;
  /** The kubeconfig context (then the kubeconfig alone is used); default: its current context. */
  context?: string;
  /** Whose login handlers run, if it has any; the default registry otherwise. */
  registry?: Registry;
  /** Timeouts, retries and watch behaviour; Kopf's defaults otherwise. */
  settings?: Settings;
  /** Cancels the login. */
  signal?: AbortSignal;
}

/**
 * A client connected on its own (not an operator's): close it when done, or let `using` do it.
 *
 * @example
 * ```ts ignore
 * using api = await kopf.connect();
 * console.log((await api.list("namespaces")).items.length);
 * ```
 */
export class ConnectedApi extends KubeApi implements Disposable {
  readonly #client: ApiClient;

  /** Wraps a client of its own; see {@linkcode connect}. */
  constructor(client: ApiClient, settings: Settings) {
    super({ client: () => client, watching: () => settings.watching });
    this.#client = client;
  }

  /** Closes the connections; the client is not usable afterwards. */
  close(): void {
    this.#client.close();
  }

  /** Same as {@linkcode ConnectedApi.close}. */
  [Symbol.dispose](): void {
    this.close();
  }
}

/**
 * Connects to the cluster as `kopf run` would -- login handlers, else the service account or the
 * kubeconfig -- and returns the client that handlers get as `api`.
 *
 * @example
 * ```ts ignore
 * import * as kopf from "@kopf/kopf";
 * using api = await kopf.connect({ context: "staging" });
 * const cm = await api.get("configmaps", "settings", { namespace: "default" });
 * ```
 *
 * @returns The client; rejects with a `kopf.LoginError` saying where it looked if there are no usable credentials.
 */
export async function connect(options: ConnectOptions = {}): Promise<ConnectedApi> {
  const settings = options.settings ?? new Settings();
  const vault = await openVault(
    {
      registry: options.registry ?? defaultRegistry,
      settings,
      memo: {},
      signal: options.signal,
      kubeconfig: options.kubeconfig,
      context: options.context,
    },
    undefined,
    (error) => logger.error("Logging in again has failed: {error}", { error }),
  );
  return new ConnectedApi(new ApiClient(vault, { networking: settings.networking }), settings);
}
