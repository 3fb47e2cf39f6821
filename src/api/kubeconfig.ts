/**
 * Credentials from kubeconfig files, read as kubectl reads them and resolved into what Deno's
 * `fetch` needs: the server URL, PEM strings for `Deno.createHttpClient`, and an Authorization
 * header asked for before each request.
 *
 * kubectl's rules: several files in `KUBECONFIG` are merged with the first definition of a name
 * and the first `current-context` winning, missing files in that list are skipped, relative paths
 * resolve against the file that names them, only the chosen context's cluster and user are
 * checked (a broken entry elsewhere cannot break the load), and a field is refused when it has
 * the wrong type or conflicts with another (a file and inline data for the same certificate,
 * a password with a token).
 *
 * Supported: clusters' `server`, `certificate-authority(-data)`, `insecure-skip-tls-verify`,
 * `tls-server-name`, `proxy-url`; users' `client-certificate(-data)`, `client-key(-data)`,
 * `tokenFile` (re-read like the kubelet's rotating tokens; it wins over `token`), `token`,
 * `username`/`password`, `exec` credential plugins (see `exec_credentials.ts`), and
 * `auth-provider` tokens stored in the kubeconfig (`config.id-token` for `oidc`, else
 * `config.access-token`); contexts' `cluster`, `user`, `namespace`.
 *
 * Not supported, with an error saying so: refreshing auth-provider tokens (OIDC, GCP, Azure) --
 * an expired one is refused with a hint to refresh it with kubectl --, impersonation (`as`,
 * `as-groups`, ...), and exec plugins in `interactiveMode: Always`.
 *
 * @module
 */

import { delimiter, join } from "node:path";
import { type Credentials, CredentialsError, firstLine } from "./credentials.ts";
import { describeValue, Fields, isRecord } from "./kubeconfig_fields.ts";
import { readClientCertificate, readClusterTls } from "./kubeconfig_tls.ts";
import { ANONYMOUS, authenticatorOf, execClusterInfo } from "./kubeconfig_users.ts";

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

/** The merged view of all files: each named entry as the first file that defines it wrote it. */
interface Kubeconfig {
  currentContext: string | undefined;
  readonly clusters: Map<string, Fields>;
  readonly users: Map<string, Fields>;
  readonly contexts: Map<string, Fields>;
}

/**
 * Loads credentials from kubeconfig files (see {@linkcode locateKubeconfig} for which) and a
 * context (the given one, else `current-context`). Client certificates, CA files and token files
 * are read now; an exec plugin runs now once (so that a broken login fails at start-up) and again
 * whenever its credential expires or is invalidated.
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
  const location = locateKubeconfig(options.path, Deno.env.get("KUBECONFIG"), defaultKubeconfigPath());
  if (!location) {
    throw new CredentialsError(
      "kubeconfig",
      "no file to load: KUBECONFIG is not set and there is no home folder (HOME); pass a kubeconfig path",
    );
  }
  const label = `kubeconfig ${location.files.join(delimiter)}`;
  const kubeconfig = await loadFiles(location, label);
  return await resolveContext(kubeconfig, label, options.context);
}

async function loadFiles(location: KubeconfigLocation, label: string): Promise<Kubeconfig> {
  const merged: Kubeconfig = { currentContext: undefined, clusters: new Map(), users: new Map(), contexts: new Map() };
  const missing: string[] = [];
  for (const file of location.files) {
    const text = await readKubeconfigFile(file, location.files.length > 1 ? missing : undefined);
    if (text !== undefined) mergeInto(merged, await parseKubeconfig(text, file));
  }
  if (missing.length === location.files.length) {
    throw new CredentialsError(
      label,
      `none of the files in KUBECONFIG exists (${missing.join(", ")}); fix KUBECONFIG or pass a kubeconfig path`,
    );
  }
  return merged;
}

/** Reads a kubeconfig file; a missing file is an error unless `missing` collects it instead. */
async function readKubeconfigFile(path: string, missing?: string[]): Promise<string | undefined> {
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
    throw new CredentialsError(`kubeconfig ${path}`, problem, { cause: error });
  }
}

async function parseKubeconfig(text: string, file: string): Promise<Fields> {
  const where = `kubeconfig ${file}`;
  let doc: unknown = parseJson(text);
  if (doc === undefined) {
    // Loaded here, not with the module: an operator in a Pod reads no kubeconfig and saves the parser's ~5 MiB.
    const { parse } = await import("yaml");
    try {
      // Warnings (unknown tags and the like) are not worth a log line: kubectl ignores them too.
      doc = parse(text, { logLevel: "error" });
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      throw new CredentialsError(where, `not valid YAML: ${firstLine(message)}`, { cause: error });
    }
  }
  if (doc === null || doc === undefined) {
    throw new CredentialsError(where, "the file is empty; write a kubeconfig into it or point to another file");
  }
  if (!isRecord(doc)) {
    throw new CredentialsError(
      where,
      `not a kubeconfig: expected a mapping with clusters, contexts and users, found ${describeValue(doc)}`,
    );
  }
  return new Fields(doc, file, "the kubeconfig");
}

/**
 * A kubeconfig written as JSON (which is YAML too: LocalCluster's, some generators') is read
 * without the YAML parser, which costs the process ~5 MiB for its lifetime; `undefined` for
 * anything else, including YAML's flow style that only looks like JSON.
 */
function parseJson(text: string): unknown {
  if (!text.trimStart().startsWith("{")) return undefined;
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

const SECTIONS = [["clusters", "cluster"], ["users", "user"], ["contexts", "context"]] as const;

/** kubectl's merge: the first definition of a name and the first `current-context` win. */
function mergeInto(merged: Kubeconfig, doc: Fields): void {
  merged.currentContext ??= doc.string("current-context");
  for (const [section, key] of SECTIONS) {
    for (const item of doc.list(section)) {
      // A nameless item cannot be chosen by any context: skipping it is all kubectl's checks would do.
      if (!isRecord(item) || typeof item.name !== "string" || !item.name || merged[section].has(item.name)) continue;
      const body = item[key];
      merged[section].set(item.name, new Fields(isRecord(body) ? body : {}, doc.file, `${key} "${item.name}"`));
    }
  }
}

function quotedList(names: Iterable<string>): string {
  const quoted = [...names].map((name) => `"${name}"`);
  return quoted.length ? quoted.join(", ") : "none";
}

/** The chosen context, its cluster, and its user (none: anonymous). */
interface Chosen {
  readonly name: string;
  readonly context: Fields;
  readonly cluster: Fields;
  readonly user?: Fields;
}

function chooseContext(kubeconfig: Kubeconfig, label: string, wanted: string | undefined): Chosen {
  const names = [...kubeconfig.contexts.keys()];
  if (!names.length) {
    throw new CredentialsError(
      label,
      "defines no contexts; add one (kubectl config set-context) or use another kubeconfig",
    );
  }
  const name = wanted ?? kubeconfig.currentContext;
  if (!name) {
    throw new CredentialsError(
      label,
      "current-context is not set; pass a context (--context) or run `kubectl config use-context NAME`; " +
        `available contexts: ${quotedList(names)}`,
    );
  }
  const context = kubeconfig.contexts.get(name);
  if (!context) {
    const what = wanted === undefined ? `current-context "${name}"` : `context "${name}"`;
    throw new CredentialsError(label, `${what} not found; available contexts: ${quotedList(names)}`);
  }
  return { name, context, ...contextEntries(kubeconfig, name, context) };
}

function contextEntries(kubeconfig: Kubeconfig, name: string, context: Fields): { cluster: Fields; user?: Fields } {
  const clusterName = context.string("cluster");
  if (!clusterName) {
    context.fail(`context "${name}" is invalid: it names no cluster; set contexts[].context.cluster`);
  }
  const cluster = kubeconfig.clusters.get(clusterName);
  if (!cluster) {
    context.fail(
      `cluster "${clusterName}" of context "${name}" not found; available clusters: ${
        quotedList(kubeconfig.clusters.keys())
      }`,
    );
  }
  const userName = context.string("user");
  if (userName === undefined) return { cluster };
  const user = kubeconfig.users.get(userName);
  if (!user) {
    context.fail(
      `user "${userName}" of context "${name}" not found; available users: ${quotedList(kubeconfig.users.keys())}`,
    );
  }
  return { cluster, user };
}

async function resolveContext(kubeconfig: Kubeconfig, label: string, wanted: string | undefined): Promise<Credentials> {
  const { name, context, cluster, user } = chooseContext(kubeconfig, label, wanted);
  const server = readServer(cluster, name);
  const tls = await readClusterTls(cluster);
  if (user) Object.assign(tls, await readClientCertificate(user));
  const authenticator = user ? await authenticatorOf(user, () => execClusterInfo(cluster, server, tls)) : ANONYMOUS;
  if (authenticator.cert && authenticator.key && !tls.cert) {
    // An exec plugin that answers with a client certificate: use it for this client's lifetime.
    tls.cert = authenticator.cert;
    tls.key = authenticator.key;
  }
  return {
    server,
    tls,
    defaultNamespace: context.string("namespace"),
    source: `${label} (context "${name}")`,
    authorization: () => authenticator.header(),
    fixedAuthorization: authenticator.fixed,
    invalidate: () => authenticator.invalidate(),
  };
}

function readServer(cluster: Fields, contextName: string): string {
  const server = cluster.string("server");
  if (!server) {
    cluster.fail(
      `${cluster.owner} (of context "${contextName}") has no server; set clusters[].cluster.server to the API server's URL`,
    );
  }
  let url: URL | undefined;
  try {
    url = new URL(server);
  } catch {
    cluster.fail(`${cluster.owner} has an invalid server URL "${server}"; expected e.g. https://127.0.0.1:6443`);
  }
  if (url.protocol !== "https:" && url.protocol !== "http:") {
    cluster.fail(`${cluster.owner} has a server URL with protocol "${url.protocol}"; expected https: or http:`);
  }
  return server.replace(/\/+$/, "");
}
