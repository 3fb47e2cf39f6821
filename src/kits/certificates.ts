/**
 * Self-signed certificates for webhook servers, made with WebCrypto and `@peculiar/x509`: a CA of
 * its own, and a serving certificate it signs for the given host names and IP addresses. The CA
 * goes into the webhook configurations' `caBundle`, so the API server trusts the server.
 *
 * @module
 */

import "reflect-metadata"; // @peculiar/x509 2.x needs the polyfill loaded before it.
import * as x509 from "@peculiar/x509";
import { toHex } from "../utils/digests.ts";

/** PEM texts of a CA, and of a serving certificate and key that it signs. */
export interface SelfSignedCertificates {
  /** The CA certificate that clients must trust. */
  readonly ca: string;
  /** The serving certificate. */
  readonly cert: string;
  /** The serving certificate's private key (PKCS#8). */
  readonly key: string;
}

const ALGORITHM = { name: "ECDSA", namedCurve: "P-256", hash: "SHA-256" } as const;
const DAY_MS = 24 * 60 * 60 * 1000;

/** Whether a name is an IPv4 or IPv6 address rather than a host name. */
export function isIpAddress(name: string): boolean {
  return /^\d{1,3}(\.\d{1,3}){3}$/.test(name) || name.includes(":");
}

/** Options of {@linkcode createSelfSignedCertificates}. */
export interface SelfSignedOptions {
  /** Days of validity; 365 by default. */
  days?: number;
  /** The CA's common name; `kopf-webhook-ca <common name>` by default. */
  caName?: string;
  /** Whether the certificate may also authenticate a client (e.g. a control plane's own components). */
  clientAuth?: boolean;
}

/**
 * Creates a CA and a serving certificate for the names (host names and IP addresses, in the
 * subject alternative names; the common name is the first host name). Valid from an hour ago for
 * `days` (365 by default).
 *
 * @example
 * ```ts ignore
 * const { ca, cert, key } = await createSelfSignedCertificates(["localhost", "127.0.0.1"]);
 * Deno.serve({ hostname: "127.0.0.1", port: 0, cert, key }, () => new Response("ok"));
 * ```
 */
export async function createSelfSignedCertificates(
  names: readonly string[],
  options: SelfSignedOptions = {},
): Promise<SelfSignedCertificates> {
  const unique = [...new Set(names.filter((name) => name !== ""))];
  if (unique.length === 0) throw new TypeError("A serving certificate needs at least one host name or IP address.");
  const notBefore = new Date(Date.now() - 60 * 60 * 1000);
  const notAfter = new Date(notBefore.getTime() + (options.days ?? 365) * DAY_MS);
  const commonName = unique.find((name) => !isIpAddress(name)) ?? unique[0];

  const caKeys = await generateKeys();
  const ca = await x509.X509CertificateGenerator.createSelfSigned({
    serialNumber: serialNumber(),
    name: `CN=${options.caName ?? `kopf-webhook-ca ${commonName}`}`,
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

  const keys = await generateKeys();
  const cert = await x509.X509CertificateGenerator.create({
    serialNumber: serialNumber(),
    subject: `CN=${commonName}`,
    issuer: ca.subject,
    notBefore,
    notAfter,
    publicKey: keys.publicKey,
    signingKey: caKeys.privateKey,
    signingAlgorithm: ALGORITHM,
    extensions: [
      new x509.BasicConstraintsExtension(false, undefined, true),
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.digitalSignature, true),
      new x509.ExtendedKeyUsageExtension([
        x509.ExtendedKeyUsage.serverAuth,
        ...(options.clientAuth ? [x509.ExtendedKeyUsage.clientAuth] : []),
      ]),
      new x509.SubjectAlternativeNameExtension(
        unique.map((name): x509.JsonGeneralName => ({ type: isIpAddress(name) ? "ip" : "dns", value: name })),
      ),
      await x509.AuthorityKeyIdentifierExtension.create(ca),
    ],
  });
  const pkcs8 = await crypto.subtle.exportKey("pkcs8", keys.privateKey);
  return {
    ca: ca.toString("pem") + "\n",
    cert: cert.toString("pem") + "\n",
    key: x509.PemConverter.encode(pkcs8, "PRIVATE KEY") + "\n",
  };
}

function generateKeys(): Promise<CryptoKeyPair> {
  return crypto.subtle.generateKey(ALGORITHM, true, ["sign", "verify"]);
}

/** A random positive 128-bit serial number, hex-encoded. */
function serialNumber(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  bytes[0] = (bytes[0] & 0x7f) | 0x01;
  return toHex(bytes);
}
