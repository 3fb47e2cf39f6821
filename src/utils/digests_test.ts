import assert from "node:assert/strict";
import { blake2b, sha256, toHex } from "./digests.ts";

// Expected digests from Python's hashlib (hashlib.sha256, hashlib.blake2b with digest_size).
const x = (count: number) => "x".repeat(count);
const a = (count: number) => "a".repeat(count);

Deno.test("sha256: the FIPS 180-4 examples and every padding boundary", () => {
  const cases: [string, string][] = [
    ["", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"],
    ["abc", "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"],
    [
      "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq",
      "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1",
    ],
    [a(55), "9f4390f8d30c2dd92ec9f095b65e2b9ae9b0a925a5258e241c9f1e910f734318"],
    [a(56), "b35439a4ac6f0948b6d6f9e3c6af0f5f590ce20f1bde7090ef7970686ec6738a"],
    [a(64), "ffe054fe7ae0cb6dc65c3af9b61d5209f439851db43d0ba5997337df154668eb"],
    [a(1000), "41edece42d63e8d9bf515a9ba6932e1c20cbc9f5a5d134645adb5db1b9737ea3"],
    ["ключ—🔑", "aa3403f3fc50afb4019e9f2c6b1b4a3384406ac42931aef1958850c96d2def2d"],
  ];
  for (const [input, expected] of cases) {
    assert.equal(toHex(sha256(input)), expected, `sha256 of ${input.length} characters`);
    assert.equal(toHex(sha256(new TextEncoder().encode(input))), expected, "the same from bytes");
  }
});

Deno.test("blake2b: short digests across block boundaries, and the RFC 7693 example", () => {
  const cases: [string, string][] = [
    ["", "1271cf25"],
    ["abc", "63906248"],
    ["y".repeat(64), "d1ddb9d6"],
    [x(127), "1dab6b6d"],
    [x(128), "b0c663e3"],
    [x(129), "59b07930"],
    [x(300), "b12499e1"],
    ["kopf.zalando.org/create_fn.sub-handler.with-a-very-long-name-that-goes-on", "dfecda46"],
    ["ключ—🔑", "2a8ff3e9"],
  ];
  for (const [input, expected] of cases) {
    assert.equal(toHex(blake2b(input, 4)), expected, `blake2b-32 of ${input.length} characters`);
  }
  assert.equal(
    toHex(blake2b("abc", 64)),
    "ba80a53f981c4d0d6a2797b69f12f6e94c212f14685ac4b74b12bb6fdbffa2d1" +
      "7d87c5392aab792dc252d5de4533cc9518d38aa8dbf1925ab92386edd4009923",
  );
  assert.equal(toHex(blake2b("", 64)).slice(0, 32), "786a02f742015903c6c6fd852552d272");
  assert.equal(toHex(blake2b(x(300), 64)).slice(0, 32), "fe42f4108dd98f9b4f19fb21f386dfbe");
});

Deno.test("blake2b: a digest length outside 1–64 is refused with the range", () => {
  for (const length of [0, 65, 1.5]) {
    assert.throws(() => blake2b("abc", length), /1 to 64 bytes long, not/);
  }
});

Deno.test("toHex: two lowercase digits per byte", () => {
  assert.equal(toHex(new Uint8Array([0, 1, 15, 16, 255])), "00010f10ff");
  assert.equal(toHex(new Uint8Array()), "");
});
