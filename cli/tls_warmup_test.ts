import assert from "node:assert/strict";
import { warmUpTls } from "./tls_warmup.ts";

/** Runs `body` with `crypto.subtle.generateKey` replaced, and restores it. */
async function withGenerateKey(
  replacement: (...args: unknown[]) => Promise<unknown>,
  body: () => Promise<void>,
): Promise<void> {
  const original = crypto.subtle.generateKey;
  Object.defineProperty(crypto.subtle, "generateKey", { value: replacement, configurable: true, writable: true });
  try {
    await body();
  } finally {
    Object.defineProperty(crypto.subtle, "generateKey", { value: original, configurable: true, writable: true });
  }
}

Deno.test("warmUpTls starts one key generation and returns before it settles", async () => {
  const calls: unknown[][] = [];
  let settle!: () => void;
  const generation = new Promise<void>((resolve) => settle = resolve);
  await withGenerateKey((...args: unknown[]) => {
    calls.push(args);
    return generation;
  }, async () => {
    let settled = false;
    generation.then(() => settled = true);
    warmUpTls();
    assert.equal(calls.length, 1);
    assert.deepEqual(calls[0][0], { name: "ECDSA", namedCurve: "P-256" });
    assert.equal(settled, false, "returned while the generation was still under way");
    settle();
    await generation;
  });
});

Deno.test("warmUpTls: a runtime whose key generation fails leaves no rejection behind", async () => {
  let rejected!: Promise<never>;
  await withGenerateKey(() => {
    rejected = Promise.reject(new DOMException("not supported", "NotSupportedError"));
    return rejected;
  }, async () => {
    warmUpTls();
    // An unhandled rejection would fail this test; the rejection is observed and dropped.
    await rejected.catch(() => {});
    await new Promise((resolve) => setTimeout(resolve, 0));
  });
});

Deno.test("warmUpTls with the real WebCrypto: the generation runs and settles", async () => {
  const original = crypto.subtle.generateKey.bind(crypto.subtle) as (...args: unknown[]) => Promise<unknown>;
  let generation: Promise<unknown> | undefined;
  await withGenerateKey((...args) => {
    generation = original(...args);
    return generation;
  }, async () => {
    warmUpTls();
    assert.ok(generation, "a key generation was started");
    const key = await generation as CryptoKeyPair;
    assert.equal(key.privateKey.algorithm.name, "ECDSA");
  });
});
