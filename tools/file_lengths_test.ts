import assert from "node:assert/strict";
import { join, relative } from "node:path";
import { measureFiles } from "./file_lengths.ts";

const TOOL = new URL("./file_lengths.ts", import.meta.url).pathname;

async function withTree(fn: (dir: string) => Promise<void>): Promise<void> {
  const dir = await Deno.makeTempDir();
  try {
    await Deno.mkdir(join(dir, "inner"));
    await Deno.writeTextFile(join(dir, "short.ts"), "a;\nb;\nc;\n");
    await Deno.writeTextFile(join(dir, "inner", "long.ts"), "1;\n2;\n3;\n4;\n5;");
    await Deno.writeTextFile(join(dir, "long_test.ts"), "x;\n".repeat(50));
    await Deno.writeTextFile(join(dir, "notes.md"), "y\n".repeat(50));
    await fn(dir);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

async function run(...args: string[]): Promise<{ code: number; stdout: string }> {
  const output = await new Deno.Command(Deno.execPath(), { args: ["run", "-A", TOOL, ...args], stdout: "piped" })
    .output();
  return { code: output.code, stdout: new TextDecoder().decode(output.stdout) };
}

Deno.test("every source file is counted in lines, longest first, tests and other files left out", async () => {
  await withTree(async (dir) => {
    assert.deepEqual(await measureFiles([dir]), [
      { file: relative(Deno.cwd(), join(dir, "inner", "long.ts")), lines: 5 },
      { file: relative(Deno.cwd(), join(dir, "short.ts")), lines: 3 },
    ]);
  });
});

Deno.test("--over lists only the longer files and fails while any is left; --except spares a file", async () => {
  await withTree(async (dir) => {
    const long = relative(Deno.cwd(), join(dir, "inner", "long.ts"));
    assert.deepEqual(await run("--over", "4", dir), { code: 1, stdout: `    5  ${long}\n` });
    assert.deepEqual(await run("--over", "4", "--except", join(dir, "inner", "long.ts"), dir), { code: 0, stdout: "" });
    assert.deepEqual(await run("--over", "5", dir), { code: 0, stdout: "" });
    assert.equal((await run("--over", "many", dir)).code, 2);
  });
});
