/**
 * In-cluster credentials: the pod's service account token (re-read as the kubelet rotates it),
 * the cluster's CA and the pod's namespace from the mounted service account folder, and the API
 * server's address from the `KUBERNETES_SERVICE_HOST` / `KUBERNETES_SERVICE_PORT` variables.
 * Also {@linkcode TokenFile}, the rotating token reader shared with kubeconfig's `tokenFile`.
 *
 * @module
 */

import { getLogger } from "@logtape/logtape";
import { type Credentials, CredentialsError, pemProblem } from "./credentials.ts";

const logger = getLogger(["kopf", "api", "credentials"]);

/** Where Kubernetes mounts a pod's service account: files `token`, `ca.crt`, `namespace`. */
export const SERVICE_ACCOUNT_ROOT = "/var/run/secrets/kubernetes.io/serviceaccount";

/** The pod's namespace from its service account, else `default` (outside a cluster, or if unreadable). */
export function podNamespace(): string {
  try {
    return Deno.readTextFileSync(`${SERVICE_ACCOUNT_ROOT}/namespace`).trim() || "default";
  } catch {
    // Not in a pod (no file) or no permission to read it: the documented fallback.
    return "default";
  }
}

/** How often a token file is re-read at most, unless invalidated: the kubelet rotates tokens. */
export const TOKEN_FILE_MAX_AGE_MS = 60_000;

/** Options of {@linkcode TokenFile}. */
export interface TokenFileOptions {
  /** Re-read the file when the last read is older than this; default {@linkcode TOKEN_FILE_MAX_AGE_MS}. */
  maxAgeMs?: number;
  /** A monotonic clock in milliseconds (for tests); default `performance.now`. */
  now?: () => number;
}

/**
 * A bearer token kept in a file that another party rotates (the kubelet, a sidecar). The token
 * is read on first use, then again only when the last read is older than `maxAgeMs` or after
 * {@linkcode TokenFile.invalidate}; concurrent callers share one read. If a re-read fails, the
 * last good token is kept (with a warning) until the next re-read is due.
 *
 * @example
 * ```ts ignore
 * const tokens = new TokenFile("/var/run/secrets/kubernetes.io/serviceaccount/token", "in-cluster service account");
 * const header = `Bearer ${await tokens.read()}`;
 * ```
 */
export class TokenFile {
  /** The token file's path. */
  readonly path: string;
  /** Where the file is referenced from, for error messages (e.g. `in-cluster service account`). */
  readonly where: string;
  readonly #maxAgeMs: number;
  readonly #now: () => number;
  #token: string | undefined;
  #readAt = -Infinity;
  #stale = true;
  #pending: Promise<string> | undefined;
  #reads = 0;

  /**
   * Prepares the reader; nothing is read until the first {@linkcode TokenFile.read}.
   *
   * @param path The token file.
   * @param where Where the file is referenced from, for error messages.
   * @param options The maximum age and the clock.
   */
  constructor(path: string, where: string, options: TokenFileOptions = {}) {
    this.path = path;
    this.where = where;
    this.#maxAgeMs = options.maxAgeMs ?? TOKEN_FILE_MAX_AGE_MS;
    this.#now = options.now ?? (() => performance.now());
  }

  /** How many times the file was read so far (for tests and diagnostics). */
  get reads(): number {
    return this.#reads;
  }

  /**
   * The current token (whitespace-trimmed), re-read from the file when due. Rejects with a
   * {@linkcode CredentialsError} if the file was never read successfully.
   */
  read(): Promise<string> {
    const token = this.#token;
    if (token !== undefined && !this.#stale && this.#now() - this.#readAt < this.#maxAgeMs) {
      return Promise.resolve(token);
    }
    this.#pending ??= this.#reread().finally(() => {
      this.#pending = undefined;
    });
    return this.#pending;
  }

  /** Forget the freshness of the token: the next {@linkcode TokenFile.read} reads the file again. */
  invalidate(): void {
    this.#stale = true;
  }

  async #reread(): Promise<string> {
    this.#stale = false;
    let problem: string;
    let cause: unknown;
    try {
      this.#reads += 1;
      const token = (await Deno.readTextFile(this.path)).trim();
      if (token) {
        this.#token = token;
        this.#readAt = this.#now();
        return token;
      }
      problem = `token file ${this.path} is empty`;
    } catch (error) {
      cause = error;
      problem = error instanceof Deno.errors.NotFound
        ? `token file ${this.path} not found`
        : `cannot read token file ${this.path}: ${error instanceof Error ? error.message : error}`;
    }
    const previous = this.#token;
    if (previous === undefined) {
      this.#stale = true;
      throw new CredentialsError(this.where, problem, { cause });
    }
    logger.warn("{where}: {problem}; keeping the token read before.", {
      where: this.where,
      problem,
    });
    this.#readAt = this.#now();
    return previous;
  }
}

/**
 * The API server's URL from the in-cluster service variables: always HTTPS, IPv6 hosts in
 * brackets.
 *
 * @example
 * ```ts
 * import { inClusterServer } from "./service_account.ts";
 * console.assert(inClusterServer("10.0.0.1", "443") === "https://10.0.0.1:443");
 * console.assert(inClusterServer("fd00::1", "443") === "https://[fd00::1]:443");
 * ```
 */
export function inClusterServer(host: string, port: string): string {
  const bracketed = host.includes(":") && !host.startsWith("[") ? `[${host}]` : host;
  return `https://${bracketed}:${port}`;
}

/** Options of {@linkcode loadServiceAccount}. */
export interface ServiceAccountOptions {
  /** The mounted service account folder; default {@linkcode SERVICE_ACCOUNT_ROOT}. */
  root?: string;
}

/**
 * Loads the in-cluster credentials of the pod's service account. The token is read now (a
 * missing token file fails here) and re-read when older than 60 s or after `invalidate()`.
 * A missing `ca.crt` falls back to the system roots with a warning; a missing `namespace` leaves
 * `defaultNamespace` unset.
 *
 * @example
 * ```ts ignore
 * const credentials = await loadServiceAccount();
 * console.log(credentials.server, credentials.defaultNamespace);
 * ```
 *
 * @param options The service account folder (for tests).
 * @returns The credentials; rejects with a {@linkcode CredentialsError} if not in a cluster.
 */
export async function loadServiceAccount(options: ServiceAccountOptions = {}): Promise<Credentials> {
  const root = (options.root ?? SERVICE_ACCOUNT_ROOT).replace(/\/+$/, "") || "/";
  const source = root === SERVICE_ACCOUNT_ROOT ? "in-cluster service account" : `in-cluster service account (${root})`;

  const host = Deno.env.get("KUBERNETES_SERVICE_HOST");
  const port = Deno.env.get("KUBERNETES_SERVICE_PORT");
  const unset = [
    ...(host ? [] : ["KUBERNETES_SERVICE_HOST"]),
    ...(port ? [] : ["KUBERNETES_SERVICE_PORT"]),
  ];
  if (unset.length) {
    throw new CredentialsError(
      source,
      `${unset.join(" and ")} ${unset.length > 1 ? "are" : "is"} not set, so this is not a pod ` +
        "in a cluster; outside a cluster, use a kubeconfig (KUBECONFIG or --kubeconfig)",
    );
  }
  if (!/^\d{1,5}$/.test(port!)) {
    throw new CredentialsError(source, `KUBERNETES_SERVICE_PORT="${port}" is not a port number`);
  }

  const tokenFile = new TokenFile(`${root}/token`, source);
  try {
    await tokenFile.read();
  } catch (error) {
    if (!(error instanceof CredentialsError)) throw error;
    throw new CredentialsError(
      source,
      `${error.problem}; is automountServiceAccountToken disabled for this pod?`,
      { cause: error },
    );
  }

  const caPath = `${root}/ca.crt`;
  const ca = await readOptional(caPath, source);
  let caCerts: string[] | undefined;
  if (ca === undefined) {
    logger.warn("{source}: {path} not found; verifying the API server with the system roots.", {
      source,
      path: caPath,
    });
  } else {
    const problem = pemProblem(ca, "certificate");
    if (problem) throw new CredentialsError(source, `${caPath} ${problem}`);
    caCerts = [ca];
  }

  const namespace = (await readOptional(`${root}/namespace`, source))?.trim() || undefined;

  return {
    server: inClusterServer(host!, port!),
    tls: { caCerts, insecure: false },
    defaultNamespace: namespace,
    source,
    async authorization(): Promise<string> {
      return `Bearer ${await tokenFile.read()}`;
    },
    invalidate(): void {
      tokenFile.invalidate();
    },
  };
}

async function readOptional(path: string, source: string): Promise<string | undefined> {
  try {
    return await Deno.readTextFile(path);
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) return undefined;
    const message = error instanceof Error ? error.message : String(error);
    throw new CredentialsError(source, `cannot read ${path}: ${message}`, { cause: error });
  }
}
