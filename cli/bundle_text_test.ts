import assert from "node:assert/strict";
import { asciiSource, builtinRequires } from "./bundle_text.ts";

Deno.test("asciiSource: characters outside ASCII become escapes that mean the same in strings, templates and regular expressions", () => {
  const source = [
    "// a comment — with a dash",
    'const text = "ключ — 🔑 café";',
    "const template = `${text} … ×`;",
    "const pattern = /[à-ÿ]—/u;",
    "[text, template, pattern.source, pattern.test('é—')]",
  ].join("\n");
  const ascii = asciiSource(source);
  assert.match(ascii, /^[^\u0080-\uffff]*$/);
  assert.match(ascii, /\\u2014/);
  assert.match(ascii, /\\ud83d\\udd11/, "a character beyond 16 bits as its two halves");
  const [text, template, , matches] = (0, eval)(source);
  const [asciiText, asciiTemplate, , asciiMatches] = (0, eval)(ascii);
  assert.equal(asciiText, text);
  assert.equal(asciiTemplate, template);
  assert.equal(asciiMatches, matches);
  assert.equal(matches, true);
});

Deno.test("asciiSource: left as it is where a raw template text is read; line separators stay", () => {
  const raw = "const s = String.raw`—`;";
  assert.equal(asciiSource(raw), raw, "String.raw would see the escape itself");
  const separator = "// comment\u2028run();";
  assert.equal(asciiSource(separator), separator, "in a comment, U+2028 ends the line; an escape would not");
  assert.equal(asciiSource("plain();"), "plain();");
});

/** Imports a module from its text. */
function load(text: string): Promise<Record<string, unknown>> {
  return import(`data:text/javascript;base64,${btoa(text)}`);
}

const USES = [
  'export const proc = REQUIRE("node:process");',
  'export const buffer = REQUIRE("buffer");',
  'export function missing() { return REQUIRE("left-pad"); }',
].join("\n");

async function assertServed(text: string): Promise<void> {
  const module = await load(text);
  assert.equal(module.proc, globalThis.process);
  assert.equal((module.buffer as { Buffer: unknown }).Buffer, globalThis.Buffer);
  assert.throws(() => (module.missing as () => unknown)(), /Dynamic require of "left-pad" is not supported/);
}

Deno.test("builtinRequires: the unminified helper's createRequire from node:module gives way to the built-in modules", async () => {
  const bundled = [
    'import { createRequire as __deno_internal_createRequire } from "node:module";',
    "var __require = __deno_internal_createRequire(import.meta.url);",
    USES.replaceAll("REQUIRE", "__require"),
  ].join("\n");
  const served = builtinRequires(bundled);
  assert.doesNotMatch(served, /node:module/);
  await assertServed(served);
});

Deno.test("builtinRequires: the minified fallback that threw for every require serves the built-in modules", async () => {
  const bundled = [
    'var r=(function(n){if(typeof require<"u")return require.apply(this,arguments);' +
    "throw Error('Dynamic require of \"'+n+'\" is not supported')});",
    "var q=function(x){throw new Error('Dynamic require of \"' + x + '\" is not supported')};",
    USES.replaceAll("REQUIRE", "r"),
    'export const again = q("node:process");',
  ].join("\n");
  await assert.rejects(load(bundled), /Dynamic require of "node:process" is not supported/);
  const served = builtinRequires(bundled);
  await assertServed(served);
  assert.equal((await load(served)).again, globalThis.process, "every such helper in the bundle");
  assert.equal(builtinRequires("plain();"), "plain();");
});
