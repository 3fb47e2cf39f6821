import assert from "node:assert/strict";
import { SHARD_HASH_SPACE, shardHash } from "./shard_hash.ts";

// Computed once by the API server's own `HashField` (k8s.io/apimachinery v0.36.3, pkg/sharding/hash.go) and,
// independently, by a Python FNV-1a over `str.encode()`; both gave these values.
const VECTORS: [string, bigint][] = [
  ["", 0xcbf29ce484222325n],
  ["a", 0xaf63dc4c8601ec8cn],
  ["foobar", 0x85944171f73967e8n],
  ["8f14e45f-ceea-467a-9575-8d2a0c5b7f3e", 0xc68b10d139af4c9cn],
  ["00000000-0000-0000-0000-000000000000", 0x7c384c6218f299f1n],
  ["d2b0a9f3-6c1e-4c52-9f7e-3b8a1e5d4c21", 0x7a93b07c59d19825n],
  ["ünïcødé-✓", 0x2bd89da5d565edaen],
];

Deno.test("shardHash: 64-bit FNV-1a of the UTF-8 bytes, as the API server computes it", () => {
  for (const [value, expected] of VECTORS) {
    assert.equal(shardHash(value), expected, `hash of ${JSON.stringify(value)}`);
  }
});

Deno.test("shardHash: always within [0, 2^64)", () => {
  for (let i = 0; i < 1000; i++) {
    const hash = shardHash(crypto.randomUUID());
    assert.ok(hash >= 0n && hash < SHARD_HASH_SPACE, `${hash} out of the space`);
  }
  assert.equal(SHARD_HASH_SPACE, 18446744073709551616n);
});
