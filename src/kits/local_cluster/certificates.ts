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
const VALIDITY_DAYS = 365;
const CLOCK_SKEW_MS = 60 * 60 * 1000;

/** Creates a CA and a serving certificate for a control plane on loopback. */
export async function createServingCertificates(): Promise<ServingCertificates> {
  const notBefore = new Date(Date.now() - CLOCK_SKEW_MS);
  const notAfter = new Date(notBefore.getTime() + VALIDITY_DAYS * 24 * 60 * 60 * 1000);
  const caKeys = await generateKeys();
  const ca = await x509.X509CertificateGenerator.createSelfSigned({
    serialNumber: serialNumber(),
    name: "CN=kopf-local-cluster-ca",
    notBefore,
    notAfter,
    keys: caKeys,
    signingAlgorithm: ALGORITHM,
    extensions: [
      new x509.BasicConstraintsExtension(true, 0, true),
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.keyCertSign | x509.KeyUsageFlags.cRLSign, true),
      await x509.SubjectKeyIdentifierExtension.create(caKeys.publicKey),
    ],
  });

  const leafKeys = await generateKeys();
  const leaf = await x509.X509CertificateGenerator.create({
    serialNumber: serialNumber(),
    subject: "CN=kopf-local-cluster",
    issuer: ca.subject,
    notBefore,
    notAfter,
    publicKey: leafKeys.publicKey,
    signingKey: caKeys.privateKey,
    signingAlgorithm: ALGORITHM,
    extensions: [
      new x509.BasicConstraintsExtension(false, undefined, true),
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.digitalSignature, true),
      new x509.ExtendedKeyUsageExtension([
        x509.ExtendedKeyUsage.serverAuth,
        x509.ExtendedKeyUsage.clientAuth,
      ]),
      new x509.SubjectAlternativeNameExtension([
        { type: "ip", value: "127.0.0.1" },
        { type: "ip", value: "::1" },
        { type: "dns", value: "localhost" },
      ]),
      await x509.AuthorityKeyIdentifierExtension.create(ca),
    ],
  });

  return {
    caCert: ca.toString("pem") + "\n",
    cert: leaf.toString("pem") + "\n",
    key: await privateKeyPem(leafKeys.privateKey),
  };
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

/** A random positive 128-bit serial number, hex-encoded (the high bit clear keeps it positive). */
function serialNumber(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  bytes[0] &= 0x7f;
  bytes[0] |= 0x01;
  return Array.from(bytes, (byte) => byte.toString(16).padStart(2, "0")).join("");
}
