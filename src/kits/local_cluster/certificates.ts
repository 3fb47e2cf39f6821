/**
 * The key material of a LocalCluster, made fresh for each cluster with WebCrypto: a CA, a serving
 * certificate it signs (valid for 127.0.0.1 and localhost), and the service-account signing key.
 *
 * We make our own CA instead of letting kube-apiserver self-sign into `--cert-dir`, because with
 * `--bind-address=127.0.0.1` its self-signed certificate does not cover the name `localhost`.
 *
 * @module
 */

import "reflect-metadata"; // @peculiar/x509 2.x needs the polyfill loaded before it.
import * as x509 from "@peculiar/x509";
import { createSelfSignedCertificates } from "../certificates.ts";

/** PEM texts of a CA and of a serving certificate and key that it signs. */
export interface ServingCertificates {
  /** The CA certificate that clients trust. */
  readonly caCert: string;
  /** The serving certificate: server and client auth, SANs 127.0.0.1, ::1 and localhost. */
  readonly cert: string;
  /** The serving certificate's private key (PKCS#8). */
  readonly key: string;
}

/** PEM texts of a key pair, as kube-apiserver's service-account flags want them. */
export interface KeyPairPem {
  /** The private key (PKCS#8, `PRIVATE KEY`). */
  readonly privateKey: string;
  /** The public key (SPKI, `PUBLIC KEY`). */
  readonly publicKey: string;
}

const ALGORITHM = { name: "ECDSA", namedCurve: "P-256", hash: "SHA-256" } as const;

/** Creates a CA and a serving certificate for a control plane on loopback. */
export async function createServingCertificates(): Promise<ServingCertificates> {
  const { ca, cert, key } = await createSelfSignedCertificates(["localhost", "127.0.0.1", "::1"], {
    caName: "kopf-local-cluster-ca",
    clientAuth: true,
  });
  return { caCert: ca, cert, key };
}

/** Creates the key pair that kube-apiserver signs and verifies service-account tokens with. */
export async function createServiceAccountKeys(): Promise<KeyPairPem> {
  const keys = await generateKeys();
  return {
    privateKey: await privateKeyPem(keys.privateKey),
    publicKey: pem(await crypto.subtle.exportKey("spki", keys.publicKey), "PUBLIC KEY"),
  };
}

function generateKeys(): Promise<CryptoKeyPair> {
  return crypto.subtle.generateKey(ALGORITHM, true, ["sign", "verify"]);
}

async function privateKeyPem(key: CryptoKey): Promise<string> {
  return pem(await crypto.subtle.exportKey("pkcs8", key), "PRIVATE KEY");
}

function pem(der: ArrayBuffer, label: string): string {
  return x509.PemConverter.encode(der, label) + "\n";
}
