/**
 * The output of a child process as `KopfRunner` keeps it: stdout and stderr as text,
 * both interleaved line by line in arrival order, and listeners told of every complete line.
 *
 * @module
 */

/**
 * Collects the stdout and stderr of a child process while it runs.
 *
 * Lines are split on `\n` (a trailing `\r` is dropped); a last line without a newline is added
 * when its stream ends. Each stream is decoded on its own, so a line of stdout and a line of
 * stderr never mix even when their chunks arrive interleaved.
 *
 * @example
 * ```ts
 * import { OutputCollector } from "./runner_output.ts";
 *
 * const output = new OutputCollector();
 * const child = new Deno.Command(Deno.execPath(), {
 *   args: ["eval", "console.log('hello'); console.error('world')"],
 *   stdout: "piped",
 *   stderr: "piped",
 * }).spawn();
 * await Promise.all([output.collect(child.stdout, "stdout"), output.collect(child.stderr, "stderr"), child.status]);
 * console.log(output.lines); // ["hello", "world"] or ["world", "hello"]
 * ```
 */
export class OutputCollector {
  #stdout = "";
  #stderr = "";
  #output = "";
  readonly #lines: string[] = [];
  readonly #listeners: Set<(line: string) => void> = new Set();

  /** Both streams so far, line by line in arrival order, each line ending with `\n`. */
  get output(): string {
    return this.#output;
  }

  /** The stdout so far, exactly as received (decoded as UTF-8). */
  get stdout(): string {
    return this.#stdout;
  }

  /** The stderr so far, exactly as received (decoded as UTF-8). */
  get stderr(): string {
    return this.#stderr;
  }

  /** The complete lines of both streams so far, in arrival order, without line ends. */
  get lines(): readonly string[] {
    return this.#lines;
  }

  /**
   * Calls `listener` with every line completed from now on; returns a function that removes it.
   * A listener that throws is logged and removed.
   */
  onLine(listener: (line: string) => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  /** Reads a stream to its end, adding its text and lines; resolves when the stream is done. */
  async collect(stream: ReadableStream<Uint8Array>, which: "stdout" | "stderr"): Promise<void> {
    let pending = "";
    for await (const chunk of stream.pipeThrough(new TextDecoderStream())) {
      if (which === "stdout") this.#stdout += chunk;
      else this.#stderr += chunk;
      const parts = (pending + chunk).split("\n");
      pending = parts.pop() ?? "";
      for (const part of parts) this.#add(part);
    }
    if (pending) this.#add(pending);
  }

  #add(line: string): void {
    const text = line.endsWith("\r") ? line.slice(0, -1) : line;
    this.#lines.push(text);
    this.#output += `${text}\n`;
    for (const listener of [...this.#listeners]) {
      try {
        listener(text);
      } catch (error) {
        console.error(`KopfRunner: a listener of output lines failed and is removed: ${error}`);
        this.#listeners.delete(listener);
      }
    }
  }
}

/** The last `count` lines of a text, for error messages. */
export function tail(text: string, count: number): string {
  return text.trimEnd().split("\n").slice(-count).join("\n");
}
