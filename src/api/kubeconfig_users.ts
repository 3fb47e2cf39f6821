/**
 * How a kubeconfig's user authenticates each request: a token file (re-read as it rotates), a
 * token, an exec credential plugin, an auth-provider's stored token, basic auth, or nothing -- chosen
 * and refused as client-go does. The plugins' and auth-providers' modules load only when a
 * kubeconfig uses them.
 *
 * @module
 */

import { encodeBase64 } from "./connection_info.ts";
import { basicAuthorization, type TlsMaterial } from "./credentials.ts";
import { type Fields, isRecord } from "./kubeconfig_fields.ts";
import { TokenFile } from "./service_account.ts";

/** The cluster as an exec plugin with `provideClusterInfo` is told about it (client-go's `Cluster` fields). */
export function execClusterInfo(cluster: Fields, server: string, tls: TlsMaterial): Record<string, unknown> {
  const info: Record<string, unknown> = { server };
  if (tls.serverName) info["tls-server-name"] = tls.serverName;
  if (tls.insecure) info["insecure-skip-tls-verify"] = true;
  if (tls.caCerts) info["certificate-authority-data"] = encodeBase64(tls.caCerts.join(""));
  if (tls.proxyUrl) info["proxy-url"] = tls.proxyUrl;
  // Per-cluster settings for the plugin live in the cluster's extension of this name.
  const extension = cluster.list("extensions").find((item) =>
    isRecord(item) && item.name === "client.authentication.k8s.io/exec"
  );
  if (isRecord(extension) && extension.extension !== undefined) info.config = extension.extension;
  return info;
}

/** How a user's Authorization header is made, per request. */
export interface Authenticator {
  /** The header for the next request, or `undefined` for none. */
  header(): Promise<string | undefined>;
  /** The API server has rejected the header: renew it if possible. */
  invalidate(): void;
  /** The header when it never changes (`null`: none); absent when `header()` resolves it anew. */
  readonly fixed?: string | null;
  /** A client certificate the authentication gave (an exec plugin's), with its key. */
  readonly cert?: string;
  readonly key?: string;
}

/** No Authorization header: a user with no credentials (a client certificate may still authenticate). */
export const ANONYMOUS: Authenticator = { header: () => Promise.resolve(undefined), invalidate() {}, fixed: null };

function fixedHeader(header: string): Authenticator {
  // Static credentials have nothing to renew: the vault drops them and logs in again.
  return { header: () => Promise.resolve(header), invalidate() {}, fixed: header };
}

/** Keys of a kubeconfig user that ask for impersonation, which these credentials cannot carry. */
const IMPERSONATION_KEYS = ["as", "as-uid", "as-groups", "as-user-extra"];

/**
 * Chooses the user's authentication as client-go does: `tokenFile`, else `token`, else an exec
 * plugin, else an auth-provider's token, else basic auth; and refuses the combinations kubectl
 * refuses. Token files are read and exec plugins run now, so that a broken login fails early.
 */
export async function authenticatorOf(
  user: Fields,
  clusterInfo: () => Record<string, unknown>,
): Promise<Authenticator> {
  const impersonation = IMPERSONATION_KEYS.filter((key) => user.has(key));
  if (impersonation.length) {
    user.fail(
      `${user.owner} asks for impersonation (${
        impersonation.join(", ")
      }), which is not supported; use a user without it`,
    );
  }
  const tokenFile = user.path("tokenFile");
  const token = user.string("token")?.trim();
  const exec = user.fields("exec");
  const provider = user.fields("auth-provider");
  const username = user.string("username");
  if (exec && provider) user.fail(`${user.owner} has both exec and auth-provider; keep one of them`);
  if ((username || user.has("password")) && (tokenFile || token || exec || provider)) {
    user.fail(
      `${user.owner} has a username/password and another way to authenticate (token, tokenFile, exec or ` +
        "auth-provider); kubectl refuses that too; keep one",
    );
  }

  if (tokenFile) {
    const file = new TokenFile(tokenFile, user.where);
    await file.read();
    return { header: async () => `Bearer ${await file.read()}`, invalidate: () => file.invalidate() };
  }
  if (token) return fixedHeader(`Bearer ${token}`);
  if (exec) return await execAuthenticator(user, exec, clusterInfo);
  if (provider) {
    // Loaded only for a kubeconfig that uses it (as the exec plugins): most use a token or a certificate.
    const { StoredProviderToken } = await import("./auth_provider.ts");
    const stored = new StoredProviderToken(user, provider);
    // An expired token rejects the promise, as authorization() promises.
    return { header: () => Promise.resolve().then(() => stored.header()), invalidate() {} };
  }
  if (username) return fixedHeader(basicAuthorization(username, user.string("password") ?? ""));
  return ANONYMOUS;
}

async function execAuthenticator(
  user: Fields,
  exec: Fields,
  clusterInfo: () => Record<string, unknown>,
): Promise<Authenticator> {
  const { ExecPlugin, readExecConfig } = await import("./exec_credentials.ts");
  const config = readExecConfig(exec);
  const plugin = new ExecPlugin(config, {
    where: user.where,
    owner: user.owner,
    cluster: clusterInfo(),
  });
  const { cert, key } = await plugin.credential();
  return {
    async header(): Promise<string | undefined> {
      const { token } = await plugin.credential();
      return token ? `Bearer ${token}` : undefined;
    },
    invalidate: () => plugin.invalidate(),
    cert,
    key,
  };
}
