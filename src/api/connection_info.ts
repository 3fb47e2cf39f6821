/**
 * {@linkcode ConnectionInfo}: what a login handler returns -- where the API server is, how to
 * trust it, how to authenticate -- and its conversion into the {@linkcode Credentials} that the
 * HTTP client uses.
 *
 * @module
 */

import { basicAuthorization, type Credentials, type PemKind, pemProblem, type TlsMaterial } from "./credentials.ts";
import { LoginError } from "./login_error.ts";

/** The fields of a {@linkcode ConnectionInfo}: only `server` is required. */
export interface ConnectionInfoOptions {
  /** The API server's base URL, e.g. `https://10.0.0.1:6443`. */
  server: string;
  /** A file with the PEM certificates of the CA that signs the API server's certificate. */
  caPath?: string;
  /** The same as `caPath`, inline: base64-encoded PEM, as in a kubeconfig's `certificate-authority-data`. */
  caData?: string;
  /** Do not verify the API server's certificate (as `insecure-skip-tls-verify` does). */
  insecure?: boolean;
  /** A user name for HTTP basic authentication (with `password`). */
  username?: string;
  /** A password for HTTP basic authentication (with `username`). */
  password?: string;
  /** The scheme of the Authorization header: `<scheme> <token>`, or `<scheme>` alone without a token. */
  scheme?: string;
  /** A token for the Authorization header: `Bearer <token>` unless a `scheme` is given. */
  token?: string;
  /** A file with the client certificate (PEM) for TLS client authentication. */
  certificatePath?: string;
  /** The same as `certificatePath`, inline: base64-encoded PEM. */
  certificateData?: string;
  /** A file with the client certificate's private key (PEM). */
  privateKeyPath?: string;
  /** The same as `privateKeyPath`, inline: base64-encoded PEM. */
  privateKeyData?: string;
  /** The namespace of Events about cluster-scoped objects (`default` when absent). */
  defaultNamespace?: string;
  /** Of several valid credentials, the highest priority is used (a random one among equals); 0 by default. */
  priority?: number;
  /** When the credentials stop being valid: they are dropped then, and the login handlers run again. */
  expiration?: Date;
}

/**
 * Connection parameters that a login handler (`kopf.on.login`) returns: the API server's URL,
 * how to trust it (a CA, or `insecure`), and how to authenticate (a token, a user and password,
 * or a client certificate). The `*Data` fields hold base64-encoded PEM, as a kubeconfig's
 * `*-data` fields do; a `*Path` field names a PEM file instead (giving both for the same item is
 * a {@linkcode LoginError}). The Authorization header is `<scheme> <token>`, `Bearer <token>`
 * with a token alone, `<scheme>` with a scheme alone, or HTTP basic with `username` and
 * `password` (a token wins over them).
 *
 * @example A login handler with a token and an inline CA
 * ```ts
 * import * as kopf from "@kopf/kopf";
 * kopf.on.login(function fromEnvironment() {
 *   return new kopf.ConnectionInfo({
 *     server: Deno.env.get("K8S_SERVER") ?? "https://10.0.0.1:6443",
 *     token: Deno.env.get("K8S_TOKEN"),
 *     caData: Deno.env.get("K8S_CA_DATA"),
 *     expiration: new Date(Date.now() + 3600_000), // log in again in an hour
 *   });
 * });
 * ```
 */
export class ConnectionInfo {
  /** The API server's base URL, without a trailing slash. */
  readonly server: string;
  /** A file with the CA's PEM certificates. */
  declare readonly caPath?: string;
  /** The CA's certificates as base64-encoded PEM. */
  declare readonly caData?: string;
  /** Whether the API server's certificate goes unverified. */
  declare readonly insecure?: boolean;
  /** The user name for HTTP basic authentication. */
  declare readonly username?: string;
  /** The password for HTTP basic authentication. */
  declare readonly password?: string;
  /** The scheme of the Authorization header. */
  declare readonly scheme?: string;
  /** The token of the Authorization header. */
  declare readonly token?: string;
  /** A file with the client certificate (PEM). */
  declare readonly certificatePath?: string;
  /** The client certificate as base64-encoded PEM. */
  declare readonly certificateData?: string;
  /** A file with the client's private key (PEM). */
  declare readonly privateKeyPath?: string;
  /** The client's private key as base64-encoded PEM. */
  declare readonly privateKeyData?: string;
  /** The namespace of Events about cluster-scoped objects. */
  declare readonly defaultNamespace?: string;
  /** The priority among valid credentials; higher wins. */
  readonly priority: number;
  /** When the credentials expire, if they do. */
  declare readonly expiration?: Date;

  /**
   * Checks and keeps the fields.
   *
   * @param options The fields; `server` is required.
   * @throws {LoginError} if the server is not an http(s) URL, if an item is given both as a path
   *   and as data, if the priority is not a number, or if the expiration is not a valid date.
   */
  constructor(options: ConnectionInfoOptions) {
    const server = typeof options?.server === "string" ? options.server.trim().replace(/\/+$/, "") : "";
    let url: URL | undefined;
    try {
      url = new URL(server);
    } catch {
      url = undefined;
    }
    if (!url || (url.protocol !== "https:" && url.protocol !== "http:")) {
      throw new LoginError(
        `ConnectionInfo: server ${JSON.stringify(options?.server)} is not an http(s) URL; ` +
          "give the API server's URL, e.g. https://10.0.0.1:6443",
      );
    }
    for (
      const [path, data] of [["caPath", "caData"], ["certificatePath", "certificateData"], [
        "privateKeyPath",
        "privateKeyData",
      ]] as const
    ) {
      if (options[path] && options[data]) {
        throw new LoginError(`ConnectionInfo: both ${path} and ${data} are given; give only one of them`);
      }
    }
    const priority = options.priority ?? 0;
    if (typeof priority !== "number" || Number.isNaN(priority)) {
      throw new LoginError(`ConnectionInfo: priority must be a number, got ${JSON.stringify(options.priority)}`);
    }
    if (
      options.expiration !== undefined && !(options.expiration instanceof Date && !isNaN(options.expiration.getTime()))
    ) {
      throw new LoginError(`ConnectionInfo: expiration must be a valid Date, got ${String(options.expiration)}`);
    }
    this.server = server;
    this.priority = priority;
    // Unset fields stay absent, so that printing an info shows only what was given.
    const optional = [
      "caPath",
      "caData",
      "insecure",
      "username",
      "password",
      "scheme",
      "token",
      "certificatePath",
      "certificateData",
      "privateKeyPath",
      "privateKeyData",
      "defaultNamespace",
      "expiration",
    ] as const;
    const fields: Record<string, unknown> = {};
    for (const key of optional) if (options[key] !== undefined && options[key] !== null) fields[key] = options[key];
    Object.assign(this, fields);
  }
}

/**
 * Live credentials behind infos made from a kubeconfig or a service account: they refresh
 * exec-plugin tokens and re-read rotating token files, which a static info cannot do.
 */
const LIVE = new WeakMap<ConnectionInfo, Credentials>();

/**
 * Makes a {@linkcode ConnectionInfo} describing loaded credentials (the token as resolved now),
 * and ties the credentials themselves to it, so that using the info uses them.
 *
 * @param credentials Loaded credentials (a kubeconfig's, a service account's).
 * @param priority The info's priority.
 * @returns The info.
 */
export async function connectionInfoOf(credentials: Credentials, priority: number): Promise<ConnectionInfo> {
  const authorization = await credentials.authorization();
  const space = authorization?.indexOf(" ") ?? -1;
  const [scheme, token] = authorization === undefined
    ? [undefined, undefined]
    : space < 0
    ? [authorization, undefined]
    : [authorization.slice(0, space), authorization.slice(space + 1)];
  const { tls } = credentials;
  const info = new ConnectionInfo({
    server: credentials.server,
    caData: tls.caCerts?.length ? encodeBase64(tls.caCerts.join("\n")) : undefined,
    insecure: tls.insecure || undefined,
    scheme,
    token,
    certificateData: tls.cert ? encodeBase64(tls.cert) : undefined,
    privateKeyData: tls.key ? encodeBase64(tls.key) : undefined,
    defaultNamespace: credentials.defaultNamespace,
    priority,
  });
  LIVE.set(info, credentials);
  return info;
}

/**
 * The credentials an info stands for: the live ones it was made from, else new ones from its
 * fields (reading the files it names now).
 *
 * @param info What a login handler returned.
 * @param source Where it came from, for messages, e.g. `login handler 'loginFn'`.
 * @returns The credentials; rejects with a {@linkcode LoginError} naming the source and the problem.
 */
export async function credentialsOf(info: ConnectionInfo, source: string): Promise<Credentials> {
  const live = LIVE.get(info);
  if (live) return live;
  const caCerts = await pemOf(info.caPath, info.caData, "certificate", "CA", source);
  const cert = await pemOf(info.certificatePath, info.certificateData, "certificate", "certificate", source);
  const key = await pemOf(info.privateKeyPath, info.privateKeyData, "private key", "private key", source);
  if (Boolean(cert) !== Boolean(key)) {
    throw new LoginError(
      `${source}: a client ${
        cert ? "certificate is given without its private key" : "key is given without its certificate"
      }; give both or neither`,
    );
  }
  const tls: TlsMaterial = { insecure: Boolean(info.insecure) };
  if (caCerts) tls.caCerts = [caCerts];
  if (cert) tls.cert = cert;
  if (key) tls.key = key;
  const header = authorizationOf(info);
  return {
    server: info.server,
    tls,
    defaultNamespace: info.defaultNamespace,
    source,
    authorization: (): Promise<string | undefined> => Promise.resolve(header),
    fixedAuthorization: header ?? null,
    invalidate(): void {
      // Static credentials have nothing to refresh: the vault drops them and logs in again.
    },
  };
}

/**
 * The Authorization header an info asks for: `<scheme> <token>`, `Bearer <token>`, `<scheme>`,
 * HTTP basic for a user name (and password), or `undefined` for none.
 *
 * @example
 * ```ts
 * import { authorizationOf, ConnectionInfo } from "./connection_info.ts";
 * console.assert(authorizationOf(new ConnectionInfo({ server: "https://k", token: "t" })) === "Bearer t");
 * ```
 */
export function authorizationOf(info: ConnectionInfo): string | undefined {
  if (info.token) return `${info.scheme || "Bearer"} ${info.token}`;
  if (info.scheme) return info.scheme;
  if (info.username) return basicAuthorization(info.username, info.password ?? "");
  return undefined;
}

/**
 * A stable text of what an info sends and trusts, to recognise the same credentials when a
 * login handler returns them again (priority and expiration left out: they change nothing the
 * API server sees).
 */
export function fingerprintOf(info: ConnectionInfo): string {
  const { priority: _priority, expiration: _expiration, ...rest } = info;
  return JSON.stringify(Object.entries(rest).sort(([a], [b]) => a < b ? -1 : 1));
}

async function pemOf(
  path: string | undefined,
  data: string | undefined,
  kind: PemKind,
  what: string,
  source: string,
): Promise<string | undefined> {
  let text: string;
  let origin: string;
  if (path) {
    origin = `the ${what} file ${path}`;
    try {
      text = await Deno.readTextFile(path);
    } catch (error) {
      const problem = error instanceof Deno.errors.NotFound ? "not found" : `cannot be read: ${error}`;
      throw new LoginError(`${source}: ${origin} ${problem}; fix the path in the ConnectionInfo`, { cause: error });
    }
  } else if (data) {
    origin = `the ${what} data`;
    // Tolerate raw PEM where base64 of it is expected: both are unambiguous.
    text = data.trimStart().startsWith("-----BEGIN") ? data : decodeBase64(data, `${source}: ${origin}`);
  } else {
    return undefined;
  }
  const problem = pemProblem(text, kind);
  if (problem) throw new LoginError(`${source}: ${origin} ${problem}`);
  return text;
}

function decodeBase64(data: string, where: string): string {
  let binary: string;
  try {
    binary = atob(data.replace(/\s+/g, ""));
  } catch (error) {
    throw new LoginError(`${where} is not base64; give base64-encoded PEM, as in a kubeconfig's *-data fields`, {
      cause: error,
    });
  }
  const bytes = Uint8Array.from(binary, (char) => char.charCodeAt(0));
  return new TextDecoder().decode(bytes);
}

/**
 * Base64 of a text's UTF-8 bytes, as kubeconfig `*-data` fields hold PEM.
 *
 * @example
 * ```ts
 * import { encodeBase64 } from "./connection_info.ts";
 * console.assert(encodeBase64("hi") === "aGk=");
 * ```
 */
export function encodeBase64(text: string): string {
  let binary = "";
  for (const byte of new TextEncoder().encode(text)) binary += String.fromCharCode(byte);
  return btoa(binary);
}
