import assert from "node:assert/strict";
import { LineBuffer, type LineOutput } from "./line_buffer.ts";

/** An output that takes at most `chunk` bytes per write and answers each asynchronous write only when released. */
class SlowOutput implements LineOutput {
  readonly written: string[] = [];
  readonly synchronous: string[] = [];
  writes = 0;
  #release: (() => void)[] = [];
  constructor(readonly chunk = Infinity, readonly held = false) {}
  write(bytes: Uint8Array): Promise<number> {
    this.writes++;
    const size = Math.min(bytes.length, this.chunk);
    const text = new TextDecoder().decode(bytes.subarray(0, size));
    if (!this.held) {
      this.written.push(text);
      return Promise.resolve(size);
    }
    return new Promise((resolve) =>
      this.#release.push(() => {
        this.written.push(text);
        resolve(size);
      })
    );
  }
  writeSync(bytes: Uint8Array): number {
    const size = Math.min(bytes.length, this.chunk);
    this.synchronous.push(new TextDecoder().decode(bytes.subarray(0, size)));
    return size;
  }
  release(): void {
    for (const release of this.#release.splice(0)) release();
  }
  get heldWrites(): number {
    return this.#release.length;
  }
}

Deno.test("lines written together become one write, in order, after the delay", async () => {
  const output = new SlowOutput();
  const buffer = new LineBuffer(output, { delay: 20 });
  buffer.write("one");
  buffer.write("two");
  buffer.write("three");
  assert.equal(output.writes, 0, "nothing is written while the caller goes on");
  await new Promise((resolve) => setTimeout(resolve, 60));
  assert.deepEqual(output.written, ["one\ntwo\nthree\n"]);
  assert.equal(output.writes, 1);
});

Deno.test("a full batch starts at once, without waiting for the delay", async () => {
  const output = new SlowOutput();
  const buffer = new LineBuffer(output, { delay: 60_000, size: 10 });
  buffer.write("12345");
  buffer.write("67890");
  assert.equal(output.writes, 1);
  await buffer.flush();
  assert.deepEqual(output.written, ["12345\n67890\n"]);
});

Deno.test("a slow output does not block the writer; lines added meanwhile follow in the next batch", async () => {
  const output = new SlowOutput(Infinity, true);
  const buffer = new LineBuffer(output, { delay: 60_000 });
  buffer.write("first");
  const flushed = buffer.flush();
  assert.equal(output.heldWrites, 1);
  for (let index = 0; index < 1000; index++) buffer.write(`line ${index}`);
  assert.equal(output.writes, 1, "one write at a time");
  let done = false;
  flushed.then(() => done = true);
  while (!done) {
    output.release();
    await new Promise((resolve) => setTimeout(resolve, 0));
  }
  assert.equal(
    output.written.join(""),
    ["first", ...Array.from({ length: 1000 }, (_, i) => `line ${i}`)].join("\n") + "\n",
  );
  assert.equal(output.writes, 2);
});

Deno.test("partial writes go on until the whole batch is out", async () => {
  const output = new SlowOutput(4);
  const buffer = new LineBuffer(output, { delay: 60_000 });
  buffer.write("abcdefghij");
  await buffer.flush();
  assert.deepEqual(output.written, ["abcd", "efgh", "ij\n"]);
});

Deno.test("flushSync writes the waiting lines at once, and they are not written again", async () => {
  const output = new SlowOutput(3);
  const buffer = new LineBuffer(output, { delay: 20 });
  buffer.write("last");
  buffer.write("words");
  buffer.flushSync();
  assert.equal(output.synchronous.join(""), "last\nwords\n");
  await new Promise((resolve) => setTimeout(resolve, 60));
  await buffer.flush();
  assert.deepEqual(output.written, []);
});

Deno.test("a failing output loses that batch only", async () => {
  let fail = true;
  const written: string[] = [];
  const buffer = new LineBuffer({
    write: (bytes) => {
      if (fail) return Promise.reject(new Error("EPIPE"));
      written.push(new TextDecoder().decode(bytes));
      return Promise.resolve(bytes.length);
    },
    writeSync: (bytes) => bytes.length,
  }, { delay: 60_000 });
  buffer.write("lost");
  await buffer.flush();
  fail = false;
  buffer.write("kept");
  await buffer.flush();
  assert.deepEqual(written, ["kept\n"]);
});

Deno.test("the process's stderr lines are all out when the process exits at once with Deno.exit()", async () => {
  const module = new URL("./line_buffer.ts", import.meta.url).href;
  const script = `import { stderrLines } from ${JSON.stringify(module)};
    for (let index = 0; index < 3000; index++) stderrLines().write("line " + index);
    Deno.exit(3);`;
  const { code, stderr } = await new Deno.Command(Deno.execPath(), { args: ["eval", script], stdout: "null" }).output();
  assert.equal(code, 3);
  const lines = new TextDecoder().decode(stderr).trimEnd().split("\n");
  assert.deepEqual(lines, Array.from({ length: 3000 }, (_, index) => `line ${index}`));
});
