import assert from "node:assert/strict";
import { NamespacePattern, NamespacePatterns } from "./namespace_patterns.ts";

Deno.test("the first glob is decisive; the rightmost matching glob wins after it", () => {
  const pattern = new NamespacePattern("myapp-*,!*-pr-*,*-pr-123");
  assert.equal(pattern.matches("myapp-live"), true);
  assert.equal(pattern.matches("myapp-pr-123"), true);
  assert.equal(pattern.matches("myapp-pr-456"), false);
  assert.equal(pattern.matches("otherapp-pr-123"), false);
  assert.equal(pattern.matches("otherapp-live"), false);
  assert.equal(pattern.exact, undefined);
});

Deno.test("a leading negation implies a leading *", () => {
  const pattern = new NamespacePattern("!*-pr-123-*");
  assert.equal(pattern.matches("default"), true);
  assert.equal(pattern.matches("app-pr-123-x"), false);
  const reincluded = new NamespacePattern("!kube-*, kube-public");
  assert.equal(reincluded.matches("kube-system"), false);
  assert.equal(reincluded.matches("kube-public"), true);
  assert.equal(reincluded.matches("default"), true);
});

Deno.test("globs: * matches any run, ? one character, other characters literally; spaces are trimmed", () => {
  const pattern = new NamespacePattern(" a?c-* ");
  assert.equal(pattern.matches("abc-"), true);
  assert.equal(pattern.matches("abc-x.y"), true);
  assert.equal(pattern.matches("ac-x"), false);
  assert.equal(new NamespacePattern("a.c").matches("abc"), false, "a dot is literal");
  assert.equal(new NamespacePattern("a.c").exact, "a.c");
  assert.equal(new NamespacePattern("").matches(""), false, "no globs match nothing");
});

Deno.test("regular expressions match the whole name", () => {
  const pattern = new NamespacePattern(/ns-\d+/);
  assert.equal(pattern.matches("ns-12"), true);
  assert.equal(pattern.matches("x-ns-12"), false);
  assert.equal(pattern.matches("ns-12-x"), false);
  assert.equal(pattern.exact, undefined);
});

Deno.test("several patterns are OR-ed; only exact names are exact", () => {
  const patterns = new NamespacePatterns(["ns1", "x-*", "ns1", "!y", "a,b"]);
  assert.equal(patterns.matches("ns1"), true);
  assert.equal(patterns.matches("x-1"), true);
  assert.equal(patterns.matches("z"), true, "!y matches everything but y");
  assert.deepEqual(patterns.exact, ["ns1"]);
  assert.equal(patterns.allExact, false);
  assert.equal(new NamespacePatterns(["ns1", "ns2"]).allExact, true);
  assert.throws(() => new NamespacePattern(5 as unknown as string), TypeError);
});
