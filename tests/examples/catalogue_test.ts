/**
 * The examples' catalogue stays whole: every folder of examples/ has its `example.ts` and a
 * README, is listed in examples/README.md, and is run by some test (one that names its
 * `examples/<folder>/` path, or its own `example_test.ts`). Needs no cluster.
 */

import assert from "node:assert/strict";

const EXAMPLES = new URL("../../examples/", import.meta.url);
const TESTS = new URL("../", import.meta.url);

/** The example folders, such as `05-handlers`. */
function folders(): string[] {
  return [...Deno.readDirSync(EXAMPLES)].filter((entry) => entry.isDirectory).map((entry) => entry.name).sort();
}

/** The text of every test file under tests/, recursively. */
function testSources(dir: URL = TESTS): string[] {
  const sources: string[] = [];
  for (const entry of Deno.readDirSync(dir)) {
    const url = new URL(entry.name + (entry.isDirectory ? "/" : ""), dir);
    if (entry.isDirectory) sources.push(...testSources(url));
    else if (entry.name.endsWith("_test.ts")) sources.push(Deno.readTextFileSync(url));
  }
  return sources;
}

Deno.test("every example folder has example.ts and a README, is indexed in examples/README.md, and is run by a test", () => {
  const index = Deno.readTextFileSync(new URL("README.md", EXAMPLES));
  const tests = testSources();
  const found = folders();
  assert.ok(found.length > 0, "examples/ has folders");
  for (const folder of found) {
    const files = [...Deno.readDirSync(new URL(`${folder}/`, EXAMPLES))].map((entry) => entry.name);
    assert.ok(files.includes("example.ts"), `examples/${folder} has example.ts`);
    assert.ok(files.includes("README.md"), `examples/${folder} has README.md`);
    assert.ok(index.includes(`](${folder}/`), `examples/README.md links examples/${folder}`);
    const tested = files.includes("example_test.ts") || tests.some((text) => text.includes(`examples/${folder}/`));
    const named = tests.some((text) => text.includes(`"${folder}"`));
    assert.ok(tested || named, `a test runs examples/${folder}`);
  }
});
