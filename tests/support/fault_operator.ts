/**
 * The operator of the fault suite: `kopf run --standalone` on tests/fixtures/faults_handlers.ts as
 * a process of its own, with a liveness endpoint on a fixed port (the same after every restart),
 * its output appended to a log file (read after a failure), and its handlers' completions to a
 * ledger file that outlives it.
 *
 * @module
 */

const CLI = new URL("../../cli/main.ts", import.meta.url).pathname;
const ROOT = new URL("../..", import.meta.url).pathname;
const HANDLERS = "tests/fixtures/faults_handlers.ts";

/** Where and how the operator runs. */
export interface FaultOperatorOptions {
  /** The kubeconfig it connects with (the cluster's or a fault proxy's). */
  kubeconfig: string;
  /** The namespace it serves. */
  namespace: string;
  /** A folder for the ledger and the log. */
  directory: string;
  /** `settings.watching.unhealthyAfter` in seconds; the default (90 s) if absent. */
  unhealthyAfter?: number;
}

/** A `kopf run` that can be killed and started again; see the module's description. */
export class FaultOperator implements AsyncDisposable {
  /** The liveness endpoint's URL. */
  readonly liveness: string;
  /** The file the handlers append their completions to. */
  readonly ledger: string;
  /** The file the operator's output is appended to. */
  readonly log: string;
  /** How many times it has been started. */
  starts = 0;
  /** Every SIGKILL sent: to which process, when (ms since the epoch). */
  readonly kills: { pid: number; at: number }[] = [];
  readonly #options: FaultOperatorOptions;
  #child: Deno.ChildProcess | undefined;
  #exited: Promise<unknown> = Promise.resolve();

  constructor(options: FaultOperatorOptions) {
    this.#options = options;
    this.ledger = `${options.directory}/ledger.jsonl`;
    this.log = `${options.directory}/operator.log`;
    const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
    this.liveness = `http://127.0.0.1:${listener.addr.port}/healthz`;
    listener.close();
  }

  /** The process id of the running operator. */
  get pid(): number {
    if (!this.#child) throw new Error("The operator is not running: start() it first.");
    return this.#child.pid;
  }

  /** Starts the operator (again); the previous process must have exited. */
  async start(): Promise<void> {
    await this.#exited;
    const { kubeconfig, namespace, unhealthyAfter } = this.#options;
    const env: Record<string, string> = { NO_COLOR: "1", KUBECONFIG: kubeconfig, KOPF_FAULTS_LEDGER: this.ledger };
    if (unhealthyAfter !== undefined) env.KOPF_FAULTS_UNHEALTHY_AFTER = String(unhealthyAfter);
    const child = new Deno.Command(Deno.execPath(), {
      args: ["run", "-A", CLI, "run", "--standalone", "-n", namespace, "-L", this.liveness, HANDLERS],
      cwd: ROOT,
      env,
      stdin: "null",
      stdout: "piped",
      stderr: "piped",
    }).spawn();
    this.#child = child;
    this.starts++;
    await Deno.writeTextFile(this.log, `--- start ${this.starts} (pid ${child.pid}) ---\n`, { append: true });
    const append = (stream: ReadableStream<Uint8Array>) =>
      stream.pipeTo(new WritableStream({ write: (chunk) => Deno.writeFile(this.log, chunk, { append: true }) }));
    this.#exited = Promise.all([child.status, append(child.stdout), append(child.stderr)]);
  }

  /** Sends a signal and waits for the exit (SIGKILL: no cleanup, no release, nothing flushed). */
  async kill(signal: Deno.Signal = "SIGKILL"): Promise<void> {
    if (signal === "SIGKILL" && this.#child) this.kills.push({ pid: this.#child.pid, at: Date.now() });
    try {
      this.#child?.kill(signal);
    } catch {
      // It has exited already.
    }
    await this.#exited;
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.kill("SIGTERM");
  }
}
