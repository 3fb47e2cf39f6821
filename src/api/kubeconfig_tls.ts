/**
 * The TLS material of a kubeconfig's cluster and user: the CA, the server name and proxy, and
 * the client certificate and key, each given as a file or inline as base64 (`<field>-data`) but
 * never both, as kubectl reads them, and checked to be PEM of the right kind.
 *
 * @module
 */

import { firstLine, type PemKind, pemProblem, type TlsMaterial } from "./credentials.ts";
import type { Fields } from "./kubeconfig_fields.ts";

/** The cluster's TLS settings: verification, server name, proxy, and the CA certificate. */
export async function readClusterTls(cluster: Fields): Promise<TlsMaterial> {
  const tls: TlsMaterial = { insecure: cluster.boolean("insecure-skip-tls-verify") };
  const serverName = cluster.string("tls-server-name");
  if (serverName) tls.serverName = serverName;
  const proxyUrl = cluster.string("proxy-url");
  if (proxyUrl) {
    if (!URL.canParse(proxyUrl)) {
      cluster.fail(`proxy-url "${proxyUrl}" of ${cluster.owner} is not a URL; expected e.g. http://proxy:3128`);
    }
    tls.proxyUrl = proxyUrl;
  }
  const ca = await readPem(cluster, "certificate-authority", "certificate");
  if (ca) tls.caCerts = [ca];
  return tls;
}

/** The user's client certificate and key; one without the other is refused. */
export async function readClientCertificate(user: Fields): Promise<Pick<TlsMaterial, "cert" | "key">> {
  const cert = await readPem(user, "client-certificate", "certificate");
  const key = await readPem(user, "client-key", "private key");
  if (Boolean(cert) !== Boolean(key)) {
    const [has, lacks] = cert ? ["client-certificate", "client-key"] : ["client-key", "client-certificate"];
    user.fail(`${user.owner} has a ${has} but no ${lacks}; give both or neither`);
  }
  return cert && key ? { cert, key } : {};
}

/** Reads a PEM field given as a file (`<field>`) or inline (`<field>-data`, base64); both at once is refused, as by kubectl. */
async function readPem(entry: Fields, field: string, kind: PemKind): Promise<string | undefined> {
  const file = entry.path(field);
  const data = entry.string(`${field}-data`);
  const owner = `of ${entry.owner}`;
  if (file && data) {
    entry.fail(`both ${field} and ${field}-data are set ${owner}; keep one of them`);
  }
  if (file) {
    const what = `${field} file ${owner} (${file})`;
    let text: string;
    try {
      text = await Deno.readTextFile(file);
    } catch (error) {
      const problem = error instanceof Deno.errors.NotFound
        ? `${what} not found; fix the path in the kubeconfig or create the file`
        : `cannot read ${what}: ${error instanceof Error ? firstLine(error.message) : error}`;
      entry.fail(problem, error);
    }
    return pemOrFail(entry, text, kind, what);
  }
  if (!data) return undefined;
  let text: string;
  try {
    const binary = atob(data.replace(/\s+/g, ""));
    text = new TextDecoder().decode(Uint8Array.from(binary, (char) => char.charCodeAt(0)));
  } catch {
    entry.fail(`${field}-data ${owner} is not valid base64; encode the PEM text with base64`);
  }
  return pemOrFail(entry, text, kind, `${field}-data ${owner} (decoded)`);
}

function pemOrFail(entry: Fields, text: string, kind: PemKind, what: string): string {
  const problem = pemProblem(text, kind);
  if (problem) entry.fail(`${what} ${problem}`);
  return text;
}
