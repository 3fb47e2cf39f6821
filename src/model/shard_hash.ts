/**
 * The hash by which the API server shards lists and watches (KEP-5866, feature gate `ShardedListAndWatch`):
 * 64-bit FNV-1a over the UTF-8 bytes of a field's value, here always `metadata.uid`. A replica that filters
 * objects itself must hash exactly as the server does, or an object would be handled by two replicas (or none)
 * when some replicas filter server-side and others client-side.
 *
 * Checked against Kubernetes v1.36.3: `HashField` in `k8s.io/apimachinery/pkg/sharding/hash.go` (Go's
 * `hash/fnv` 64a over the string's bytes, rendered as 16 lowercase hex digits), fed by `ResolveFieldValue` in
 * `accessor.go` of the same package (the uid as a plain string). The test vectors in `shard_hash_test.ts` were
 * computed once by that upstream function and by an independent Python implementation.
 *
 * @module
 */

/** The size of the hash space, 2^64: every hash is below it, and it is the largest exclusive range end. */
export const SHARD_HASH_SPACE: bigint = 1n << 64n;

const FNV_OFFSET_BASIS = 0xcbf29ce484222325n;
const FNV_PRIME = 0x100000001b3n;
const encoder = new TextEncoder();

/**
 * The 64-bit FNV-1a hash of a string's UTF-8 bytes, as the API server computes it for
 * `shardRange(object.metadata.uid, ...)`.
 *
 * @example
 * ```ts
 * import { shardHash } from "./shard_hash.ts";
 * shardHash("a"); // 0xaf63dc4c8601ec8cn
 * ```
 *
 * @param value The field's value, e.g. an object's `metadata.uid`.
 * @returns The hash, an integer in `[0, 2^64)`.
 */
export function shardHash(value: string): bigint {
  let hash = FNV_OFFSET_BASIS;
  for (const byte of encoder.encode(value)) {
    hash = BigInt.asUintN(64, (hash ^ BigInt(byte)) * FNV_PRIME);
  }
  return hash;
}
