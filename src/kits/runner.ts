/**
 * `KopfRunner`: the `kopf` command in a child process, for tests of operators -- its output
 * collected while it runs, waiting for lines, a bounded stop, and its failure re-raised.
 *
 * @module
 */

import { fileURLToPath } from "node:url";
import { onExit } from "./local_cluster/exit_guard.ts";
import { OutputCollector, tail } from "./runner_output.ts";
import {
  DEFAULT_READY_TIMEOUT,
  DEFAULT_STOP_TIMEOUT,
  KopfRunnerError,
  type KopfRunnerOptions,
  type KopfRunnerStopOptions,
  type KopfRunnerWaitOptions,
} from "./runner_options.ts";

/** How many last lines of the output error messages show. */
const TAIL_LINES = 40;

/** The CLI module of this checkout; JSR consumers pass `cli: "jsr:@kopf/cli"` instead (a separate package). */
const DEFAULT_CLI: URL = new URL("../../cli/main.ts", import.meta.url);

/**
 * Runs the `kopf` command (`deno run -A <cli> <args...>`) in a child process, e.g. an operator
 * against a test cluster, and collects its stdout and stderr while it runs.
 *
 * - {@linkcode KopfRunner.start} resolves once the process is spawned, or with `ready` once a
 *   matching line was printed (and rejects early, with the output, if the process exits first).
 * - {@linkcode KopfRunner.stop} sends SIGTERM (the operator stops gracefully and exits with 0),
 *   waits for the exit, and after `stopTimeout` seconds kills the process with SIGKILL.
 * - **Re-raising**: as Kopf's `KopfRunner`, a failure of the operator is raised when it stops.
 *   With `reraise` (the default), `stop()` rejects with {@linkcode KopfRunner.error} if the exit
 *   code is not 0; `await using` disposal does the same unless `stop()` already did (if the
 *   block itself threw, both errors reach the caller in a `SuppressedError`, so disposal also
 *   prints the failure to stderr). With `reraise: false`, read `exitCode` and `error` instead.
 * - The result -- {@linkcode KopfRunner.output}, {@linkcode KopfRunner.exitCode},
 *   {@linkcode KopfRunner.error} -- stays readable after the exit.
 *
 * A signal that arrives before the operator has installed its signal handlers (while the handler
 * files are still loading) ends the process with that signal: wait for something the operator
 * did (a `ready` line, an object's status) before stopping it if the exit code matters.
 *
 * Needs `--allow-run` (and `--allow-read`, `--allow-env`) in the test process.
 *
 * @example
 * ```ts ignore
 * import { KopfRunner, LocalCluster } from "@kopf/kopf/testing";
 *
 * await using cluster = await LocalCluster.start();
 * await using runner = await KopfRunner.start(
 *   ["run", "-A", "--standalone", "handlers.ts"],
 *   { kubeconfig: cluster.kubeconfig },
 * );
 * // ... create objects, wait for their status ...
 * await runner.waitFor("Handler 'createFn' succeeded.");
 * await runner.stop(); // rejects with runner.error if kopf exited with a non-zero code
 * console.log(runner.exitCode, runner.output);
 * ```
 */
export class KopfRunner implements AsyncDisposable {
  /** The arguments of `kopf`, as given to {@linkcode KopfRunner.start}. */
  readonly args: readonly string[];
  /**
   * Resolves with the exit status once the process has exited and all its output is collected;
   * never rejects (a failure is in {@linkcode KopfRunner.error}).
   */
  readonly exited: Promise<Deno.CommandStatus>;
  readonly #child: Deno.ChildProcess;
  readonly #output: OutputCollector = new OutputCollector();
  readonly #reraise: boolean;
  readonly #stopSignal: Deno.Signal;
  readonly #stopTimeout: number;
  #status: Deno.CommandStatus | undefined;
  #error: KopfRunnerError | undefined;
  #killed: { signal: Deno.Signal; seconds: number } | undefined;
  #stopping: Promise<void> | undefined;
  #raised = false;

  private constructor(args: string[], child: Deno.ChildProcess, options: KopfRunnerOptions) {
    this.args = Object.freeze([...args]);
    this.#child = child;
    this.#reraise = options.reraise ?? true;
    this.#stopSignal = options.stopSignal ?? "SIGTERM";
    this.#stopTimeout = options.stopTimeout ?? DEFAULT_STOP_TIMEOUT;
    const pumps = Promise.all([
      this.#output.collect(child.stdout, "stdout"),
      this.#output.collect(child.stderr, "stderr"),
    ]).catch((error) => {
      console.error(`KopfRunner: reading the output of ${this.#command} failed: ${error}`);
    });
    // If the test process exits while kopf still runs, kopf must not outlive it.
    const forget = onExit(() => this.#signal("SIGKILL"));
    this.exited = child.status.then(async (status) => {
      forget();
      await pumps;
      this.#status = status;
      this.#error = status.code === 0 ? undefined : this.#failure(status);
      return status;
    });
  }

  /**
   * Starts `kopf <args...>` in a child process. With `ready`, resolves once a matching output line
   * appears, or rejects (the process stopped) if it exits first or `readyTimeout` passes.
   *
   * @param args the arguments of `kopf`, e.g. `["run", "-A", "--standalone", "handlers.ts"]`.
   * @param options where and how to run it; see {@linkcode KopfRunnerOptions}.
   *
   * @example
   * ```ts ignore
   * await using runner = await KopfRunner.start(["run", "-n", "ns1", "--standalone", "handlers.ts"], {
   *   kubeconfig: cluster.kubeconfig,
   *   ready: "Handler 'startup' succeeded.",
   * });
   * ```
   */
  static async start(args: string[], options: KopfRunnerOptions = {}): Promise<KopfRunner> {
    const cli = options.cli ?? DEFAULT_CLI;
    const module = cli instanceof URL && cli.protocol === "file:" ? fileURLToPath(cli) : String(cli);
    const env: Record<string, string> = { NO_COLOR: "1", ...options.env };
    if (options.kubeconfig !== undefined) env.KUBECONFIG = options.kubeconfig;
    let child: Deno.ChildProcess;
    try {
      child = new Deno.Command(Deno.execPath(), {
        args: ["run", ...(options.denoArgs ?? ["-A"]), module, ...args],
        cwd: options.cwd,
        env,
        stdin: "null",
        stdout: "piped",
        stderr: "piped",
      }).spawn();
    } catch (error) {
      throw new Error(
        `Cannot start kopf ${args.join(" ")} (${Deno.execPath()} run ${module}` +
          `${options.cwd ? ` in ${options.cwd}` : ""}): ${error}`,
        { cause: error },
      );
    }
    const runner = new KopfRunner(args, child, options);
    if (options.ready === undefined) return runner;
    try {
      await runner.waitFor(options.ready, options.readyTimeout ?? DEFAULT_READY_TIMEOUT);
      return runner;
    } catch (problem) {
      const exitedEarly = runner.#status !== undefined;
      await runner.stop({ reraise: false });
      throw exitedEarly && runner.#error ? runner.#error : problem;
    }
  }

  /** The process id of the child (`deno run`). */
  get pid(): number {
    return this.#child.pid;
  }

  /** Whether the process has not exited yet (or its output is not fully read yet). */
  get running(): boolean {
    return this.#status === undefined;
  }

  /**
   * Everything printed so far, stdout and stderr interleaved line by line in arrival order (each
   * line ending with `\n`); grows while the process runs.
   */
  get output(): string {
    return this.#output.output;
  }

  /** The complete output lines so far, stdout and stderr in arrival order. */
  get lines(): readonly string[] {
    return this.#output.lines;
  }

  /** The stdout so far, as received. */
  get stdout(): string {
    return this.#output.stdout;
  }

  /** The stderr so far, as received (the operator's log goes here). */
  get stderr(): string {
    return this.#output.stderr;
  }

  /** The exit status, once the process has exited; `undefined` while it runs. */
  get status(): Deno.CommandStatus | undefined {
    return this.#status;
  }

  /** The exit code, once the process has exited (0 on success); `undefined` while it runs. */
  get exitCode(): number | undefined {
    return this.#status?.code;
  }

  /** Whether a stop had to kill the process with SIGKILL because it did not exit in time. */
  get killed(): boolean {
    return this.#killed !== undefined && this.#status?.code !== 0;
  }

  /**
   * After a non-zero exit: what happened, with the last lines of the output. `undefined` while
   * the process runs and after a successful exit (code 0).
   */
  get error(): KopfRunnerError | undefined {
    return this.#error;
  }

  /**
   * Waits for an output line matching `pattern` (a string matches as a substring), including
   * lines printed before the call unless `options.after` skips them; resolves with that line.
   * Rejects, with the tail of the output, when `seconds` pass (a bound for hangs, not a timing) or
   * the process exits without it.
   *
   * @example
   * ```ts ignore
   * const line = await runner.waitFor(/Handler 'createFn' (succeeded|failed)/, 30);
   * // The next run of a timer, not one that has been logged already:
   * await runner.waitFor("Timer 'check' succeeded.", 60, { after: runner.lines.length });
   * ```
   */
  waitFor(pattern: RegExp | string, seconds: number = 60, options: KopfRunnerWaitOptions = {}): Promise<string> {
    const matches = matcher(pattern);
    const after = options.after ?? 0;
    const what = after > 0 ? `${describe(pattern)} after the first ${after} lines` : describe(pattern);
    const earlier = this.lines.slice(after).find(matches);
    if (earlier !== undefined) return Promise.resolve(earlier);
    return new Promise<string>((resolve, reject) => {
      let settled = false;
      const settle = (action: () => void) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        forget();
        action();
      };
      const forget = this.#output.onLine((line) => {
        // The collector has added the line already: its index is the last one.
        if (this.lines.length > after && matches(line)) settle(() => resolve(line));
      });
      const timer = setTimeout(() => {
        settle(() => reject(new Error(`Timed out after ${seconds} s waiting for ${what} from ${this.#explained()}`)));
      }, seconds * 1000);
      // All lines are delivered before `exited` resolves: a last matching line wins over the exit.
      this.exited.then((status) => {
        settle(() =>
          reject(
            new Error(
              `${this.#command} exited with code ${status.code} before printing ${what}. ${this.#tail()}`,
              { cause: this.#error },
            ),
          )
        );
      });
    });
  }

  /**
   * Stops the process: sends the signal (SIGTERM unless told otherwise), waits for the exit, and
   * after the timeout sends SIGKILL (then {@linkcode KopfRunner.killed} is true). Harmless after
   * the process has exited by itself. With `reraise` (the default), rejects with
   * {@linkcode KopfRunner.error} if the exit code is not 0.
   *
   * @example
   * ```ts ignore
   * await runner.stop();
   * assert.equal(runner.exitCode, 0);
   * ```
   */
  async stop(options: KopfRunnerStopOptions = {}): Promise<void> {
    this.#stopping ??= this.#terminate(options.signal ?? this.#stopSignal, options.timeout ?? this.#stopTimeout);
    await this.#stopping;
    if ((options.reraise ?? this.#reraise) && this.#error) {
      this.#raised = true;
      throw this.#error;
    }
  }

  /**
   * Stops the process as {@linkcode KopfRunner.stop} does, and re-raises its failure unless
   * `stop()` already did. The failure is also printed to stderr: when the block threw too,
   * JavaScript combines both into a `SuppressedError`, which Deno's test reporter shows without
   * either message.
   */
  async [Symbol.asyncDispose](): Promise<void> {
    const reraise = this.#reraise && !this.#raised;
    await this.stop({ reraise: false });
    if (reraise && this.#error) {
      this.#raised = true;
      console.error(`KopfRunner: ${this.#error.message}`);
      throw this.#error;
    }
  }

  async #terminate(signal: Deno.Signal, seconds: number): Promise<void> {
    if (this.#status === undefined) {
      this.#signal(signal);
      let timer: ReturnType<typeof setTimeout> | undefined;
      const late = await Promise.race([
        this.exited.then(() => false),
        new Promise<boolean>((resolve) => timer = setTimeout(() => resolve(true), seconds * 1000)),
      ]);
      clearTimeout(timer);
      if (late) {
        this.#killed = { signal, seconds };
        this.#signal("SIGKILL");
      }
    }
    await this.exited;
  }

  #signal(signal: Deno.Signal): void {
    try {
      this.#child.kill(signal);
    } catch (error) {
      // Exited (and reaped) already: nothing left to signal.
      if (!(error instanceof TypeError) && !(error instanceof Deno.errors.NotFound)) throw error;
    }
  }

  get #command(): string {
    return `kopf ${this.args.join(" ")}`.trimEnd();
  }

  #tail(): string {
    const output = this.output;
    return output.trim() ? `Last lines of its output:\n${tail(output, TAIL_LINES)}` : "It printed nothing.";
  }

  #explained(): string {
    return `${this.#command}. ${this.#tail()}`;
  }

  #failure(status: Deno.CommandStatus): KopfRunnerError {
    const killed = this.#killed;
    const how = killed
      ? `did not stop within ${killed.seconds} s after ${killed.signal} and was killed with SIGKILL (exit code ${status.code})`
      : status.signal
      ? `was ended by ${status.signal} (exit code ${status.code})`
      : `exited with code ${status.code}`;
    return new KopfRunnerError(`${this.#command} ${how}. ${this.#tail()}`, {
      exitCode: status.code,
      signal: status.signal,
      killed: killed !== undefined,
      output: this.output,
    });
  }
}

/** How a pattern reads in messages: `a line containing "..."` or `a line matching /.../`. */
function describe(pattern: RegExp | string): string {
  return typeof pattern === "string" ? `a line containing ${JSON.stringify(pattern)}` : `a line matching ${pattern}`;
}

/** A line predicate: a substring for strings, a test without `g`/`y` state for regular expressions. */
function matcher(pattern: RegExp | string): (line: string) => boolean {
  if (typeof pattern === "string") return (line) => line.includes(pattern);
  const regexp = new RegExp(pattern.source, pattern.flags.replace(/[gy]/g, ""));
  return (line) => regexp.test(line);
}
