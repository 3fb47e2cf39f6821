/**
 * The admin credentials of a LocalCluster as files: the kubeconfig that clients read (one
 * context, the CA inline, a bearer token) and the token file that kube-apiserver reads.
 *
 * @module
 */

/** The name of the cluster, user and context in the kubeconfig files LocalCluster writes. */
export const CONTEXT_NAME = "local-cluster";

/** What goes into a kubeconfig. */
export interface KubeconfigParams {
  /** The API server URL, `https://127.0.0.1:<port>` or a proxy in front of it. */
  readonly server: string;
  /** PEM of the CA that signs the API server's certificate. */
  readonly caCert: string;
  /** The bearer token of the admin user. */
  readonly token: string;
}

/**
 * Renders a kubeconfig as JSON text.
 *
 * JSON is valid YAML, so kubectl, client-go and @kubernetes/client-node all read it, and no YAML
 * library is needed to write it.
 */
export function renderKubeconfig(params: KubeconfigParams): string {
  const config = {
    apiVersion: "v1",
    kind: "Config",
    clusters: [{
      name: CONTEXT_NAME,
      cluster: {
        server: params.server,
        "certificate-authority-data": base64(params.caCert),
      },
    }],
    users: [{ name: `${CONTEXT_NAME}-admin`, user: { token: params.token } }],
    contexts: [{
      name: CONTEXT_NAME,
      context: { cluster: CONTEXT_NAME, user: `${CONTEXT_NAME}-admin`, namespace: "default" },
    }],
    "current-context": CONTEXT_NAME,
    preferences: {},
  };
  return JSON.stringify(config, null, 2) + "\n";
}

/**
 * The `--token-auth-file` line for the admin: a member of `system:masters`, which RBAC lets do
 * anything. Format: `token,user,uid,"group1,group2"`.
 */
export function renderTokenFile(token: string): string {
  return `${token},kopf-admin,kopf-admin,"system:masters"\n`;
}

function base64(text: string): string {
  const bytes = new TextEncoder().encode(text);
  let binary = "";
  for (const byte of bytes) binary += String.fromCharCode(byte);
  return btoa(binary);
}
