/**
 * What a failed TLS handshake with the API server means, in words a user can act on. Deno's fetch
 * reports a rejected server certificate as `invalid peer certificate: <reason>` (rustls' reasons);
 * retrying does not help with any of them, so they are said once, plainly, with what to do.
 *
 * @module
 */

import { describeCause } from "./errors.ts";

/** A diagnosed TLS problem: what is wrong and what to do. */
export interface TlsDiagnosis {
  /** A short name of the problem: `unknown-issuer`, `hostname-mismatch`, `expired`, `not-yet-valid`, `invalid`. */
  kind: "unknown-issuer" | "hostname-mismatch" | "expired" | "not-yet-valid" | "invalid";
  /** What is wrong and what to do, as one message. */
  message: string;
}

const CERTIFICATE_FAILURE = /invalid peer certificate:?\s*([A-Za-z]+)?/i;

/**
 * Diagnoses a network failure as a rejected server certificate, or returns `undefined` if it is
 * something else (a refused connection, a timeout, a reset).
 *
 * @param error the failure thrown by `fetch`, with its causes.
 * @param server the API server URL that was contacted.
 * @param source where the credentials come from (a kubeconfig path, in-cluster), for the advice.
 */
export function diagnoseTls(error: unknown, server: string, source: string): TlsDiagnosis | undefined {
  const text = describeCause(error);
  const match = CERTIFICATE_FAILURE.exec(text);
  if (!match) return undefined;
  const reason = match[1] ?? "";
  const host = safeHost(server);
  if (/^UnknownIssuer|^UnknownCA|^BadSignature/i.test(reason)) {
    return {
      kind: "unknown-issuer",
      message: `The API server's certificate at ${server} is not signed by the CA that ${source} trusts ` +
        `(${reason}). Put the CA that signs the server's certificate into the kubeconfig's ` +
        `certificate-authority-data (or certificate-authority), or use the kubeconfig of this cluster.`,
    };
  }
  if (/^NotValidForName/i.test(reason)) {
    return {
      kind: "hostname-mismatch",
      message: `The API server's certificate at ${server} is not valid for the name ${host} (${reason}). ` +
        `Use a server address that the certificate names, or set tls-server-name in ${source} ` +
        `to a name in the certificate.`,
    };
  }
  if (/^Expired/i.test(reason)) {
    return {
      kind: "expired",
      message: `The API server's certificate at ${server} has expired (${reason}). Renew the server's ` +
        `certificate, or check this machine's clock.`,
    };
  }
  if (/^NotValidYet/i.test(reason)) {
    return {
      kind: "not-yet-valid",
      message: `The API server's certificate at ${server} is not valid yet (${reason}). Check this ` +
        `machine's clock.`,
    };
  }
  return {
    kind: "invalid",
    message: `The API server's certificate at ${server} is rejected: ${text}. Check the CA in ${source} ` +
      `and the server's certificate.`,
  };
}

function safeHost(server: string): string {
  try {
    return new URL(server).hostname;
  } catch {
    return server;
  }
}
