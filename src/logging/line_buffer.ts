/**
 * Log lines written in batches, asynchronously: a synchronous write per line (`console.error`)
 * stalls the whole operator while the reader of stderr (a terminal, a container runtime, a pipe
 * nobody drains) is slow, and costs a system call and console formatting per line -- ~4% of the
 * CPU of 1,000 handled objects in a profile, two lines each.
 *
 * Lines wait at most a bounded delay, or until enough of them are pending; one write is under way
 * at a time, so the order is kept. Nothing is lost on a graceful stop: {@linkcode LineBuffer.flush}
 * waits for every line, and the lines still waiting for a batch when the process exits
 * (`Deno.exit()` and uncaught errors included) are written synchronously then.
 *
 * @module
 */

/** Where the batches go: an asynchronous write for the normal course, a synchronous one at exit. */
export interface LineOutput {
  /** Writes some bytes; may write fewer than given and say how many (as `Deno.stderr.write`). */
  write(bytes: Uint8Array): Promise<number>;
  /** Writes some bytes at once, blocking; may write fewer than given and say how many. */
  writeSync(bytes: Uint8Array): number;
}

/** Options of a {@linkcode LineBuffer}. */
export interface LineBufferOptions {
  /**
   * Milliseconds a line waits at most before its batch is written; 50 by default. Longer batches
   * wake the event loop less (250 ms saved ~5% of the CPU at 250 objects per second), but a line
   * then lags behind the writes it tells of: whoever sees a handler's result on the object expects
   * its line in the log, and a killed process loses what waits.
   */
  delay?: number;
  /** Characters pending that start a write at once; 64 Ki by default. */
  size?: number;
}

const encoder = new TextEncoder();

interface Batch {
  readonly bytes: Uint8Array;
  written: number;
}

/** Lines collected and written to an output in batches, in their order. */
export class LineBuffer {
  readonly #output: LineOutput;
  readonly #delay: number;
  readonly #size: number;
  #pending: string[] = [];
  #pendingSize = 0;
  #timer: ReturnType<typeof setTimeout> | undefined;
  /** The batch being written asynchronously, and what of it is written already. */
  #writing: Batch | undefined;
  #done: Promise<void> = Promise.resolve();

  /**
   * @param output Where the lines go.
   * @param options The delay and size bounds of a batch.
   */
  constructor(output: LineOutput, options: LineBufferOptions = {}) {
    this.#output = output;
    this.#delay = options.delay ?? 50;
    this.#size = options.size ?? 65536;
  }

  /** Adds one line (without its line break); returns at once. */
  write(line: string): void {
    this.#pending.push(line);
    this.#pendingSize += line.length + 1;
    if (this.#pendingSize >= this.#size) this.#start();
    else if (this.#timer === undefined && !this.#writing) {
      const timer = setTimeout(() => this.#start(), this.#delay);
      // A pending line does not keep the process alive: the exit writes it (see `flushSync`).
      Deno.unrefTimer(timer);
      this.#timer = timer;
    }
  }

  /** Waits until every line added so far is written. */
  async flush(): Promise<void> {
    while (this.#writing || this.#pending.length) {
      if (!this.#writing) this.#start();
      await this.#done;
    }
  }

  /**
   * Writes the lines that wait for a batch, synchronously: for the exit, when no timer will fire.
   * A batch already handed to the output is left to its write (by then, usually complete): writing
   * it again could print it twice.
   */
  flushSync(): void {
    this.#cancelTimer();
    if (!this.#pending.length) return;
    const text = this.#take();
    let bytes = encoder.encode(text);
    while (bytes.length) bytes = bytes.subarray(this.#output.writeSync(bytes));
  }

  #start(): void {
    this.#cancelTimer();
    if (this.#writing || !this.#pending.length) return;
    const batch = { bytes: encoder.encode(this.#take()), written: 0 };
    this.#writing = batch;
    this.#done = this.#drain(batch);
  }

  async #drain(batch: Batch): Promise<void> {
    try {
      while (batch.written < batch.bytes.length) {
        batch.written += await this.#output.write(batch.bytes.subarray(batch.written));
      }
    } catch {
      // Nowhere to report a failing log output: the lines of this batch are dropped, not the next ones.
    }
    this.#writing = undefined;
    if (this.#pending.length) this.#start();
  }

  #take(): string {
    const text = this.#pending.join("\n") + "\n";
    this.#pending = [];
    this.#pendingSize = 0;
    return text;
  }

  #cancelTimer(): void {
    if (this.#timer === undefined) return;
    clearTimeout(this.#timer);
    this.#timer = undefined;
  }
}

let stderr: LineBuffer | undefined;

/**
 * The process's buffered stderr, created on first use: the default destination of the log lines.
 * It is written out synchronously when the process exits, `Deno.exit()` and uncaught errors included.
 */
export function stderrLines(): LineBuffer {
  if (stderr) return stderr;
  const buffer = new LineBuffer(Deno.stderr);
  const flushSync = () => buffer.flushSync();
  globalThis.addEventListener("unload", flushSync);
  globalThis.addEventListener("error", flushSync);
  globalThis.addEventListener("unhandledrejection", flushSync);
  stderr = buffer;
  return buffer;
}

/** Waits until the lines given to the process's buffered stderr so far are written (none if it is unused). */
export function flushStderrLines(): Promise<void> {
  return stderr?.flush() ?? Promise.resolve();
}
