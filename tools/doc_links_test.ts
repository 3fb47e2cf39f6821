import assert from "node:assert/strict";
import { join } from "node:path";
import { anchorsOf, citationsOf, holdsTitle, linksOf, slug } from "./doc_links.ts";

const TOOL = new URL("./doc_links.ts", import.meta.url).pathname;
// The pages this test cites are made up: spelled through `DOCS`, so that the check of our own citations passes them by.
const DOCS = "docs";

Deno.test("a heading's anchor is spelled as GitHub spells it, a repeated one numbered", () => {
  assert.equal(
    slug("Side by side: ours, lean, Kopf, controller-runtime and raw clients"),
    "side-by-side-ours-lean-kopf-controller-runtime-and-raw-clients",
  );
  assert.equal(slug("Sharded: `--shard-group`"), "sharded---shard-group");
  assert.equal(slug("The runtime's own pages, given back"), "the-runtimes-own-pages-given-back");
  assert.equal(slug("See [the client](client.md) here"), "see-the-client-here");
  const text = "# Title\n\n## Runs\n\n```sh\n# not a heading\n```\n\n## Runs\n";
  assert.deepEqual([...anchorsOf(text)], ["title", "runs", "runs-1"]);
});

Deno.test("links are read from prose only, with their lines; code is not", () => {
  const text = 'See [a](a.md#x) and ![b](b.png).\n`[c](c.md)`\n```md\n[d](d.md)\n```\n[e](<e.md> "E")\n';
  assert.deepEqual(linksOf(text), [
    { target: "a.md#x", line: 1 },
    { target: "b.png", line: 1 },
    { target: "e.md", line: 6 },
  ]);
});

Deno.test("a citation's title is read across a comment's lines", () => {
  const source =
    `// plain (${DOCS}/a.md).\n/**\n * costs (${DOCS}/perf/cpu.md, "Fewer functions, a\n * second pass").\n */\n`;
  assert.deepEqual(citationsOf(source), [
    { page: `${DOCS}/a.md`, title: undefined, line: 1 },
    { page: `${DOCS}/perf/cpu.md`, title: "Fewer functions, a second pass", line: 3 },
  ]);
  const page = "# Where\n\n- **Fewer functions, a second pass** (2026-12-06). Text\n\n## The runs, again\n";
  assert.equal(holdsTitle(page, "Fewer functions, a second pass"), true);
  assert.equal(holdsTitle(page, "the runs"), true);
  assert.equal(holdsTitle(page, "A third pass"), false);
});

Deno.test("the command names each broken link and citation and fails; a clean tree passes", async () => {
  const dir = await Deno.makeTempDir();
  try {
    await Deno.mkdir(join(dir, "docs", "inner"), { recursive: true });
    await Deno.mkdir(join(dir, "src"));
    await Deno.writeTextFile(join(dir, "docs", "page.md"), "# Page\n\n## Runs\n\n- **Fewer calls** (today).\n");
    await Deno.writeTextFile(
      join(dir, "docs", "inner", "room.md"),
      "# Room\n\nBack to [the page](../page.md#runs), [runs](../page.md#walks), [gone](gone.md), [web](https://x.io/a).\n",
    );
    await Deno.writeTextFile(
      join(dir, "src", "code.ts"),
      `// (${DOCS}/page.md, "Fewer calls") and (${DOCS}/page.md, "More calls") and (${DOCS}/none.md).\n`,
    );
    const run = async () => {
      const output = await new Deno.Command(Deno.execPath(), {
        args: ["run", "-A", TOOL, "docs", "src"],
        cwd: dir,
        stdout: "piped",
        stderr: "piped",
      }).output();
      return { code: output.code, stdout: new TextDecoder().decode(output.stdout) };
    };
    const broken = await run();
    assert.equal(broken.code, 1);
    assert.deepEqual(broken.stdout.trim().split("\n").sort(), [
      `${DOCS}/inner/room.md:3: ../page.md#walks: no heading with the anchor #walks`,
      `${DOCS}/inner/room.md:3: gone.md: no file ${DOCS}/inner/gone.md`,
      `src/code.ts:1: ${DOCS}/none.md: no page ${DOCS}/none.md`,
      `src/code.ts:1: ${DOCS}/page.md, "More calls": no heading or bold lead starting "More calls" in ${DOCS}/page.md`,
    ]);
    await Deno.writeTextFile(join(dir, "docs", "inner", "room.md"), "# Room\n\n[The page](../page.md#runs).\n");
    await Deno.writeTextFile(join(dir, "src", "code.ts"), `// (${DOCS}/page.md, "Fewer calls").\n`);
    assert.deepEqual(await run(), { code: 0, stdout: "" });
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
