/**
 * Credentials from kubeconfig files, loaded with `@kubernetes/client-node`'s `KubeConfig`
 * (contexts, exec credential plugins, OIDC and other auth providers) and resolved into what
 * Deno's `fetch` needs: the server URL, PEM strings for `Deno.createHttpClient`, and an
 * Authorization header asked for before each request.
 *
 * Where client-node 2.0.1 differs from kubectl, kubectl wins: several files in `KUBECONFIG` are
 * merged with the first definition of a name and the first `current-context` winning, missing
 * files in that list are skipped, `tokenFile` is honoured (re-read like the kubelet's rotating
 * tokens), relative paths resolve against the file that names them, and entries that the chosen
 * context does not use cannot break the load.
 *
 * client-node is imported lazily on the first load: it takes about a second to import, which
 * in-cluster operators never pay.
 *
 * @module
 */

import type { Cluster, KubeConfig, User } from "@kubernetes/client-node";
import type { OutgoingHttpHeaders } from "node:http";
import type { RequestOptions } from "node:https";
import { delimiter, dirname, isAbsolute, join, resolve } from "node:path";
import { parse as parseYaml } from "yaml";
import {
  basicAuthorization,
  type Credentials,
  CredentialsError,
  firstLine,
  type PemKind,
  pemProblem,
  type TlsMaterial,
} from "./credentials.ts";
import { TokenFile } from "./service_account.ts";

type ClientNode = typeof import("@kubernetes/client-node");
let clientNode: Promise<ClientNode> | undefined;

function importClientNode(): Promise<ClientNode> {
  clientNode ??= import("@kubernetes/client-node");
  return clientNode;
}

/** Options of {@linkcode loadKubeconfig}. */
export interface KubeconfigOptions {
  /** The kubeconfig file; default: the `KUBECONFIG` list, else `~/.kube/config`. */
  path?: string;
  /** The context to use; default: the kubeconfig's `current-context`. */
  context?: string;
}

/** Which kubeconfig files to load, and where that choice came from. */
export interface KubeconfigLocation {
  /** The files, in order of precedence (the first definition of a name wins). */
  readonly files: readonly string[];
  /** Where the list came from: an explicit path, the `KUBECONFIG` variable, or the home folder. */
  readonly origin: "path" | "KUBECONFIG" | "home";
}

/**
 * The default kubeconfig file, `~/.kube/config`, or `undefined` when no home folder is known
 * (`HOME`, or `USERPROFILE` on Windows).
 */
export function defaultKubeconfigPath(): string | undefined {
  const home = Deno.env.get("HOME") || Deno.env.get("USERPROFILE");
  return home ? join(home, ".kube", "config") : undefined;
}

/**
 * Decides which kubeconfig files to load: an explicit path (one file), else the `KUBECONFIG`
 * list (separated by `:`, or `;` on Windows; empty entries ignored), else the default file.
 *
 * @example
 * ```ts
 * import { locateKubeconfig } from "./kubeconfig.ts";
 * const location = locateKubeconfig(undefined, "/a:/b", "/home/u/.kube/config");
 * console.assert(location?.files.join(",") === "/a,/b" && location.origin === "KUBECONFIG");
 * ```
 *
 * @param path An explicit file, if given.
 * @param kubeconfigEnv The value of the `KUBECONFIG` variable, if set.
 * @param defaultPath The default file, if a home folder is known.
 * @returns The files and their origin, or `undefined` if there is nothing to look at.
 */
export function locateKubeconfig(
  path: string | undefined,
  kubeconfigEnv: string | undefined,
  defaultPath: string | undefined,
): KubeconfigLocation | undefined {
  if (path) return { files: [path], origin: "path" };
  const listed = (kubeconfigEnv ?? "").split(delimiter).filter((file) => file);
  if (listed.length) return { files: listed, origin: "KUBECONFIG" };
  return defaultPath ? { files: [defaultPath], origin: "home" } : undefined;
}

/** A named entry of a kubeconfig as written in the file, and the file it came from. */
interface RawEntry {
  readonly file: string;
  readonly body: Record<string, unknown> | undefined;
}

/** What was loaded from all files: client-node's merged view plus the raw entries by name. */
interface Loaded {
  readonly kc: KubeConfig;
  readonly users: Map<string, RawEntry>;
  readonly clusters: Map<string, RawEntry>;
  readonly contexts: Map<string, RawEntry>;
}

/**
 * Loads credentials from kubeconfig files (see {@linkcode locateKubeconfig} for which) and a
 * context (the given one, else `current-context`). Client certificates, CA files and token files
 * are read now; exec plugins and auth providers run now once (so that a broken login fails at
 * start-up) and again whenever their cached credentials expire or are invalidated.
 *
 * @example
 * ```ts ignore
 * const credentials = await loadKubeconfig({ context: "kind-kopf" });
 * console.log(credentials.source, credentials.server);
 * ```
 *
 * @param options The file and the context, both optional.
 * @returns The credentials; rejects with a one-line {@linkcode CredentialsError} naming the file
 *   and the problem.
 */
export async function loadKubeconfig(options: KubeconfigOptions = {}): Promise<Credentials> {
  const defaultPath = defaultKubeconfigPath();
  const location = locateKubeconfig(options.path, Deno.env.get("KUBECONFIG"), defaultPath);
  if (!location) {
    throw new CredentialsError(
      "kubeconfig",
      "no file to load: KUBECONFIG is not set and there is no home folder (HOME); pass a kubeconfig path",
    );
  }
  const label = `kubeconfig ${location.files.join(delimiter)}`;
  const { KubeConfig } = await importClientNode();
  const loaded = await loadFiles(location, label, () => new KubeConfig());
  return await resolveContext(loaded, label, options.context);
}

async function loadFiles(
  location: KubeconfigLocation,
  label: string,
  newKubeConfig: () => KubeConfig,
): Promise<Loaded> {
  const users = new Map<string, RawEntry>();
  const clusters = new Map<string, RawEntry>();
  const contexts = new Map<string, RawEntry>();
  let merged: KubeConfig | undefined;
  const missing: string[] = [];
  for (const file of location.files) {
    const where = `kubeconfig ${file}`;
    const text = await readKubeconfigFile(file, where, location.files.length > 1 ? missing : undefined);
    if (text === undefined) continue;

    const kc = newKubeConfig();
    try {
      kc.loadFromString(text, { onInvalidEntry: "filter" });
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      if (!text.trim()) {
        throw new CredentialsError(where, "the file is empty; write a kubeconfig into it or point to another file");
      }
      if (error instanceof Error && error.name === "YAMLException") {
        throw new CredentialsError(where, `not valid YAML: ${firstLine(message)}`, { cause: error });
      }
      throw new CredentialsError(
        where,
        `not a kubeconfig (expected a mapping with clusters, contexts, users): ${firstLine(message)}`,
        { cause: error },
      );
    }
    const folder = dirname(resolve(file));
    kc.makePathsAbsolute(folder);
    collectRaw(text, file, { users, clusters, contexts });

    if (!merged) {
      merged = kc;
    } else {
      // kubectl's merge rules: the first definition of a name and the first current-context win.
      const base = merged;
      kc.clusters = kc.clusters.filter((c) => !base.clusters.some((b) => b.name === c.name));
      kc.users = kc.users.filter((u) => !base.users.some((b) => b.name === u.name));
      kc.contexts = kc.contexts.filter((c) => !base.contexts.some((b) => b.name === c.name));
      base.mergeConfig(kc, Boolean(base.currentContext));
    }
  }
  if (!merged) {
    throw new CredentialsError(
      label,
      `none of the files in KUBECONFIG exists (${missing.join(", ")}); fix KUBECONFIG or pass a kubeconfig path`,
    );
  }
  return { kc: merged, users, clusters, contexts };
}

/** Reads a kubeconfig file; a missing file is an error unless `missing` collects it instead. */
async function readKubeconfigFile(path: string, where: string, missing?: string[]): Promise<string | undefined> {
  try {
    return await Deno.readTextFile(path);
  } catch (error) {
    if (error instanceof Deno.errors.NotFound && missing) {
      missing.push(path);
      return undefined;
    }
    const problem = error instanceof Deno.errors.NotFound
      ? "file not found; check the path (--kubeconfig, KUBECONFIG) or create the file"
      : `cannot read the file: ${error instanceof Error ? firstLine(error.message) : error}`;
    throw new CredentialsError(where, problem, { cause: error });
  }
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** Remembers the raw entries (first definition wins) for what client-node does not keep. */
function collectRaw(
  text: string,
  file: string,
  into: { users: Map<string, RawEntry>; clusters: Map<string, RawEntry>; contexts: Map<string, RawEntry> },
): void {
  let doc: unknown;
  try {
    doc = parseYaml(text, { uniqueKeys: false });
  } catch {
    return; // client-node (js-yaml) accepted it; the raw view is only for details.
  }
  if (!isRecord(doc)) return;
  const sections = [["users", "user"], ["clusters", "cluster"], ["contexts", "context"]] as const;
  for (const [section, key] of sections) {
    const list = doc[section];
    if (!Array.isArray(list)) continue;
    for (const item of list) {
      if (!isRecord(item) || typeof item.name !== "string" || into[section].has(item.name)) continue;
      const body = item[key];
      into[section].set(item.name, { file, body: isRecord(body) ? body : undefined });
    }
  }
}

function quotedList(names: Iterable<string>): string {
  const quoted = [...names].map((name) => `"${name}"`);
  return quoted.length ? quoted.join(", ") : "none";
}

/** Keys of a kubeconfig user that ask for impersonation, which these credentials cannot carry. */
const IMPERSONATION_KEYS = ["as", "as-uid", "as-groups", "as-user-extra"];

async function resolveContext(loaded: Loaded, label: string, wanted: string | undefined): Promise<Credentials> {
  const { kc } = loaded;
  const contextNames = kc.getContexts().map((c) => c.name);
  if (!contextNames.length && !loaded.contexts.size) {
    throw new CredentialsError(
      label,
      "defines no contexts; add one (kubectl config set-context) or use another kubeconfig",
    );
  }
  const contextName = wanted ?? kc.getCurrentContext();
  if (!contextName) {
    throw new CredentialsError(
      label,
      `current-context is not set; pass a context (--context) or run \`kubectl config use-context NAME\`; available contexts: ${
        quotedList(contextNames)
      }`,
    );
  }
  const context = kc.getContextObject(contextName);
  if (!context) {
    const raw = loaded.contexts.get(contextName);
    const what = wanted === undefined ? `current-context "${contextName}"` : `context "${contextName}"`;
    if (raw) {
      throw new CredentialsError(
        `kubeconfig ${raw.file}`,
        `context "${contextName}" is invalid: it names no cluster; set contexts[].context.cluster`,
      );
    }
    throw new CredentialsError(label, `${what} not found; available contexts: ${quotedList(contextNames)}`);
  }
  kc.setCurrentContext(contextName);
  const source = `${label} (context "${contextName}")`;
  const contextWhere = `kubeconfig ${loaded.contexts.get(contextName)?.file ?? label}`;

  const cluster = kc.getCluster(context.cluster);
  if (!cluster) {
    const raw = loaded.clusters.get(context.cluster);
    if (raw) {
      throw new CredentialsError(
        `kubeconfig ${raw.file}`,
        `cluster "${context.cluster}" (of context "${contextName}") has no server; set clusters[].cluster.server to the API server's URL`,
      );
    }
    throw new CredentialsError(
      contextWhere,
      `cluster "${context.cluster}" of context "${contextName}" not found; available clusters: ${
        quotedList(kc.getClusters().map((c) => c.name))
      }`,
    );
  }
  const clusterWhere = `kubeconfig ${loaded.clusters.get(cluster.name)?.file ?? label}`;

  let user: User | undefined;
  if (context.user) {
    user = kc.getUser(context.user) ?? undefined;
    if (!user) {
      throw new CredentialsError(
        contextWhere,
        `user "${context.user}" of context "${contextName}" not found; available users: ${
          quotedList(kc.getUsers().map((u) => u.name))
        }`,
      );
    }
  }
  const rawUser = user ? loaded.users.get(user.name) : undefined;
  const userFile = rawUser?.file;
  const userWhere = `kubeconfig ${userFile ?? label}`;
  const impersonation = IMPERSONATION_KEYS.filter((key) => rawUser?.body?.[key] !== undefined);
  if (user && impersonation.length) {
    throw new CredentialsError(
      userWhere,
      `user "${user.name}" asks for impersonation (${
        impersonation.join(", ")
      }), which is not supported; use a user without it`,
    );
  }

  const server = parseServer(cluster, clusterWhere);
  const tls = await readTls(cluster, user, clusterWhere, userWhere);

  const rawTokenFile = rawUser?.body?.tokenFile;
  const tokenFile = typeof rawTokenFile === "string" && rawTokenFile && userFile
    ? new TokenFile(
      isAbsolute(rawTokenFile) ? rawTokenFile : join(dirname(resolve(userFile)), rawTokenFile),
      userWhere,
    )
    : undefined;

  const { KubeConfig } = await importClientNode();
  const authUser = user ? authOnlyUser(user, userFile) : undefined;
  const makeAuthConfig = (): KubeConfig | undefined => {
    if (!authUser) return undefined;
    const auth = new KubeConfig();
    // A neutral cluster: only the user matters for headers; no TLS files are read per request.
    auth.loadFromClusterAndUser(
      { name: cluster.name, server: "https://kubernetes.invalid", skipTLSVerify: false },
      authUser,
    );
    return auth;
  };
  const basic = user?.username ? basicAuthorization(user.username, user.password ?? "") : undefined;

  const resolver = new Authorizer(
    makeAuthConfig,
    tokenFile,
    basic,
    user ? describeAuth(user, userWhere) : undefined,
  );
  const first = await resolver.resolve();
  if (first.cert && first.key && !tls.cert && !tls.key) {
    // An exec plugin that answers with a client certificate: use it for this client's lifetime.
    const what = `from the exec plugin of user "${user?.name}"`;
    tls.cert = pemOrFail(first.cert, "certificate", userWhere, `the clientCertificateData ${what}`);
    tls.key = pemOrFail(first.key, "private key", userWhere, `the clientKeyData ${what}`);
  }

  return {
    server,
    tls,
    defaultNamespace: context.namespace || undefined,
    source,
    async authorization(): Promise<string | undefined> {
      return (await resolver.resolve()).header;
    },
    invalidate(): void {
      resolver.invalidate();
    },
  };
}

function parseServer(cluster: Cluster, where: string): string {
  let url: URL;
  try {
    url = new URL(cluster.server);
  } catch {
    throw new CredentialsError(
      where,
      `cluster "${cluster.name}" has an invalid server URL "${cluster.server}"; expected e.g. https://127.0.0.1:6443`,
    );
  }
  if (url.protocol !== "https:" && url.protocol !== "http:") {
    throw new CredentialsError(
      where,
      `cluster "${cluster.name}" has a server URL with protocol "${url.protocol}"; expected https: or http:`,
    );
  }
  return cluster.server.replace(/\/+$/, "");
}

async function readTls(
  cluster: Cluster,
  user: User | undefined,
  clusterWhere: string,
  userWhere: string,
): Promise<TlsMaterial> {
  const tls: TlsMaterial = { insecure: cluster.skipTLSVerify };
  if (cluster.tlsServerName) tls.serverName = cluster.tlsServerName;
  if (cluster.proxyUrl) tls.proxyUrl = cluster.proxyUrl;
  const ofCluster = `of cluster "${cluster.name}"`;
  const ca = await pemFromFileOrData(
    cluster.caFile,
    cluster.caData,
    "certificate",
    clusterWhere,
    "certificate-authority",
    ofCluster,
  );
  if (ca) tls.caCerts = [ca];
  if (!user) return tls;
  const ofUser = `of user "${user.name}"`;
  const cert = await pemFromFileOrData(
    user.certFile,
    user.certData,
    "certificate",
    userWhere,
    "client-certificate",
    ofUser,
  );
  const key = await pemFromFileOrData(user.keyFile, user.keyData, "private key", userWhere, "client-key", ofUser);
  if (Boolean(cert) !== Boolean(key)) {
    const [has, lacks] = cert ? ["client-certificate", "client-key"] : ["client-key", "client-certificate"];
    throw new CredentialsError(userWhere, `user "${user.name}" has a ${has} but no ${lacks}; give both or neither`);
  }
  if (cert && key) {
    tls.cert = cert;
    tls.key = key;
  }
  return tls;
}

/** Reads a kubeconfig's PEM field: `<field>` (a file) wins over `<field>-data` (base64). */
async function pemFromFileOrData(
  file: string | undefined,
  data: string | undefined,
  kind: PemKind,
  where: string,
  field: string,
  owner: string,
): Promise<string | undefined> {
  if (file) {
    const what = `${field} file ${owner} (${file})`;
    let text: string;
    try {
      text = await Deno.readTextFile(file);
    } catch (error) {
      const problem = error instanceof Deno.errors.NotFound
        ? `${what} not found; fix the path in the kubeconfig or create the file`
        : `cannot read ${what}: ${error instanceof Error ? firstLine(error.message) : error}`;
      throw new CredentialsError(where, problem, { cause: error });
    }
    return pemOrFail(text, kind, where, what);
  }
  if (!data) return undefined;
  let text: string;
  try {
    const binary = atob(data);
    text = new TextDecoder().decode(Uint8Array.from(binary, (char) => char.charCodeAt(0)));
  } catch {
    throw new CredentialsError(where, `${field}-data ${owner} is not valid base64; encode the PEM text with base64`);
  }
  return pemOrFail(text, kind, where, `${field}-data ${owner} (decoded)`);
}

function pemOrFail(text: string, kind: PemKind, where: string, what: string): string {
  const problem = pemProblem(text, kind);
  if (problem) throw new CredentialsError(where, `${what} ${problem}`);
  return text;
}

/**
 * The user as client-node should see it for headers alone: no TLS files or data (those were read
 * once already), no basic auth (done here), and a relative exec command resolved against the
 * kubeconfig's folder as kubectl does.
 */
function authOnlyUser(user: User, file: string | undefined): User {
  const exec: unknown = user.exec;
  let resolvedExec: unknown = exec;
  if (isRecord(exec) && typeof exec.command === "string" && file) {
    const command = exec.command;
    if (command.includes("/") && !isAbsolute(command)) {
      resolvedExec = { ...exec, command: join(dirname(resolve(file)), command) };
    }
  }
  return {
    name: user.name,
    authProvider: user.authProvider,
    exec: resolvedExec,
    token: user.token?.trim() || undefined,
  };
}

/** Builds the one-line problem for a failed authenticator call. */
function describeAuth(user: User, where: string): (error: unknown) => CredentialsError {
  const exec: unknown = user.exec;
  const command = isRecord(exec) && typeof exec.command === "string" ? exec.command : undefined;
  return (error: unknown): CredentialsError => {
    if (error instanceof CredentialsError) return error;
    const message = error instanceof Error ? firstLine(error.message) : firstLine(String(error));
    const code = isRecord(error) ? error.code : undefined;
    if (command !== undefined) {
      const problem = code === "ENOENT"
        ? `exec plugin command "${command}" of user "${user.name}" not found; install it or fix users[].user.exec.command`
        : `exec plugin "${command}" of user "${user.name}" failed: ${
          message || "it exited with an error and printed nothing"
        }`;
      return new CredentialsError(where, problem, { cause: error });
    }
    return new CredentialsError(
      where,
      `authentication of user "${user.name}" failed: ${message || "unknown error"}`,
      { cause: error },
    );
  };
}

/** What one resolution gives: the header, and a client certificate if an exec plugin gave one. */
interface Resolution {
  readonly header?: string;
  readonly cert?: string;
  readonly key?: string;
}

/**
 * Resolves the Authorization header through client-node's authenticators on every call (they
 * cache exec and OIDC results until expiry); concurrent calls share one resolution.
 */
class Authorizer {
  readonly #makeAuthConfig: () => KubeConfig | undefined;
  readonly #tokenFile: TokenFile | undefined;
  readonly #basic: string | undefined;
  readonly #wrap: ((error: unknown) => CredentialsError) | undefined;
  #auth: KubeConfig | undefined;
  /** True while the current authenticators have not yet delivered a header: invalidating them again is useless. */
  #unused = true;
  #pending: Promise<Resolution> | undefined;

  constructor(
    makeAuthConfig: () => KubeConfig | undefined,
    tokenFile: TokenFile | undefined,
    basic: string | undefined,
    wrap: ((error: unknown) => CredentialsError) | undefined,
  ) {
    this.#makeAuthConfig = makeAuthConfig;
    this.#tokenFile = tokenFile;
    this.#basic = basic;
    this.#wrap = wrap;
    this.#auth = makeAuthConfig();
  }

  resolve(): Promise<Resolution> {
    if (this.#tokenFile) {
      return this.#tokenFile.read().then((token) => ({ header: `Bearer ${token}` }));
    }
    const auth = this.#auth;
    if (!auth) return Promise.resolve({ header: this.#basic });
    if (this.#pending) return this.#pending;
    const pending = this.#ask(auth).then((resolution) => {
      if (this.#auth === auth) this.#unused = false;
      return resolution;
    }).finally(() => {
      if (this.#pending === pending) this.#pending = undefined;
    });
    this.#pending = pending;
    return pending;
  }

  invalidate(): void {
    this.#tokenFile?.invalidate();
    // A burst of 401s (many requests with the same rejected token) renews the credentials once.
    if (this.#unused) return;
    // Fresh authenticators: exec plugin and OIDC caches are dropped with the old ones.
    this.#auth = this.#makeAuthConfig();
    this.#unused = true;
    this.#pending = undefined;
  }

  async #ask(auth: KubeConfig): Promise<Resolution> {
    const opts: RequestOptions = {};
    try {
      await auth.applyToHTTPSOptions(opts);
    } catch (error) {
      throw this.#wrap ? this.#wrap(error) : error;
    }
    const headers = opts.headers && !Array.isArray(opts.headers) ? opts.headers as OutgoingHttpHeaders : {};
    const value = headers["Authorization"] ?? headers["authorization"];
    const header = typeof value === "string" && value ? value : this.#basic;
    return {
      header,
      cert: typeof opts.cert === "string" ? opts.cert : undefined,
      key: typeof opts.key === "string" ? opts.key : undefined,
    };
  }
}
