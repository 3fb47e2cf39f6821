/**
 * One replica of bench/sharding.ts: `kopf run` on bench/fixtures/sharded_work.ts as a separate
 * process, optionally talking to the API server through a {@linkcode CountingProxy} of its own (so
 * the bytes it receives are its own), with a liveness endpoint that shows its part of the shard
 * group, and its output read line by line: where its objects' daemons run, and its last words if
 * it fails. Its metrics endpoint tells how many idle collections it ran.
 *
 * @module
 */

import type { LocalCluster } from "../testing.ts";
import { renderKubeconfig } from "../src/kits/local_cluster/kubeconfig.ts";
import { freePort } from "../tests/support/environment.ts";
import { CountingProxy } from "./counting_proxy.ts";
import { probeMemory } from "./process_stats.ts";

/** How to start a replica. */
export interface ReplicaOptions {
  readonly cluster: LocalCluster;
  readonly namespace: string;
  /** Its identity in the group, and what its handler records as `status.work.replica`. */
  readonly id: string;
  /** The shard group; none: an ordinary operator that handles every object. */
  readonly group?: string;
  /** `KOPF_BENCH_*` variables for the fixture. */
  readonly env?: Record<string, string>;
  /** Whether to count the bytes it receives (through a proxy of its own); else it talks to the API server directly. */
  readonly count?: boolean;
  /** Whether its live heap can be read ({@linkcode Replica.liveHeap}: a preloaded probe, a collection exposed). */
  readonly probe?: boolean;
}

/** What the liveness endpoint shows of the replica's sharding (`kopf.sharding`). */
export interface ShardingReport {
  readonly members: readonly string[];
  readonly share: number;
  readonly serverSide: boolean;
}

const ROOT = new URL("..", import.meta.url).pathname;
const PROBE = new URL("./fixtures/memory_probe.ts", import.meta.url).pathname;
/**
 * The replicas not yet disposed, with their own kubeconfig if any: killed and removed if the bench
 * exits early (Ctrl+C, an error), so that nothing outlives it.
 */
const alive = new Map<Deno.ChildProcess, string | undefined>();
globalThis.addEventListener("unload", () => {
  for (const [child, kubeconfig] of alive) {
    try {
      child.kill("SIGKILL");
    } catch {
      // Exited already.
    }
    if (kubeconfig) Deno.removeSync(kubeconfig);
  }
});

/** A running replica; see the module's description. */
export class Replica implements AsyncDisposable {
  /** Each object's daemon running here now, with its start (ms since the epoch). */
  readonly daemons = new Map<string, number>();
  /** Every daemon start seen here: the object and when (ms since the epoch). */
  readonly daemonStarts: { name: string; at: number }[] = [];
  readonly #child: Deno.ChildProcess;
  readonly #lines: string[] = [];
  readonly #exited: Promise<Deno.CommandStatus>;
  /** The file its memory probe writes to; `undefined` without a probe. */
  readonly #probe: string | undefined;
  #killed = false;

  private constructor(
    readonly id: string,
    /** Its proxy, with the bytes it received; `undefined` unless counted. */
    readonly proxy: CountingProxy | undefined,
    readonly liveness: string,
    /** Its Prometheus endpoint (`kopf run --metrics`). */
    readonly metrics: string,
    readonly kubeconfig: string,
    options: ReplicaOptions,
  ) {
    const sharding = options.group ? ["--shard-group", options.group, "--shard-id", options.id] : [];
    this.#probe = options.probe ? `${kubeconfig}.${options.id}.heap.json` : undefined;
    const probing = this.#probe ? [`--preload=${PROBE}`, "--v8-flags=--expose-gc"] : [];
    const probeEnv: Record<string, string> = this.#probe
      ? { KOPF_BENCH_PROBE: this.#probe, KOPF_BENCH_GC: "1", KOPF_BENCH_SPACES: "1" }
      : {};
    this.#child = new Deno.Command(Deno.execPath(), {
      args: [
        ...["run", "-A", ...probing, "cli/main.ts", "run", "--standalone", "-q", "-n", options.namespace],
        ...sharding,
        ...["--liveness", liveness, "--metrics", metrics, "bench/fixtures/sharded_work.ts"],
      ],
      cwd: ROOT,
      env: { KUBECONFIG: kubeconfig, NO_COLOR: "1", KOPF_BENCH_REPLICA: options.id, ...probeEnv, ...options.env },
      stdin: "null",
      stdout: "piped",
      stderr: "piped",
    }).spawn();
    alive.set(this.#child, proxy ? kubeconfig : undefined);
    const pumps = Promise.all([this.#pump(this.#child.stdout), this.#pump(this.#child.stderr)]);
    this.#exited = this.#child.status.then(async (status) => {
      await pumps;
      return status;
    });
  }

  /** Starts a replica; a counted one with a proxy and a kubeconfig of its own. */
  static async start(options: ReplicaOptions): Promise<Replica> {
    const { cluster } = options;
    const liveness = `http://127.0.0.1:${freePort()}/healthz`;
    const metrics = `http://127.0.0.1:${freePort()}/metrics`;
    if (!options.count) return new Replica(options.id, undefined, liveness, metrics, cluster.kubeconfig, options);
    const proxy = await CountingProxy.start(cluster.server, cluster.caCert, "kopfexamples");
    const kubeconfig = await Deno.makeTempFile({ prefix: "kopf-bench-sharding-", suffix: ".kubeconfig" });
    await Deno.writeTextFile(
      kubeconfig,
      renderKubeconfig({ server: proxy.url, caCert: proxy.caCert, token: cluster.token }),
    );
    return new Replica(options.id, proxy, liveness, metrics, kubeconfig, options);
  }

  get pid(): number {
    return this.#child.pid;
  }

  /** Rejects if the replica exits before it is killed: what every wait races against. */
  get failure(): Promise<never> {
    return this.#exited.then((status) => {
      if (this.#killed) return new Promise<never>(() => {});
      throw new Error(
        `Replica ${this.id} exited with ${status.code}; its last lines:\n${this.#lines.slice(-30).join("\n")}`,
      );
    });
  }

  /** Its part of the shard group, from its liveness endpoint; `undefined` while it does not answer. */
  async sharding(): Promise<ShardingReport | undefined> {
    try {
      const response = await fetch(this.liveness);
      const body = await response.json();
      return body["kopf.sharding"];
    } catch {
      return undefined;
    }
  }

  /** How many idle collections it has run (`kopf_idle_collections_total`); `undefined` while it does not answer. */
  async idleCollections(): Promise<number | undefined> {
    try {
      const text = await (await fetch(this.metrics)).text();
      const line = text.split("\n").find((line) => line.startsWith("kopf_idle_collections_total"));
      return line === undefined ? 0 : Number(line.split(" ").at(-1));
    } catch {
      return undefined;
    }
  }

  /**
   * Its V8 heap in use after a full collection (bytes), read by its probe, and how much of it is
   * compiled code; needs `probe` at the start.
   */
  async liveHeap(): Promise<{ used: number; code: number }> {
    if (!this.#probe) throw new Error(`Replica ${this.id} was started without a memory probe: start it with probe.`);
    const { heapUsed, spaces } = await probeMemory(this.pid, this.#probe);
    return { used: heapUsed, code: (spaces.code_space ?? 0) + (spaces.code_large_object_space ?? 0) };
  }

  /** Sends a signal without waiting: the replica's death, as the bench means it. */
  kill(signal: Deno.Signal = "SIGKILL"): void {
    this.#killed = true;
    try {
      this.#child.kill(signal);
    } catch {
      // Exited already.
    }
    this.daemons.clear();
  }

  async [Symbol.asyncDispose](): Promise<void> {
    this.kill();
    await this.#exited;
    alive.delete(this.#child);
    if (this.#probe) await Deno.remove(this.#probe).catch(() => {});
    if (this.proxy) {
      await this.proxy[Symbol.asyncDispose]();
      await Deno.remove(this.kubeconfig);
    }
  }

  async #pump(stream: ReadableStream<Uint8Array>): Promise<void> {
    let pending = "";
    for await (const chunk of stream.pipeThrough(new TextDecoderStream())) {
      const parts = (pending + chunk).split("\n");
      pending = parts.pop() ?? "";
      for (const line of parts) this.#line(line);
    }
    if (pending) this.#line(pending);
  }

  #line(line: string): void {
    const daemon = line.match(/^daemon-(start|stop) (\S+) (\d+)$/);
    if (!daemon) {
      this.#lines.push(line);
      if (this.#lines.length > 200) this.#lines.shift();
      return;
    }
    const [, what, name, at] = daemon;
    if (this.#killed) return;
    if (what === "start") {
      this.daemons.set(name, Number(at));
      this.daemonStarts.push({ name, at: Number(at) });
    } else {
      this.daemons.delete(name);
    }
  }
}
