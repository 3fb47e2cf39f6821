/**
 * What `KopfRunner` (runner.ts) is told -- how to start, wait and stop -- and what it raises when
 * the `kopf` process fails.
 *
 * @module
 */

/** How long {@linkcode KopfRunner.start} waits for the `ready` line unless told otherwise, in seconds. */
export const DEFAULT_READY_TIMEOUT = 60;

/** How long {@linkcode KopfRunner.stop} waits after the signal before SIGKILL unless told otherwise, in seconds. */
export const DEFAULT_STOP_TIMEOUT = 30;

/**
 * Options of {@linkcode KopfRunner.start}.
 *
 * @example
 * ```ts ignore
 * import { KopfRunner, type KopfRunnerOptions } from "@kopf/kopf/testing";
 *
 * const options: KopfRunnerOptions = {
 *   kubeconfig: "/tmp/kubeconfig",
 *   ready: /Handler 'createFn' succeeded/,
 *   stopTimeout: 10,
 * };
 * await using runner = await KopfRunner.start(["run", "-n", "default", "--standalone", "handlers.ts"], options);
 * ```
 */
export interface KopfRunnerOptions {
  /** The kubeconfig file for the operator (set as `KUBECONFIG`); the inherited `KUBECONFIG` otherwise. */
  kubeconfig?: string;
  /**
   * Extra environment variables, added to the inherited ones. `NO_COLOR=1` is set unless given
   * here; `kubeconfig` wins over a `KUBECONFIG` given here.
   */
  env?: Record<string, string>;
  /** The working directory of the process (handler files are relative to it); the current one otherwise. */
  cwd?: string | URL;
  /**
   * The CLI module that `deno run` runs: a path, a `file:` URL or a specifier. The default is the
   * CLI beside this module in a checkout of kopf; the CLI is a separate JSR package, so code that
   * imports `@kopf/kopf/testing` from JSR passes `cli: "jsr:@kopf/cli"` (or a local copy).
   */
  cli?: string | URL;
  /** Arguments of `deno run` before the CLI module: permissions and flags. Default: `["-A"]`. */
  denoArgs?: string[];
  /**
   * Waits in {@linkcode KopfRunner.start} for an output line matching this pattern (a string
   * matches as a substring). Without it, `start()` resolves as soon as the process is spawned.
   */
  ready?: RegExp | string;
  /** How long to wait for the `ready` line, in seconds (a bound for hangs, not a timing). Default: 60. */
  readyTimeout?: number;
  /** The signal that {@linkcode KopfRunner.stop} sends by default. Default: `"SIGTERM"`. */
  stopSignal?: Deno.Signal;
  /** Seconds that `stop()` waits after the signal before it sends SIGKILL. Default: 30. */
  stopTimeout?: number;
  /**
   * Whether {@linkcode KopfRunner.stop} (and disposal) rejects with {@linkcode KopfRunner.error}
   * when the process exited with a non-zero code, as Kopf's runner re-raises the operator's
   * exception. Default: `true`.
   */
  reraise?: boolean;
}

/**
 * Options of one {@linkcode KopfRunner.stop} call; each defaults to the runner's own option.
 *
 * @example
 * ```ts ignore
 * await runner.stop({ signal: "SIGINT", timeout: 5, reraise: false });
 * ```
 */
export interface KopfRunnerStopOptions {
  /** The signal to send. Default: the runner's `stopSignal` (SIGTERM). */
  signal?: Deno.Signal;
  /** Seconds to wait after the signal before SIGKILL. Default: the runner's `stopTimeout` (30). */
  timeout?: number;
  /** Whether to reject with {@linkcode KopfRunner.error} after a non-zero exit. Default: the runner's `reraise`. */
  reraise?: boolean;
}

/**
 * Options of one {@linkcode KopfRunner.waitFor} call.
 *
 * @example
 * ```ts ignore
 * const mark = runner.lines.length;
 * await api.patch("kopfexamples", "x", { spec: { size: 2 } }, { namespace: "default" });
 * await runner.waitFor("Handler 'resize' succeeded.", 60, { after: mark }); // not the one of the creation
 * ```
 */
export interface KopfRunnerWaitOptions {
  /**
   * Ignores the first `after` lines of {@linkcode KopfRunner.lines}: only a line printed after
   * them matches. `runner.lines.length` taken before an action waits for a line the action causes
   * (a timer's next run, a handler's next call), not for an earlier one. Default: 0, every line.
   */
  after?: number;
}

/**
 * How a `kopf` process run by {@linkcode KopfRunner} failed: a non-zero exit code, a signal, or
 * a stop that had to resort to SIGKILL. The message ends with the last lines of the output.
 *
 * @example
 * ```ts ignore
 * import { KopfRunner, KopfRunnerError } from "@kopf/kopf/testing";
 *
 * const runner = await KopfRunner.start(["run", "-A", "broken.ts"]);
 * try {
 *   await runner.stop();
 * } catch (error) {
 *   if (error instanceof KopfRunnerError) console.log(error.exitCode, error.output);
 * }
 * ```
 */
export class KopfRunnerError extends Error {
  /** The exit code (128 + the signal's number when a signal ended the process). */
  readonly exitCode: number;
  /** The signal that ended the process, if one did. */
  readonly signal: Deno.Signal | null;
  /** Whether the runner killed the process with SIGKILL because it did not stop in time. */
  readonly killed: boolean;
  /** The whole output (stdout and stderr, line by line). */
  readonly output: string;

  /** Builds the error; the message should end with the tail of `output`. */
  constructor(
    message: string,
    details: { exitCode: number; signal: Deno.Signal | null; killed: boolean; output: string },
  ) {
    super(message);
    this.name = "KopfRunnerError";
    this.exitCode = details.exitCode;
    this.signal = details.signal;
    this.killed = details.killed;
    this.output = details.output;
  }
}
