/**
 * The temporary folder of a LocalCluster: where its files go, and the credentials written there
 * before any process starts (certificates, keys, the admin token and its token file).
 *
 * @module
 */

import { join } from "node:path";
import { createServiceAccountKeys, createServingCertificates } from "./certificates.ts";
import { renderTokenFile } from "./kubeconfig.ts";
import { toHex } from "../../utils/digests.ts";

/** File paths inside the cluster's temporary folder. */
export interface Paths {
  readonly etcdData: string;
  readonly caCert: string;
  readonly servingCert: string;
  readonly servingKey: string;
  readonly serviceAccountKey: string;
  readonly serviceAccountPub: string;
  readonly tokenFile: string;
  readonly kubeconfig: string;
  readonly logs: string;
}

/** Writes the certificates, keys and token file; returns the CA's PEM. */
export async function writeCredentials(paths: Paths, token: string): Promise<string> {
  const serving = await createServingCertificates();
  const serviceAccount = await createServiceAccountKeys();
  const secret = { mode: 0o600 };
  await Deno.mkdir(paths.logs);
  await Promise.all([
    Deno.writeTextFile(paths.caCert, serving.caCert),
    Deno.writeTextFile(paths.servingCert, serving.cert),
    Deno.writeTextFile(paths.servingKey, serving.key, secret),
    Deno.writeTextFile(paths.serviceAccountKey, serviceAccount.privateKey, secret),
    Deno.writeTextFile(paths.serviceAccountPub, serviceAccount.publicKey),
    Deno.writeTextFile(paths.tokenFile, renderTokenFile(token), secret),
  ]);
  return serving.caCert;
}

/** Where each file goes in the cluster's temporary folder. */
export function layOut(directory: string): Paths {
  return {
    etcdData: join(directory, "etcd"),
    caCert: join(directory, "ca.crt"),
    servingCert: join(directory, "serving.crt"),
    servingKey: join(directory, "serving.key"),
    serviceAccountKey: join(directory, "service-account.key"),
    serviceAccountPub: join(directory, "service-account.pub"),
    tokenFile: join(directory, "tokens.csv"),
    kubeconfig: join(directory, "kubeconfig.yaml"),
    logs: join(directory, "logs"),
  };
}

/** A fresh admin bearer token: 24 random bytes in hex. */
export function randomToken(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(24));
  return toHex(bytes);
}
