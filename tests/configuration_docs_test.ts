/**
 * The defaults that the docs state are the code's: every row of docs/configuration.md's settings
 * tables whose default is written as a plain value (a number, `null`, a boolean, a list, a string)
 * matches `new kopf.Settings()`, and so does every "`settings.section.field` (N s)" in docs/*.md
 * (issue 19: the docs said 60 s for `unhealthyAfter` while the code said 90).
 */

import assert from "node:assert/strict";
import * as kopf from "@kopf/kopf";

const DOCS = new URL("../docs/", import.meta.url);
const settings = new kopf.Settings() as unknown as Record<string, Record<string, unknown>>;

/** A setting's default as the docs write it, or `undefined` for values not written plainly (objects, functions). */
function written(value: unknown): string | undefined {
  if (value === null) return "`null`";
  if (typeof value === "number") return String(value);
  if (typeof value === "boolean") return `\`${value}\``;
  if (typeof value === "string") return `\`${value}\``;
  if (Array.isArray(value) && value.every((item) => typeof item !== "object")) {
    return `\`[${value.map((item) => typeof item === "string" ? `"${item}"` : String(item)).join(", ")}]\``;
  }
  return undefined;
}

/** The rows of each `## \`section\`` table of docs/configuration.md: field and documented default. */
function documentedDefaults(page: string): { section: string; field: string; stated: string }[] {
  const rows: { section: string; field: string; stated: string }[] = [];
  let section: string | undefined;
  for (const line of page.split("\n")) {
    const heading = line.match(/^## `([a-zA-Z]+)`/);
    if (heading) section = heading[1];
    else if (line.startsWith("## ")) section = undefined;
    const row = line.match(/^\| `([a-zA-Z]+)`\s*\|\s*(.*?)\s*\|/);
    if (section && row) rows.push({ section, field: row[1], stated: row[2] });
  }
  return rows;
}

Deno.test("docs/configuration.md states the defaults of the code", async () => {
  const rows = documentedDefaults(await Deno.readTextFile(new URL("configuration.md", DOCS)));
  let compared = 0;
  for (const { section, field, stated } of rows) {
    const values = settings[section];
    assert.ok(
      values && field in values,
      `docs/configuration.md documents settings.${section}.${field}, which does not exist`,
    );
    const expected = written(values[field]);
    // A default described in words ("1, 1, 2, … 610 (Fibonacci)") is not compared.
    if (expected === undefined || !/^(`[^`]*`|[0-9.]+)$/.test(stated)) continue;
    // A string may be written with its quotes or without.
    const plain = stated.replace(/^`"([^"`]*)"`$/, "`$1`");
    assert.equal(plain, expected, `the default of settings.${section}.${field} in docs/configuration.md`);
    compared++;
  }
  assert.ok(compared >= 40, `plain defaults compared: ${compared}`);
});

Deno.test('the docs\' "`settings.section.field` (N s)" state the defaults of the code', async () => {
  let compared = 0;
  for await (const entry of Deno.readDir(DOCS)) {
    if (!entry.name.endsWith(".md")) continue;
    const page = await Deno.readTextFile(new URL(entry.name, DOCS));
    for (const match of page.matchAll(/`settings\.([a-zA-Z]+)\.([a-zA-Z]+)`(?: seconds)? \(([0-9.]+)(?: s)?\)/g)) {
      const [text, section, field, stated] = match;
      assert.equal(Number(stated), settings[section]?.[field], `${text} in docs/${entry.name}`);
      compared++;
    }
  }
  assert.ok(compared >= 3, `mentions compared: ${compared}`);
});
