/**
 * `kopf run` as a subprocess against the shared cluster, as users run it: its output collected
 * line by line while it runs, waiting for lines, and stopping it politely (SIGTERM) or not (SIGKILL).
 *
 * @module
 */

import { testCluster } from "./cluster.ts";
import { eventually } from "./eventually.ts";

const CLI = new URL("../../cli/main.ts", import.meta.url).pathname;
const ROOT = new URL("../..", import.meta.url).pathname;

/** What a finished `kopf` command printed and how it exited. */
export interface KopfResult {
  code: number;
  stdout: string;
  stderr: string;
}

/**
 * Runs `kopf <args…>` to completion from the repository root with only the given environment
 * (plus `NO_COLOR`): no kubeconfig unless `env` names one.
 */
export async function runKopf(args: string[], env: Record<string, string> = {}): Promise<KopfResult> {
  const output = await new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", CLI, ...args],
    cwd: ROOT,
    env: { NO_COLOR: "1", ...env },
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).output();
  const decoder = new TextDecoder();
  return { code: output.code, stdout: decoder.decode(output.stdout), stderr: decoder.decode(output.stderr) };
}

/** The lines of an output that are not Deno's own download or warning noise. */
export function meaningful(text: string): string[] {
  return text.split("\n").filter(isMeaningful);
}

function isMeaningful(line: string): boolean {
  return line.trim() !== "" && !line.startsWith("Download ") && !line.startsWith("Warning");
}

/** A running `kopf run`. */
export class KopfProcess implements AsyncDisposable {
  /** Resolves with the exit status once the process has exited and its output is read. */
  readonly exited: Promise<Deno.CommandStatus>;
  readonly #child: Deno.ChildProcess;
  readonly #lines: string[] = [];
  /** The exit status once the process has exited and its output is read; `null` while it runs. */
  #status: Deno.CommandStatus | null = null;
  /** Whether the child leads a process group of its own ({@linkcode KopfProcess.task}). */
  readonly #group: boolean;

  private constructor(child: Deno.ChildProcess, group = false) {
    this.#child = child;
    this.#group = group;
    const pump = async (stream: ReadableStream<Uint8Array>) => {
      let pending = "";
      for await (const chunk of stream.pipeThrough(new TextDecoderStream())) {
        const parts = (pending + chunk).split("\n");
        pending = parts.pop() ?? "";
        this.#lines.push(...parts);
      }
      if (pending) this.#lines.push(pending);
    };
    const pumps = Promise.all([pump(child.stdout), pump(child.stderr)]);
    this.exited = child.status.then(async (status) => {
      await pumps;
      this.#status = status;
      return status;
    });
  }

  /**
   * Starts `kopf run --standalone -n <namespace> <args…>` from the repository root (so that a
   * handler file under `tests/fixtures/` imports `@kopf/kopf` from the checkout).
   */
  static start(namespace: string, args: string[], env: Record<string, string> = {}): Promise<KopfProcess> {
    return KopfProcess.command(["run", "--standalone", "-n", namespace, ...args], env);
  }

  /** Starts `kopf <args…>` as given (e.g. with peering options) from the repository root. */
  static async command(args: string[], env: Record<string, string> = {}): Promise<KopfProcess> {
    const { kubeconfig } = await testCluster();
    const child = new Deno.Command(Deno.execPath(), {
      args: ["run", "-A", CLI, ...args],
      cwd: ROOT,
      env: { NO_COLOR: "1", KUBECONFIG: kubeconfig, ...env },
      stdin: "null",
      stdout: "piped",
      stderr: "piped",
    }).spawn();
    return new KopfProcess(child);
  }

  /**
   * Starts `deno task kopf <args…>` as a terminal runs it: `deno task` and the operator under it
   * in a process group of their own (`setsid`; the group's id is the child's pid), so that
   * {@linkcode KopfProcess.signalGroup} reaches both, as a Ctrl+C in a terminal does.
   */
  static async task(args: string[], env: Record<string, string> = {}): Promise<KopfProcess> {
    const { kubeconfig } = await testCluster();
    const child = new Deno.Command("setsid", {
      args: [Deno.execPath(), "task", "kopf", ...args],
      cwd: ROOT,
      env: { NO_COLOR: "1", KUBECONFIG: kubeconfig, ...env },
      stdin: "null",
      stdout: "piped",
      stderr: "piped",
    }).spawn();
    return new KopfProcess(child, true);
  }

  /** Sends a signal without waiting for the exit; harmless if it has exited already. */
  signal(signal: Deno.Signal): void {
    try {
      this.#child.kill(signal);
    } catch {
      // It has exited already.
    }
  }

  /** Sends a signal to the process group of a {@linkcode KopfProcess.task} (all its processes) without waiting. */
  signalGroup(signal: Deno.Signal): void {
    if (!this.#group) throw new Error("Only a process started with KopfProcess.task() has a process group of its own.");
    try {
      Deno.kill(-this.#child.pid, signal);
    } catch {
      // The group has exited already.
    }
  }

  /** The output lines so far (stdout and stderr as they came), without Deno's download and warning noise. */
  get lines(): string[] {
    return this.#lines.filter(isMeaningful);
  }

  /** All output so far, for assertion messages. */
  get output(): string {
    return this.lines.join("\n");
  }

  /**
   * Waits for an output line matching the pattern (a generous bound, not a timing assertion); fails
   * at once, with the output, if the process exits without printing one.
   */
  async waitForLine(pattern: RegExp, seconds = 60): Promise<string> {
    const what = `a line matching ${pattern} in the output of kopf run`;
    const found = await eventually<{ line: string } | { exited: Deno.CommandStatus }>(what, () => {
      const line = this.lines.find((line) => pattern.test(line));
      if (line !== undefined) return { line };
      return this.#status === null ? undefined : { exited: this.#status };
    }, { seconds }).catch((error) => {
      throw new Error(`${error.message}\n--- output ---\n${this.output}`);
    });
    if ("line" in found) return found.line;
    throw new Error(`kopf exited (code ${found.exited.code}) before printing ${what}\n--- output ---\n${this.output}`);
  }

  /** Waits for the exit within a generous bound (not a timing assertion): an operator that idles fails the test. */
  async waitForExit(seconds = 60): Promise<Deno.CommandStatus> {
    let timer: ReturnType<typeof setTimeout> | undefined;
    const bound = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () => reject(new Error(`kopf has not exited within ${seconds} s\n--- output ---\n${this.output}`)),
        seconds * 1000,
      );
    });
    try {
      return await Promise.race([this.exited, bound]);
    } finally {
      clearTimeout(timer);
    }
  }

  /** Sends a signal (SIGTERM by default) and waits for the exit; harmless if it has exited already. */
  async stop(signal: Deno.Signal = "SIGTERM"): Promise<Deno.CommandStatus> {
    try {
      this.#child.kill(signal);
    } catch {
      // It has exited already.
    }
    return await this.exited;
  }

  async [Symbol.asyncDispose](): Promise<void> {
    // The whole group: `deno task`'s operator child too, which a SIGKILL of `deno task` leaves running.
    if (this.#group) this.signalGroup("SIGKILL");
    await this.stop("SIGKILL");
  }
}
