/**
 * LocalCluster: a real Kubernetes control plane (etcd, kube-apiserver, optionally a
 * kube-controller-manager) on loopback with random ports, for tests and local experiments.
 *
 * @module
 */

import { join } from "node:path";
import { type ControlPlaneBinaries, locateBinaries } from "./binaries.ts";
import { onExit } from "./exit_guard.ts";
import { ignoreNotFound } from "./files.ts";
import { layOut, type Paths, randomToken, writeCredentials } from "./cluster_folder.ts";
import { renderKubeconfig } from "./kubeconfig.ts";
import { freePorts } from "./ports.ts";
import { ManagedProcess } from "./processes.ts";
import { waitUntilReady } from "./readiness.ts";

/** The Kubernetes version that LocalCluster builds and runs unless told otherwise. */
export const DEFAULT_KUBERNETES_VERSION = "1.36.3";

/** Options of {@linkcode LocalCluster.start}. */
export interface LocalClusterOptions {
  /**
   * The Kubernetes version to build and run, e.g. `"1.36.3"` (the default). Ignored when
   * `KUBEBUILDER_ASSETS` provides the binaries.
   */
  version?: string;
  /**
   * Controllers of kube-controller-manager to run, e.g. `["namespace", "garbagecollector"]`.
   * Without any, no controller manager runs: deleted namespaces stay `Terminating` and owned
   * objects are not garbage-collected. The garbage collector reads the served resources every
   * 30 s (fixed in kube-controller-manager): owners of a CRD created after the start are
   * collected only once it has read them, up to about 40 s later.
   */
  controllers?: string[];
  /** Extra kube-apiserver flags, appended after LocalCluster's own, e.g. `["--watch-cache=false"]`. */
  apiserverArgs?: string[];
  /**
   * kube-apiserver's feature gates, e.g. `{ ShardedListAndWatch: true }` (alpha in 1.36) for
   * server-side sharded lists and watches. Names are checked by kube-apiserver: an unknown one
   * fails the start with its message.
   */
  featureGates?: Record<string, boolean>;
}

/** What is fixed at creation: binaries, ports, credentials. */
interface Setup {
  readonly directory: string;
  readonly binaries: ControlPlaneBinaries;
  readonly paths: Paths;
  readonly token: string;
  readonly caCert: string;
  readonly etcdPorts: { readonly client: number; readonly peer: number };
  readonly apiserverPort: number;
  readonly controllerManagerPort: number;
  readonly controllers: readonly string[];
  readonly apiserverArgs: readonly string[];
}

/**
 * A real Kubernetes control plane on 127.0.0.1: etcd and kube-apiserver (plus a
 * kube-controller-manager if `controllers` are given), in a fresh temporary folder, with random
 * free ports, RBAC on, and an admin bearer token.
 *
 * Binaries come from `KUBEBUILDER_ASSETS` if set, else from a per-user cache
 * (`KOPF_LOCAL_CLUSTER_CACHE`, `$XDG_CACHE_HOME/kopf-deno/local-cluster` or
 * `~/.cache/kopf-deno/local-cluster`), where they are built once from the upstream Go modules.
 *
 * @example
 * ```ts ignore
 * import { LocalCluster } from "@kopf/kopf/testing";
 *
 * await using cluster = await LocalCluster.start();
 * using client = Deno.createHttpClient({ caCerts: [cluster.caCert] });
 * const response = await fetch(`${cluster.server}/api/v1/namespaces`, {
 *   client,
 *   headers: { Authorization: `Bearer ${cluster.token}` },
 * });
 * ```
 */
export class LocalCluster implements AsyncDisposable {
  /** Path of an admin kubeconfig file (inline CA data and the token), context `local-cluster`. */
  readonly kubeconfig: string;
  /** The API server URL: `https://127.0.0.1:<port>`. */
  readonly server: string;
  /** The admin bearer token (a member of `system:masters`). */
  readonly token: string;
  /** PEM of the CA that signs the API server's serving certificate. */
  readonly caCert: string;
  /** The etcd client URL: `http://127.0.0.1:<port>`. */
  readonly etcdUrl: string;
  /** The cluster's temporary folder: etcd data, certificates, kubeconfigs, logs. */
  readonly directory: string;

  #setup: Setup;
  #client: Deno.HttpClient;
  #version = "";
  #etcd: ManagedProcess | undefined;
  #apiserver: ManagedProcess | undefined;
  #controllerManager: ManagedProcess | undefined;
  #stopping: Promise<void> | undefined;
  #kubeconfigs = 0;
  #forgetExitCleanup: () => void;

  private constructor(setup: Setup) {
    this.#setup = setup;
    this.directory = setup.directory;
    this.kubeconfig = setup.paths.kubeconfig;
    this.server = `https://127.0.0.1:${setup.apiserverPort}`;
    this.token = setup.token;
    this.caCert = setup.caCert;
    this.etcdUrl = `http://127.0.0.1:${setup.etcdPorts.client}`;
    this.#client = Deno.createHttpClient({ caCerts: [setup.caCert] });
    this.#forgetExitCleanup = onExit(() => this.#killNow());
  }

  /**
   * Starts a cluster and resolves once kube-apiserver is ready (and the controller manager, if
   * any). The first call on a machine may build the binaries, which takes many minutes.
   *
   * Rejects with an Error carrying the last lines of the failing component's log if a component
   * exits or is not ready within 60 s; whatever was started is stopped and removed again.
   */
  static async start(options: LocalClusterOptions = {}): Promise<LocalCluster> {
    const version = (options.version ?? DEFAULT_KUBERNETES_VERSION).replace(/^v/, "");
    const controllers = options.controllers ?? [];
    const binaries = await locateBinaries(version, controllers.length > 0);
    const [etcdClient, etcdPeer, apiserverPort, controllerManagerPort] = freePorts(4);
    const directory = await Deno.makeTempDir({ prefix: "kopf-local-cluster-" });
    const paths = layOut(directory);
    const token = randomToken();
    let caCert: string;
    try {
      caCert = await writeCredentials(paths, token);
    } catch (error) {
      await Deno.remove(directory, { recursive: true }).catch(ignoreNotFound);
      throw error;
    }

    const cluster = new LocalCluster({
      directory,
      binaries,
      paths,
      token,
      caCert,
      etcdPorts: { client: etcdClient, peer: etcdPeer },
      apiserverPort,
      controllerManagerPort,
      controllers,
      apiserverArgs: [...featureGateArgs(options.featureGates), ...options.apiserverArgs ?? []],
    });
    try {
      await cluster.#boot();
    } catch (error) {
      await cluster.stop();
      throw error;
    }
    return cluster;
  }

  /** The Kubernetes version the running kube-apiserver reports, e.g. `"1.36.3"`. */
  get version(): string {
    return this.#version;
  }

  /**
   * Writes another admin kubeconfig with the same credentials but another server URL (e.g. a
   * TCP proxy in front of this cluster, for tests of disconnects) and returns its path.
   */
  async writeKubeconfig(server: string): Promise<string> {
    this.#kubeconfigs += 1;
    const path = join(this.directory, `kubeconfig-${this.#kubeconfigs}.yaml`);
    await Deno.writeTextFile(
      path,
      renderKubeconfig({ server, caCert: this.caCert, token: this.token }),
      { mode: 0o600 },
    );
    return path;
  }

  /** Stops only kube-apiserver (SIGTERM, then SIGKILL after 10 s); etcd keeps the data. */
  async stopApiserver(): Promise<void> {
    const apiserver = this.#apiserver;
    this.#apiserver = undefined;
    await apiserver?.stop();
  }

  /**
   * Starts kube-apiserver again (or for the first time) on the same port with the same etcd,
   * certificates and token, and waits until it is ready. Does nothing if it is running.
   */
  async startApiserver(): Promise<void> {
    if (this.#stopping) throw new Error("This LocalCluster is stopped; start a new one.");
    if (this.#apiserver?.running) return;
    const { binaries, paths } = this.#setup;
    const apiserver = await ManagedProcess.spawn(
      "kube-apiserver",
      binaries.kubeApiserver,
      this.#apiserverArgs(),
      join(paths.logs, "kube-apiserver.log"),
    );
    if (this.#stopping) {
      // stop() ran while we were spawning and did not see this process.
      await apiserver.stop();
      throw new Error("This LocalCluster was stopped while its API server was starting.");
    }
    this.#apiserver = apiserver;
    try {
      await waitUntilReady(apiserver, { url: `${this.server}/readyz`, client: this.#client });
    } catch (error) {
      this.#apiserver = undefined;
      await apiserver.stop();
      throw error;
    }
  }

  /** Stops all processes and removes the temporary folder. Safe to call more than once. */
  stop(): Promise<void> {
    this.#stopping ??= this.#shutdown();
    return this.#stopping;
  }

  /** Same as {@linkcode LocalCluster.stop}, for `await using`. */
  [Symbol.asyncDispose](): Promise<void> {
    return this.stop();
  }

  async #boot(): Promise<void> {
    const { binaries, paths, etcdPorts } = this.#setup;
    await Deno.writeTextFile(
      paths.kubeconfig,
      renderKubeconfig({ server: this.server, caCert: this.caCert, token: this.token }),
      { mode: 0o600 },
    );

    const peerUrl = `http://127.0.0.1:${etcdPorts.peer}`;
    this.#etcd = await ManagedProcess.spawn("etcd", binaries.etcd, [
      "--name=kopf-local-cluster",
      `--data-dir=${paths.etcdData}`,
      `--listen-client-urls=${this.etcdUrl}`,
      `--advertise-client-urls=${this.etcdUrl}`,
      `--listen-peer-urls=${peerUrl}`,
      `--initial-advertise-peer-urls=${peerUrl}`,
      `--initial-cluster=kopf-local-cluster=${peerUrl}`,
      // Test data is disposable; fsync on every write only makes tests slow.
      "--unsafe-no-fsync=true",
    ], join(paths.logs, "etcd.log"));
    await waitUntilReady(this.#etcd, { url: `${this.etcdUrl}/health` });

    await this.startApiserver();
    this.#version = await this.#fetchVersion();

    if (this.#setup.controllers.length > 0) await this.#startControllerManager();
  }

  #apiserverArgs(): string[] {
    const { paths, apiserverPort, apiserverArgs } = this.#setup;
    return [
      `--etcd-servers=${this.etcdUrl}`,
      `--secure-port=${apiserverPort}`,
      "--bind-address=127.0.0.1",
      // Without it, kube-apiserver looks up the default route's address to advertise.
      "--advertise-address=127.0.0.1",
      `--tls-cert-file=${paths.servingCert}`,
      `--tls-private-key-file=${paths.servingKey}`,
      `--token-auth-file=${paths.tokenFile}`,
      "--authorization-mode=RBAC",
      // The ServiceAccount admission plugin rejects pods until a controller makes the default
      // service account; envtest turns it off for the same reason.
      "--disable-admission-plugins=ServiceAccount",
      "--service-cluster-ip-range=10.0.0.0/24",
      "--allow-privileged=true",
      `--service-account-issuer=${this.server}/`,
      `--service-account-key-file=${paths.serviceAccountPub}`,
      `--service-account-signing-key-file=${paths.serviceAccountKey}`,
      // The reconciler of the `kubernetes` Service's endpoints refuses a loopback address and
      // would log an error and write to etcd every 10 s; nothing here can use that Service.
      "--endpoint-reconciler-type=none",
      // On SIGTERM, open watches would otherwise hold the shutdown for up to 60 s (and
      // stopApiserver() would end in SIGKILL): close them after 1 s, everything else after 2 s.
      "--shutdown-watch-termination-grace-period=1s",
      "--shutdown-send-retry-after=true",
      ...apiserverArgs,
    ];
  }

  async #startControllerManager(): Promise<void> {
    const { binaries, paths, controllers, controllerManagerPort } = this.#setup;
    if (!binaries.kubeControllerManager) {
      throw new Error("kube-controller-manager is needed for controllers but was not found.");
    }
    this.#controllerManager = await ManagedProcess.spawn(
      "kube-controller-manager",
      binaries.kubeControllerManager,
      [
        `--kubeconfig=${paths.kubeconfig}`,
        `--controllers=${controllers.join(",")}`,
        "--leader-elect=false",
        "--bind-address=127.0.0.1",
        `--secure-port=${controllerManagerPort}`,
        `--tls-cert-file=${paths.servingCert}`,
        `--tls-private-key-file=${paths.servingKey}`,
      ],
      join(paths.logs, "kube-controller-manager.log"),
    );
    await waitUntilReady(this.#controllerManager, {
      url: `https://127.0.0.1:${controllerManagerPort}/healthz`,
      client: this.#client,
    });
  }

  async #fetchVersion(): Promise<string> {
    const response = await fetch(`${this.server}/version`, {
      client: this.#client,
      headers: { Authorization: `Bearer ${this.token}` },
    });
    const body: unknown = await response.json();
    if (
      !response.ok || typeof body !== "object" || body === null || !("gitVersion" in body) ||
      typeof body.gitVersion !== "string"
    ) {
      throw new Error(`kube-apiserver answered /version with HTTP ${response.status}: ${JSON.stringify(body)}`);
    }
    return body.gitVersion.replace(/^v/, "");
  }

  async #shutdown(): Promise<void> {
    // Dependents first, so that nothing logs errors about a vanished dependency while stopping.
    for (const process of [this.#controllerManager, this.#apiserver, this.#etcd]) {
      await process?.stop();
    }
    this.#controllerManager = this.#apiserver = this.#etcd = undefined;
    this.#client.close();
    this.#forgetExitCleanup();
    await Deno.remove(this.directory, { recursive: true }).catch(ignoreNotFound);
  }

  #killNow(): void {
    for (const process of [this.#controllerManager, this.#apiserver, this.#etcd]) {
      process?.killNow();
    }
    Deno.removeSync(this.directory, { recursive: true });
  }
}

/** The `--feature-gates` flag for the gates given, if any: `--feature-gates=A=true,B=false`. */
export function featureGateArgs(gates: Record<string, boolean> | undefined): string[] {
  const entries = Object.entries(gates ?? {});
  for (const [name, value] of entries) {
    if (!/^[A-Za-z][A-Za-z0-9]*$/.test(name) || typeof value !== "boolean") {
      throw new TypeError(
        `LocalCluster: featureGates must map gate names (letters and digits, e.g. ShardedListAndWatch) to true or ` +
          `false; got ${JSON.stringify(name)}: ${JSON.stringify(value)}.`,
      );
    }
  }
  return entries.length ? [`--feature-gates=${entries.map(([name, value]) => `${name}=${value}`).join(",")}`] : [];
}
