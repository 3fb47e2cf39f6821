/**
 * Exec credential plugins of kubeconfig users (`users[].user.exec`), run as kubectl runs them:
 * the command with its `args` and `env` added to ours, `KUBERNETES_EXEC_INFO` describing the
 * request (and the cluster, with `provideClusterInfo`), no terminal on stdin. The
 * `ExecCredential` the plugin prints gives a bearer token, a client certificate, or both; it is
 * kept until its `expirationTimestamp` passes or the API server rejects it.
 *
 * An operator never has a terminal, so `interactiveMode: Always` is refused at load, and plugins
 * in the other modes are told `interactive: false`.
 *
 * @module
 */

import { CredentialsError, firstLine, pemProblem } from "./credentials.ts";
import type { Fields } from "./kubeconfig_fields.ts";
import { describeValue, isRecord } from "./kubeconfig_fields.ts";

/** The `client.authentication.k8s.io` versions that kubectl still runs plugins with (v1alpha1 was removed). */
export const EXEC_API_VERSIONS: readonly string[] = [
  "client.authentication.k8s.io/v1",
  "client.authentication.k8s.io/v1beta1",
];

/** A user's `exec` section, checked. */
export interface ExecConfig {
  /** One of {@linkcode EXEC_API_VERSIONS}: what the plugin is told and must answer with. */
  readonly apiVersion: string;
  /** The command: a name looked up in `PATH`, or a path (relative ones resolved against the kubeconfig's folder). */
  readonly command: string;
  /** The command's arguments. */
  readonly args: readonly string[];
  /** Variables added to the operator's environment for the plugin. */
  readonly env: Readonly<Record<string, string>>;
  /** Shown when the command is not found: how to install it. */
  readonly installHint?: string;
  /** Whether the plugin gets the cluster's details in `KUBERNETES_EXEC_INFO`. */
  readonly provideClusterInfo: boolean;
}

/**
 * Reads and checks a user's `exec` section, as kubectl checks it: a command and a supported
 * `apiVersion` are required, every `env` entry needs a name, and `interactiveMode` must be
 * `Never` or `IfAvailable` (or unset) because an operator has no terminal.
 *
 * @example
 * ```ts
 * import { Fields } from "./kubeconfig_fields.ts";
 * import { readExecConfig } from "./exec_credentials.ts";
 * const exec = new Fields(
 *   { apiVersion: "client.authentication.k8s.io/v1", command: "./bin/login", interactiveMode: "Never" },
 *   "/home/u/.kube/config",
 *   'user "u"',
 *   "exec.",
 * );
 * console.assert(readExecConfig(exec).command === "/home/u/.kube/bin/login");
 * ```
 *
 * @param exec The `exec` mapping of a user.
 * @returns The checked configuration; throws a {@linkcode CredentialsError} naming the field.
 */
export function readExecConfig(exec: Fields): ExecConfig {
  const command = exec.string("command");
  if (!command) exec.fail(`exec of ${exec.owner} has no command; set users[].user.exec.command`);
  const apiVersion = exec.string("apiVersion");
  if (!apiVersion || !EXEC_API_VERSIONS.includes(apiVersion)) {
    const found = apiVersion ? `an unsupported apiVersion "${apiVersion}"` : "no apiVersion";
    exec.fail(
      `exec of ${exec.owner} has ${found}; set users[].user.exec.apiVersion to the version the plugin speaks: ${
        EXEC_API_VERSIONS.join(" or ")
      }`,
    );
  }
  const mode = exec.string("interactiveMode") ?? "IfAvailable";
  if (mode === "Always") {
    exec.fail(
      `exec of ${exec.owner} has interactiveMode Always, but an operator has no terminal for the plugin to ask on; ` +
        "use a plugin setup that logs in without prompting (interactiveMode IfAvailable or Never)",
    );
  }
  if (mode !== "Never" && mode !== "IfAvailable") {
    exec.fail(`exec of ${exec.owner} has an invalid interactiveMode "${mode}"; use Never, IfAvailable or Always`);
  }
  const env: Record<string, string> = {};
  for (const variable of exec.records("env")) {
    const name = variable.string("name");
    if (!name) exec.fail(`an exec.env entry of ${exec.owner} has no name; give every entry a name and a value`);
    env[name] = variable.string("value") ?? "";
  }
  // kubectl's rule: a command with a slash in it is a path, relative to the kubeconfig that names it.
  const resolved = command.includes("/") ? exec.path("command")! : command;
  return {
    apiVersion,
    command: resolved,
    args: exec.strings("args"),
    env,
    installHint: exec.string("installHint"),
    provideClusterInfo: exec.boolean("provideClusterInfo"),
  };
}

/** What a plugin run gave: a bearer token, a client certificate with its key, or both. */
export interface ExecCredential {
  /** The bearer token, if any. */
  readonly token?: string;
  /** The client certificate, PEM, if any (always with `key`). */
  readonly cert?: string;
  /** The client certificate's private key, PEM, if any (always with `cert`). */
  readonly key?: string;
  /** When it expires, in milliseconds since the epoch; `undefined`: it does not. */
  readonly expiresAt?: number;
}

/** Options of an {@linkcode ExecPlugin}. */
export interface ExecPluginOptions {
  /** Where problems are reported: `kubeconfig <file>`. */
  readonly where: string;
  /** Whose plugin it is, for messages: e.g. `user "u"`. */
  readonly owner: string;
  /** The cluster as `KUBERNETES_EXEC_INFO`'s `spec.cluster` describes it; sent only with `provideClusterInfo`. */
  readonly cluster?: Readonly<Record<string, unknown>>;
  /** The wall clock in milliseconds, for expirations (for tests); `Date.now` by default. */
  readonly now?: () => number;
}

/**
 * Runs an exec credential plugin when its credential is needed: the first time, after its
 * `expirationTimestamp`, and after {@linkcode ExecPlugin.invalidate}. Concurrent callers share
 * one run.
 *
 * @example
 * ```ts ignore
 * const plugin = new ExecPlugin(readExecConfig(exec), { where: "kubeconfig /home/u/.kube/config", owner: 'user "u"' });
 * const { token } = await plugin.credential();
 * ```
 */
export class ExecPlugin {
  /** The checked configuration. */
  readonly config: ExecConfig;
  readonly #options: ExecPluginOptions;
  readonly #now: () => number;
  #cached: ExecCredential | undefined;
  #pending: Promise<ExecCredential> | undefined;

  /**
   * Prepares the plugin; nothing runs until the first {@linkcode ExecPlugin.credential}.
   *
   * @param config The user's checked `exec` section.
   * @param options Where it is defined, the cluster info, the clock.
   */
  constructor(config: ExecConfig, options: ExecPluginOptions) {
    this.config = config;
    this.#options = options;
    this.#now = options.now ?? Date.now;
  }

  /**
   * The current credential, from the last run if it has not expired, else from a new run.
   * Rejects with a one-line {@linkcode CredentialsError} if the plugin cannot run, fails, or
   * prints no usable `ExecCredential`.
   */
  credential(): Promise<ExecCredential> {
    const cached = this.#cached;
    if (cached && (cached.expiresAt === undefined || this.#now() < cached.expiresAt)) return Promise.resolve(cached);
    this.#pending ??= this.#run().then((credential) => {
      this.#cached = credential;
      return credential;
    }).finally(() => {
      this.#pending = undefined;
    });
    return this.#pending;
  }

  /** The API server has rejected the credential: the next {@linkcode ExecPlugin.credential} runs the plugin again. */
  invalidate(): void {
    // A burst of 401s (many requests sent with the same token) runs the plugin once: a run under
    // way gives a credential that no request has used yet.
    if (!this.#pending) this.#cached = undefined;
  }

  async #run(): Promise<ExecCredential> {
    const { command, args, env, provideClusterInfo } = this.config;
    const spec: Record<string, unknown> = { interactive: false };
    if (provideClusterInfo && this.#options.cluster) spec.cluster = this.#options.cluster;
    const info = { apiVersion: this.config.apiVersion, kind: "ExecCredential", spec };
    let output: Deno.CommandOutput;
    try {
      output = await new Deno.Command(command, {
        args: [...args],
        env: { ...env, KUBERNETES_EXEC_INFO: JSON.stringify(info) },
        stdin: "null",
        stdout: "piped",
        stderr: "piped",
      }).output();
    } catch (error) {
      throw this.#fail(this.#spawnProblem(error), error);
    }
    if (!output.success) {
      const stderr = firstLine(new TextDecoder().decode(output.stderr));
      const exit = output.signal ? `it was killed by ${output.signal}` : `it exited with code ${output.code}`;
      throw this.#fail(
        `exec plugin "${command}" of ${this.#options.owner} failed: ${stderr || `${exit}, printing nothing on stderr`}`,
      );
    }
    return this.#parse(new TextDecoder().decode(output.stdout));
  }

  #spawnProblem(error: unknown): string {
    const { command, installHint } = this.config;
    const plugin = `exec plugin command "${command}" of ${this.#options.owner}`;
    if (error instanceof Deno.errors.NotFound) {
      return `${plugin} not found; ${installHint?.trim() || "install it or fix users[].user.exec.command"}`;
    }
    if (error instanceof Deno.errors.PermissionDenied) {
      return `${plugin} cannot be executed (permission denied); make it executable or fix users[].user.exec.command`;
    }
    return `cannot run ${plugin}: ${error instanceof Error ? firstLine(error.message) : error}`;
  }

  /** Reads the `ExecCredential` a plugin printed, checking it as kubectl does. */
  #parse(stdout: string): ExecCredential {
    const what = `exec plugin "${this.config.command}" of ${this.#options.owner}`;
    let doc: unknown;
    try {
      doc = JSON.parse(stdout);
    } catch (error) {
      const problem = stdout.trim() ? `not JSON: ${firstLine(String(error))}` : "nothing";
      throw this.#fail(`${what} printed ${problem}; it must print an ExecCredential`, error);
    }
    if (!isRecord(doc) || (doc.kind !== undefined && doc.kind !== "ExecCredential")) {
      throw this.#fail(`${what} printed ${describeKind(doc)} instead of an ExecCredential`);
    }
    if (doc.apiVersion !== undefined && doc.apiVersion !== this.config.apiVersion) {
      throw this.#fail(
        `${what} answered with apiVersion ${JSON.stringify(doc.apiVersion)}, not ${this.config.apiVersion}; ` +
          "set users[].user.exec.apiVersion to the version the plugin speaks",
      );
    }
    const status = doc.status;
    if (!isRecord(status)) throw this.#fail(`${what} printed an ExecCredential without status`);
    const token = this.#optionalString(status, "token", what);
    const cert = this.#optionalString(status, "clientCertificateData", what);
    const key = this.#optionalString(status, "clientKeyData", what);
    if (Boolean(cert) !== Boolean(key)) {
      throw this.#fail(`${what} printed only one of clientCertificateData and clientKeyData; it must print both`);
    }
    if (!token && !cert) {
      throw this.#fail(`${what} printed an ExecCredential with neither status.token nor a client certificate`);
    }
    for (
      const [pem, kind, field] of [[cert, "certificate", "clientCertificateData"], [
        key,
        "private key",
        "clientKeyData",
      ]] as const
    ) {
      const problem = pem ? pemProblem(pem, kind) : undefined;
      if (problem) throw this.#fail(`the status.${field} printed by ${what} ${problem}`);
    }
    return { token, cert, key, expiresAt: this.#expiry(status, what) };
  }

  #optionalString(status: Record<string, unknown>, key: string, what: string): string | undefined {
    const value = status[key];
    if (value === undefined || value === null || value === "") return undefined;
    if (typeof value !== "string") {
      throw this.#fail(`${what} printed a status.${key} that is ${describeValue(value)}, not a string`);
    }
    return value;
  }

  #expiry(status: Record<string, unknown>, what: string): number | undefined {
    const stamp = this.#optionalString(status, "expirationTimestamp", what);
    if (stamp === undefined) return undefined;
    const expiresAt = Date.parse(stamp);
    if (Number.isNaN(expiresAt)) {
      throw this.#fail(`${what} printed status.expirationTimestamp "${stamp}", which is not an RFC 3339 time`);
    }
    return expiresAt;
  }

  #fail(problem: string, cause?: unknown): CredentialsError {
    return new CredentialsError(this.#options.where, problem, cause === undefined ? undefined : { cause });
  }
}

function describeKind(doc: unknown): string {
  return isRecord(doc) ? `a ${JSON.stringify(doc.kind)}` : describeValue(doc);
}
