import assert from "node:assert/strict";
import { asciiSource } from "./build.ts";

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
