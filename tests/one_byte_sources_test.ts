/**
 * The modules an operator loads keep to one byte per character. V8 holds each module's source as
 * long as the process runs, as one byte per character while every character is in Latin-1, and
 * as two bytes for the whole module once one is not: a single em dash in a comment doubles the
 * module's share of the heap. An idle operator measured 1.4 MiB less RSS with its sources in ASCII
 * (docs/performance/memory.md, "Sources in one byte per character").
 */

import assert from "node:assert/strict";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";

const ROOT = fileURLToPath(new URL("../", import.meta.url));

/** The library's and the CLI's modules (tests and their fixtures aside), and the entry points. */
async function* runtimeModules(): AsyncGenerator<string> {
  for await (const entry of Deno.readDir(ROOT)) {
    if (entry.isFile && entry.name.endsWith(".ts")) yield join(ROOT, entry.name);
  }
  for (const folder of ["src", "cli"]) yield* walk(join(ROOT, folder));
}

async function* walk(folder: string): AsyncGenerator<string> {
  for await (const entry of Deno.readDir(folder)) {
    const path = join(folder, entry.name);
    if (entry.isDirectory && entry.name !== "fixtures") yield* walk(path);
    else if (entry.isFile && entry.name.endsWith(".ts") && !entry.name.endsWith("_test.ts")) yield path;
  }
}

/** The places (`file:line: character`) of characters beyond Latin-1 in a text. */
function wideCharacters(path: string, text: string): string[] {
  const found: string[] = [];
  text.split("\n").forEach((line, index) => {
    for (const character of line) {
      if (character.codePointAt(0)! > 0xff) {
        const code = character.codePointAt(0)!.toString(16).padStart(4, "0");
        found.push(`${path}:${index + 1}: ${character} (U+${code})`);
      }
    }
  });
  return found;
}

Deno.test("wideCharacters finds what V8 would store in two bytes, and only that", () => {
  assert.deepEqual(wideCharacters("a.ts", "// plain, caf\u00e9, 2\u00d73\nconst dash = '\u2014';"), [
    "a.ts:2: \u2014 (U+2014)",
  ]);
  assert.deepEqual(wideCharacters("b.ts", "const escaped = '\\u2026';"), []);
});

Deno.test("the modules an operator loads are one-byte sources", async () => {
  const found: string[] = [];
  for await (const path of runtimeModules()) {
    found.push(...wideCharacters(relative(ROOT, path), await Deno.readTextFile(path)));
  }
  assert.deepEqual(
    found,
    [],
    "Characters beyond Latin-1 make V8 keep the whole module in two bytes per character: spell them in ASCII " +
      "in comments (-- ... -> >=) and as \\u escapes in strings.",
  );
});
