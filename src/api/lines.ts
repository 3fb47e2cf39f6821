/**
 * Reading a streamed body line by line, with a limit on how long to wait for the next line: watch
 * responses are one JSON document per line, and a document may arrive in several chunks or several
 * documents in one chunk.
 *
 * The body is read directly (bytes, decoded here), not through `TextDecoderStream` and a line
 * splitting `TransformStream`: each line passing through two more streams, and a timer, a promise
 * race and an abort listener made per line, were ~10% of the operator's busy CPU in a profile of
 * 1,000 handled objects. Here one timer and one abort listener serve the whole response.
 *
 * A byte stream (what `fetch` gives) is read into one buffer of ours, reused for every read: its
 * default reader gets each chunk in a new 64 KiB buffer, allocated and zeroed per read -- per watch
 * event when events come one at a time -- whose garbage the collector then has to find. Ours starts
 * at 4 KiB and doubles while reads fill it (a listing, a burst of events), up to 64 KiB, and halves
 * while they take a quarter of it or less: the read that waits for a quiet stream's next event holds
 * the buffer, and an operator with a watch per namespace has many such streams (at 64 KiB each, 100
 * namespaces held 6.4 MiB of buffers).
 *
 * @module
 */

/** The longest delay a timer takes. */
const MAX_TIMER_MS = 2 ** 31 - 1;

/** The sizes of the buffer a byte stream is read into: the first and the least, and the most. */
const SMALLEST_BUFFER = 4 * 1024;
const LARGEST_BUFFER = 64 * 1024;

/** Why reading stopped before the body ended. */
export type LineInterruption = "timeout" | "aborted";

/**
 * The lines of a streamed body (without the line breaks, trimmed, empty lines dropped). A read
 * that waits longer than the limit for the next line, or a signal that aborts, ends the reading:
 * the body is cancelled and {@linkcode LineReader.next} says why.
 */
export class LineReader implements Disposable {
  readonly #reader: ReadableStreamBYOBReader | ReadableStreamDefaultReader<Uint8Array>;
  /** The buffer of a byte stream's reads (handed to each read and back), else `null`. */
  #buffer: ArrayBuffer | null = null;
  readonly #decoder = new TextDecoder();
  readonly #limit: number;
  readonly #detach = new AbortController();
  #pending = "";
  #lines: string[] = [];
  #next = 0;
  #interrupted: LineInterruption | null = null;
  /** When the wait for the current read began (`performance.now()`); `null` while not waiting. */
  #waitingSince: number | null = null;
  #timer: ReturnType<typeof setTimeout> | undefined;
  #ended = false;

  /**
   * @param body the streamed body; this reader takes it over (and cancels it when done).
   * @param seconds how long one read may wait for the next line; the time between reads (while
   *   the caller works on a line) does not count.
   * @param signal ends the reading when it aborts.
   */
  constructor(body: ReadableStream<Uint8Array>, seconds: number, signal: AbortSignal) {
    this.#reader = byobReaderOf(body) ?? body.getReader();
    if (this.#reader instanceof ReadableStreamBYOBReader) this.#buffer = new ArrayBuffer(SMALLEST_BUFFER);
    this.#limit = seconds * 1000;
    if (signal.aborted) {
      this.#interrupted = "aborted";
      return;
    }
    // Watched here, not left to the request's signal: once a fetch's Response has been collected, Deno no longer
    // carries that signal's abort to the body (a cut watch then streams on). Detached through an AbortController
    // (once per body, not per line): see signals.ts.
    signal.addEventListener("abort", () => this.#interrupt("aborted"), { once: true, signal: this.#detach.signal });
    this.#arm(this.#limit);
  }

  /**
   * The next line; `null` when the body has ended; `"timeout"` or `"aborted"` when reading stopped
   * for that reason (the body is cancelled then). A failing body throws its error.
   */
  async next(): Promise<string | null | LineInterruption> {
    for (;;) {
      if (this.#interrupted) return this.#interrupted;
      if (this.#next < this.#lines.length) return this.#lines[this.#next++];
      if (this.#ended) return null;
      this.#waitingSince = performance.now();
      let chunk: ReadableStreamReadResult<Uint8Array>;
      try {
        // Into the own buffer where there is one (it comes back with the bytes read). Read here, not by
        // a method of its own: one async call less per chunk (docs/performance/cpu.md, "Fewer functions,
        // a second pass").
        if (this.#reader instanceof ReadableStreamBYOBReader) {
          chunk = await this.#reader.read(new Uint8Array(this.#buffer!)) as ReadableStreamReadResult<Uint8Array>;
          // The buffer was transferred to the stream and comes back in the result's view (none if cancelled):
          // the next read goes into it, or into one twice as big when it was filled, or half as big when a
          // quarter of it sufficed (between 4 and 64 KiB; the bytes read stay in the old one, which is not reused).
          // Written out, not a helper's call per chunk.
          const read = chunk.value;
          if (read) {
            const buffer = read.buffer as ArrayBuffer;
            const size = buffer.byteLength;
            this.#buffer = read.byteLength >= size && size < LARGEST_BUFFER
              ? new ArrayBuffer(size * 2)
              : read.byteLength * 4 <= size && size > SMALLEST_BUFFER
              ? new ArrayBuffer(size / 2)
              : buffer;
          }
        } else {
          chunk = await this.#reader.read();
        }
      } catch (error) {
        if (this.#interrupted) return this.#interrupted;
        throw error;
      } finally {
        this.#waitingSince = null;
      }
      if (this.#interrupted) return this.#interrupted;
      if (chunk.done) this.#ended = true;
      const text = chunk.done ? this.#decoder.decode() + "\n" : this.#decoder.decode(chunk.value, { stream: true });
      // Split into lines here, not by a method of its own: once per chunk. Only the new text is searched:
      // a long line in many chunks is not scanned again and again.
      this.#lines = [];
      this.#next = 0;
      const pending = this.#pending + text;
      let start = 0;
      for (let end = pending.indexOf("\n", this.#pending.length); end >= 0; end = pending.indexOf("\n", start)) {
        const line = pending.slice(start, end).trim();
        if (line) this.#lines.push(line);
        start = end + 1;
      }
      this.#pending = pending.slice(start);
    }
  }

  /** Stops reading: cancels the body, the timer and the abort listener. */
  [Symbol.dispose](): void {
    clearTimeout(this.#timer);
    this.#detach.abort();
    this.#reader.cancel().catch(() => {});
  }

  /** One timer per body: when it fires, it checks how long the current read has waited, and re-arms. */
  #arm(delay: number): void {
    // Timers take at most 2^31-1 ms (longer ones fire at once): a longer limit is re-checked then.
    this.#timer = setTimeout(() => {
      const since = this.#waitingSince;
      const waited = since === null ? 0 : performance.now() - since;
      // A timer may fire a little early: a millisecond short of the limit counts as the limit.
      if (waited + 1 >= this.#limit) this.#interrupt("timeout");
      else this.#arm(this.#limit - waited);
    }, Math.min(delay, MAX_TIMER_MS));
  }

  #interrupt(why: LineInterruption): void {
    if (this.#interrupted) return;
    this.#interrupted = why;
    clearTimeout(this.#timer);
    // Cancelling settles a pending read at once (as done), whatever the connection underneath does.
    this.#reader.cancel().catch(() => {});
  }
}

/** A reader into buffers of ours, if the body is a byte stream; `null` for other streams. */
function byobReaderOf(body: ReadableStream<Uint8Array>): ReadableStreamBYOBReader | null {
  try {
    return body.getReader({ mode: "byob" });
  } catch {
    return null;
  }
}
