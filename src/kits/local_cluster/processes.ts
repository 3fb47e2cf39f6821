/**
 * One control-plane process of a LocalCluster: started with its output in a log file (never on
 * the test's stdout), stopped politely then forcibly, and able to explain its own failure with
 * the tail of that log.
 *
 * @module
 */

import { lastLines } from "./files.ts";

/** How long a process gets between SIGTERM and SIGKILL when stopped. */
export const DEFAULT_STOP_GRACE_MS = 10_000;

/** A running (or exited) child process whose stdout and stderr go to a log file. */
export class ManagedProcess {
  /** A short name for messages: `etcd`, `kube-apiserver`, ... */
  readonly name: string;
  /** The file that collects stdout and stderr. */
  readonly logPath: string;
  /**
   * Resolves when the process has exited and all its output is in the log file. Awaiting it
   * does not keep Deno running (the child is unref'd); {@linkcode ManagedProcess.wait} does.
   */
  readonly exited: Promise<Deno.CommandStatus>;
  #child: Deno.ChildProcess;
  #status: Deno.CommandStatus | undefined;

  private constructor(name: string, logPath: string, child: Deno.ChildProcess, pumps: Promise<void>) {
    this.name = name;
    this.logPath = logPath;
    this.#child = child;
    this.exited = child.status.then(async (status) => {
      this.#status = status;
      await pumps;
      return status;
    });
  }

  /** Starts `executable` with `args`, appending its stdout and stderr to `logPath`. */
  static async spawn(
    name: string,
    executable: string,
    args: string[],
    logPath: string,
  ): Promise<ManagedProcess> {
    // Two append-mode handles: the kernel keeps interleaved writes of both streams whole.
    const open = () => Deno.open(logPath, { create: true, append: true });
    const out = await open();
    const err = await open();
    let child: Deno.ChildProcess;
    try {
      child = new Deno.Command(executable, {
        args,
        stdin: "null",
        stdout: "piped",
        stderr: "piped",
      }).spawn();
    } catch (error) {
      out.close();
      err.close();
      throw new Error(`Cannot start ${name} from ${executable}: ${error}`, { cause: error });
    }
    // Pipes rather than inherited files have a side benefit: if this Deno process dies without
    // cleaning up, the Go programs die of SIGPIPE on their next log line instead of lingering.
    const pumps = Promise.all([pump(child.stdout, out), pump(child.stderr, err)])
      .then(() => undefined);
    // A running cluster alone must not keep Deno alive: a script that forgets stop() then ends
    // normally, and the exit handler kills the processes instead of the script hanging forever.
    child.unref();
    return new ManagedProcess(name, logPath, child, pumps);
  }

  /** The process id. */
  get pid(): number {
    return this.#child.pid;
  }

  /** Whether the process has not exited yet (as far as this process has noticed). */
  get running(): boolean {
    return this.#status === undefined;
  }

  /** The exit status, once exited. */
  get status(): Deno.CommandStatus | undefined {
    return this.#status;
  }

  /** Waits for the process to exit by itself, keeping Deno running meanwhile. */
  wait(): Promise<Deno.CommandStatus> {
    this.#child.ref();
    return this.exited;
  }

  /** Sends SIGTERM, waits up to `graceMs`, then SIGKILL; resolves when the process is gone. */
  async stop(graceMs: number = DEFAULT_STOP_GRACE_MS): Promise<void> {
    if (this.running) {
      this.#child.ref(); // Deno must wait for the exit we are about to cause.
      this.#signal("SIGTERM");
      let timer: ReturnType<typeof setTimeout> | undefined;
      const timedOut = new Promise<boolean>((resolve) => {
        timer = setTimeout(() => resolve(true), graceMs);
      });
      const gone = await Promise.race([this.exited.then(() => false), timedOut]);
      clearTimeout(timer);
      if (gone) this.#signal("SIGKILL");
    }
    await this.exited;
  }

  /** Kills synchronously, without waiting: for process-exit handlers, where nothing can be awaited. */
  killNow(): void {
    if (this.running) this.#signal("SIGKILL");
  }

  /** The last lines of the log file, or a note why it cannot be read. */
  async logTail(lines = 30): Promise<string> {
    try {
      return lastLines(await Deno.readTextFile(this.logPath), lines);
    } catch (error) {
      return `(cannot read ${this.logPath}: ${error})`;
    }
  }

  /** An Error whose message says what went wrong and ends with the tail of the log. */
  async failure(problem: string): Promise<Error> {
    return new Error(
      `${this.name} ${problem}. Last lines of its log (${this.logPath}):\n` +
        `${await this.logTail()}`,
    );
  }

  #signal(signal: Deno.Signal): void {
    try {
      this.#child.kill(signal);
    } catch (error) {
      // Exited between the check and the kill: nothing left to signal.
      if (!(error instanceof TypeError) && !(error instanceof Deno.errors.NotFound)) throw error;
    }
  }
}

/**
 * Copies a stream into a file chunk by chunk, then closes the file.
 *
 * Not `stream.pipeTo(file.writable)`: with a child's pipe, Deno 2.9 writes nothing to the file
 * until the child exits, so a hanging component's log would be empty when we need its tail.
 */
async function pump(stream: ReadableStream<Uint8Array>, file: Deno.FsFile): Promise<void> {
  try {
    for await (const chunk of stream) {
      let written = 0;
      while (written < chunk.length) written += await file.write(chunk.subarray(written));
    }
  } catch (error) {
    console.error(`LocalCluster: copying a process's output to its log failed: ${error}`);
  } finally {
    file.close();
  }
}
