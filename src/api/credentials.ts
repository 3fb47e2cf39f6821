/**
 * Credentials for talking to the Kubernetes API: where requests go (the server URL), the TLS
 * material for `Deno.createHttpClient`, and the Authorization header resolved freshly before
 * each request. Produced by `loadKubeconfig` and `loadServiceAccount` (through the logins of `login.ts`);
 * consumed by the HTTP client in `client.ts`.
 *
 * @module
 */

/**
 * TLS material for `Deno.createHttpClient`; stable for the lifetime of a {@linkcode Credentials}
 * object.
 *
 * @example Creating a Deno HTTP client from it
 * ```ts ignore
 * const { caCerts, cert, key } = credentials.tls;
 * const client = cert && key
 *   ? Deno.createHttpClient({ caCerts, cert, key })
 *   : Deno.createHttpClient({ caCerts });
 * ```
 */
export interface TlsMaterial {
  /** Root certificates (PEM strings, each possibly a bundle); `undefined`: the system roots. */
  caCerts?: string[];
  /** The client certificate chain, PEM. */
  cert?: string;
  /** The client private key, PEM (PKCS#8, PKCS#1 or SEC1). */
  key?: string;
  /** The kubeconfig's `insecure-skip-tls-verify`: do not verify the server's certificate. */
  insecure: boolean;
  /** The kubeconfig's `tls-server-name`, if set: the name to verify the server's certificate for. */
  serverName?: string;
  /** The kubeconfig's `proxy-url`, if set: the proxy to send requests through. */
  proxyUrl?: string;
}

/**
 * Where requests go and how they authenticate.
 *
 * @example Authenticating one request
 * ```ts ignore
 * const headers = new Headers();
 * const authorization = await credentials.authorization();
 * if (authorization) headers.set("Authorization", authorization);
 * const response = await fetch(`${credentials.server}/version`, { headers, client });
 * if (response.status === 401) credentials.invalidate();
 * ```
 */
export interface Credentials {
  /** The API server's base URL, e.g. `https://127.0.0.1:6443` (no trailing slash). */
  readonly server: string;
  /** TLS material for the HTTP client. */
  readonly tls: TlsMaterial;
  /** The context's namespace (kubeconfig) or the pod's namespace (in-cluster), if known. */
  readonly defaultNamespace?: string;
  /**
   * A human-readable origin for messages, e.g. `kubeconfig /home/u/.kube/config (context "kind-a")`
   * or `in-cluster service account`.
   */
  readonly source: string;
  /**
   * The value of the Authorization header for the next request, freshly resolved (exec plugin
   * tokens refreshed when expired, token files re-read when due), or `undefined` for anonymous
   * requests. Rejects with a {@linkcode CredentialsError} when no header can be resolved.
   */
  authorization(): Promise<string | undefined>;
  /**
   * The Authorization header when it never changes (a token or a password given as they are; `null`:
   * none), for a request to take without awaiting `authorization()`; absent where that must resolve it
   * (exec plugins, token files, auth providers). Requests prefer it: credentials that replace
   * `authorization()` of others (e.g. by a spread) must leave it out.
   */
  readonly fixedAuthorization?: string | null;
  /** Called after the server answered 401: drop cached tokens so the next `authorization()` resolves anew. */
  invalidate(): void;
}

/**
 * Credentials could not be loaded or resolved. The message is one line: where (the file or the
 * credentials' source), the problem, and what to do about it.
 *
 * @example
 * ```ts
 * import { CredentialsError } from "./credentials.ts";
 * const error = new CredentialsError("kubeconfig /tmp/none", "file not found; check the path");
 * console.assert(error.message === "kubeconfig /tmp/none: file not found; check the path");
 * ```
 */
export class CredentialsError extends Error {
  /** Where the problem is: the file or the credentials' source. */
  readonly where: string;
  /** The problem alone, without the location. */
  readonly problem: string;

  /**
   * Makes the one-line message `<where>: <problem>` (line breaks in the problem are folded).
   *
   * @param where The file or the credentials' source, e.g. `kubeconfig /home/u/.kube/config`.
   * @param problem What is wrong and what to do about it.
   * @param options The underlying error, if any, as `cause`.
   */
  constructor(where: string, problem: string, options?: ErrorOptions) {
    const oneLine = problem.replace(/\s*\n\s*/g, " ").trim();
    super(`${where}: ${oneLine}`, options);
    this.name = "CredentialsError";
    this.where = where;
    this.problem = oneLine;
  }
}

/**
 * The first non-empty line of a (possibly long, multi-line) error message, trimmed.
 *
 * @example
 * ```ts
 * import { firstLine } from "./credentials.ts";
 * console.assert(firstLine("bad indentation (3:5)\n\n 1 | a:\n") === "bad indentation (3:5)");
 * ```
 */
export function firstLine(text: string): string {
  for (const line of text.split("\n")) {
    const trimmed = line.trim();
    if (trimmed) return trimmed;
  }
  return "";
}

/**
 * The Authorization header value for HTTP basic authentication: `Basic base64(user:password)`,
 * with the text encoded as UTF-8.
 *
 * @example
 * ```ts
 * import { basicAuthorization } from "./credentials.ts";
 * console.assert(basicAuthorization("admin", "secret") === "Basic YWRtaW46c2VjcmV0");
 * ```
 */
export function basicAuthorization(username: string, password: string): string {
  const bytes = new TextEncoder().encode(`${username}:${password}`);
  let binary = "";
  for (const byte of bytes) binary += String.fromCharCode(byte);
  return `Basic ${btoa(binary)}`;
}

/** The kinds of PEM content that {@linkcode pemProblem} checks for. */
export type PemKind = "certificate" | "private key";

/**
 * Why a text is not usable PEM content of the given kind, or `undefined` if it looks right:
 * at least one `-----BEGIN CERTIFICATE-----` block for certificates, one `-----BEGIN ... PRIVATE
 * KEY-----` block for keys. A cheap plausibility check, not a parser.
 *
 * @example
 * ```ts
 * import { pemProblem } from "./credentials.ts";
 * console.assert(pemProblem("hello", "certificate") === "is not PEM (no -----BEGIN CERTIFICATE----- line)");
 * ```
 */
export function pemProblem(text: string, kind: PemKind): string | undefined {
  if (kind === "certificate") {
    return /-----BEGIN CERTIFICATE-----/.test(text) ? undefined : "is not PEM (no -----BEGIN CERTIFICATE----- line)";
  }
  if (/-----BEGIN ENCRYPTED PRIVATE KEY-----/.test(text)) {
    return "is an encrypted private key, which cannot be used; decrypt it first";
  }
  return /-----BEGIN [A-Z0-9 ]*PRIVATE KEY-----/.test(text)
    ? undefined
    : "is not PEM (no -----BEGIN ... PRIVATE KEY----- line)";
}
