/**
 * Splitting a streamed body into lines: watch responses are one JSON document per line, and a
 * document may arrive in several chunks or several documents in one chunk.
 *
 * @module
 */

/** A stream transformer from text chunks to whole lines (without the line breaks; empty lines dropped). */
export class LineSplitter extends TransformStream<string, string> {
  /** Creates the transformer; pipe a `TextDecoderStream`'s output through it. */
  constructor() {
    let pending = "";
    super({
      transform(chunk, controller) {
        pending += chunk;
        let start = 0;
        for (let end = pending.indexOf("\n"); end >= 0; end = pending.indexOf("\n", start)) {
          const line = pending.slice(start, end).trim();
          if (line) controller.enqueue(line);
          start = end + 1;
        }
        pending = pending.slice(start);
      },
      flush(controller) {
        const line = pending.trim();
        if (line) controller.enqueue(line);
      },
    });
  }
}
