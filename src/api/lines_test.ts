import assert from "node:assert/strict";
import { LineReader } from "./lines.ts";

const encoder = new TextEncoder();

/** A body that delivers the chunks, then stays open (`open`) or ends. */
function body(chunks: Uint8Array[], open = false): ReadableStream<Uint8Array> {
  return new ReadableStream({
    pull(controller) {
      const chunk = chunks.shift();
      if (chunk) controller.enqueue(chunk);
      else if (!open) controller.close();
      else return new Promise(() => {});
    },
  });
}

async function all(reader: LineReader): Promise<(string | null)[]> {
  const lines: (string | null)[] = [];
  for (;;) {
    const line = await reader.next();
    lines.push(line);
    if (line === null || line === "timeout" || line === "aborted") return lines;
  }
}

Deno.test("lines split across chunks, several in one chunk, a last one without a break, blanks dropped", async () => {
  const bytes = encoder.encode('{"a":"é"}\n\n  {"b":2}\r\n{"c"');
  // Split inside the two-byte "é": the decoder keeps the half character for the next chunk.
  const split = bytes.indexOf(0xc3) + 1;
  using reader = new LineReader(
    body([bytes.slice(0, split), bytes.slice(split), encoder.encode(":3}")]),
    10,
    new AbortController().signal,
  );
  assert.deepEqual(await all(reader), ['{"a":"é"}', '{"b":2}', '{"c":3}', null]);
});

Deno.test("a read that waits longer than the limit ends with a timeout", async () => {
  using reader = new LineReader(body([encoder.encode("one\n")], true), 0.05, new AbortController().signal);
  assert.deepEqual(await all(reader), ["one", "timeout"]);
});

Deno.test("the time the caller spends between reads does not count towards the limit", async () => {
  using reader = new LineReader(
    body([encoder.encode("one\n"), encoder.encode("two\n")]),
    0.05,
    new AbortController().signal,
  );
  assert.deepEqual(await reader.next(), "one");
  await new Promise((resolve) => setTimeout(resolve, 120));
  assert.deepEqual(await all(reader), ["two", null]);
});

Deno.test("an abort ends a pending read at once, and a reader made after it reads nothing", async () => {
  const controller = new AbortController();
  using reader = new LineReader(body([], true), 60, controller.signal);
  const pending = reader.next();
  controller.abort();
  assert.deepEqual(await pending, "aborted");
  using late = new LineReader(body([encoder.encode("x\n")]), 60, controller.signal);
  assert.deepEqual(await late.next(), "aborted");
});

Deno.test("a failing body throws its error", async () => {
  const failing = new ReadableStream<Uint8Array>({
    start(controller) {
      controller.enqueue(encoder.encode("one\n"));
      controller.error(new Error("connection reset"));
    },
  });
  using reader = new LineReader(failing, 60, new AbortController().signal);
  await assert.rejects(() => all(reader), /connection reset/);
});

Deno.test("a limit longer than a timer can hold does not end the reading at once", async () => {
  const body = new ReadableStream<Uint8Array>({
    async start(controller) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      controller.enqueue(encoder.encode("late\n"));
      controller.close();
    },
  });
  using reader = new LineReader(body, 1e8, new AbortController().signal);
  assert.deepEqual(await all(reader), ["late", null]);
});

Deno.test("a byte stream is read into the reader's own buffer, and lines split across its reads", async () => {
  const chunks = [encoder.encode('{"a":1}\n{"b"'), encoder.encode(":2}\n"), encoder.encode('{"c":3}\n')];
  // No automatic allocation: a read without a buffer of the reader's own would find no BYOB request.
  const sizes: number[] = [];
  const bytes = new ReadableStream({
    type: "bytes",
    pull(controller) {
      const request = controller.byobRequest;
      if (!request?.view) throw new Error("a read without a buffer");
      sizes.push(request.view.byteLength);
      const chunk = chunks.shift();
      if (!chunk) {
        controller.close();
        request.respond(0);
        return;
      }
      new Uint8Array(request.view.buffer, request.view.byteOffset).set(chunk);
      request.respond(chunk.length);
    },
  });
  using reader = new LineReader(bytes, 10, new AbortController().signal);
  assert.deepEqual(await all(reader), ['{"a":1}', '{"b":2}', '{"c":3}', null]);
  // Every read got the whole buffer back: nothing is kept from one read to the next.
  assert.deepEqual(sizes, [4096, 4096, 4096, 4096]);
});

Deno.test("the buffer grows while reads fill it, up to 64 KiB, and shrinks while they take little of it", async () => {
  // 160 KiB of lines at once (a listing), then events one at a time.
  const line = (index: number) => `{"n":"${String(index).padStart(8, "0")}","pad":"${"x".repeat(1000)}"}\n`;
  const burst = encoder.encode(Array.from({ length: 160 }, (_, index) => line(index)).join(""));
  const events = Array.from({ length: 6 }, (_, index) => encoder.encode(line(1000 + index)));
  let offset = 0;
  const sizes: number[] = [];
  const bytes = new ReadableStream({
    type: "bytes",
    pull(controller) {
      const request = controller.byobRequest!;
      const view = request.view!;
      sizes.push(view.byteLength);
      const chunk = offset < burst.length ? burst.subarray(offset, offset + view.byteLength) : events.shift();
      if (offset < burst.length) offset += chunk!.length;
      if (!chunk) {
        controller.close();
        request.respond(0);
        return;
      }
      new Uint8Array(view.buffer, view.byteOffset).set(chunk);
      request.respond(chunk.length);
    },
  });
  using reader = new LineReader(bytes, 10, new AbortController().signal);
  const lines = await all(reader);
  assert.equal(lines.length, 160 + 6 + 1);
  assert.deepEqual(lines.slice(0, 166).map((text) => Number(JSON.parse(text!).n)), [
    ...Array.from({ length: 160 }, (_, index) => index),
    ...Array.from({ length: 6 }, (_, index) => 1000 + index),
  ]);
  // The burst fills each read: doubled up to the largest. The second read of 64 KiB takes the burst's last 39 KiB,
  // more than a quarter: kept. Events of ~1 KiB, one per read: halved down to the smallest. Then the end.
  const expected = [[4, 8, 16, 32, 64], [64], [64, 32, 16, 8, 4, 4], [4]].flat();
  assert.deepEqual(sizes.map((size) => size / 1024), expected);
});

Deno.test("a byte stream cancelled during a read ends with the interruption", async () => {
  const controller = new AbortController();
  const bytes = new ReadableStream({ type: "bytes", pull: () => new Promise<void>(() => {}) });
  using reader = new LineReader(bytes, 60, controller.signal);
  const pending = reader.next();
  controller.abort();
  assert.deepEqual(await pending, "aborted");
});
