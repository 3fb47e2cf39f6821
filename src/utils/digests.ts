/**
 * The two hash functions that Kopf's on-cluster formats need, synchronous and without a dependency:
 * SHA-256 (FIPS 180-4; digests of oversized essences, masked secret values) and BLAKE2b with a
 * chosen digest length (RFC 7693, unkeyed; the suffixes of cut annotation keys). WebCrypto is
 * asynchronous and has no BLAKE2b; `node:crypto` loads Node's compatibility layer, and an npm package
 * (`@noble/hashes`) cost an idle operator ~1 MiB of resident memory for what it rarely runs. Inputs
 * here are a few hundred bytes at most, so plain loops are fast enough.
 *
 * @module
 */

const ENCODER = new TextEncoder();

/** The UTF-8 bytes of text (a string), or the bytes themselves. */
function bytesOf(input: string | Uint8Array): Uint8Array {
  return typeof input === "string" ? ENCODER.encode(input) : input;
}

/** Lowercase hexadecimal, two digits per byte. */
export function toHex(bytes: Uint8Array): string {
  let hex = "";
  for (const byte of bytes) hex += byte.toString(16).padStart(2, "0");
  return hex;
}

/** SHA-256's round constants: the first 32 bits of the fractional parts of the cube roots of the first 64 primes. */
const K256 = new Uint32Array([
  0x428a2f98,
  0x71374491,
  0xb5c0fbcf,
  0xe9b5dba5,
  0x3956c25b,
  0x59f111f1,
  0x923f82a4,
  0xab1c5ed5,
  0xd807aa98,
  0x12835b01,
  0x243185be,
  0x550c7dc3,
  0x72be5d74,
  0x80deb1fe,
  0x9bdc06a7,
  0xc19bf174,
  0xe49b69c1,
  0xefbe4786,
  0x0fc19dc6,
  0x240ca1cc,
  0x2de92c6f,
  0x4a7484aa,
  0x5cb0a9dc,
  0x76f988da,
  0x983e5152,
  0xa831c66d,
  0xb00327c8,
  0xbf597fc7,
  0xc6e00bf3,
  0xd5a79147,
  0x06ca6351,
  0x14292967,
  0x27b70a85,
  0x2e1b2138,
  0x4d2c6dfc,
  0x53380d13,
  0x650a7354,
  0x766a0abb,
  0x81c2c92e,
  0x92722c85,
  0xa2bfe8a1,
  0xa81a664b,
  0xc24b8b70,
  0xc76c51a3,
  0xd192e819,
  0xd6990624,
  0xf40e3585,
  0x106aa070,
  0x19a4c116,
  0x1e376c08,
  0x2748774c,
  0x34b0bcb5,
  0x391c0cb3,
  0x4ed8aa4a,
  0x5b9cca4f,
  0x682e6ff3,
  0x748f82ee,
  0x78a5636f,
  0x84c87814,
  0x8cc70208,
  0x90befffa,
  0xa4506ceb,
  0xbef9a3f7,
  0xc67178f2,
]);

/** SHA-256's initial state: the first 32 bits of the fractional parts of the square roots of the first 8 primes. */
const H256 = [0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19];

function rotr32(x: number, n: number): number {
  return (x >>> n) | (x << (32 - n));
}

/**
 * The SHA-256 digest (32 bytes) of text's UTF-8 bytes or of bytes.
 *
 * @example
 * ```ts
 * toHex(sha256("abc")); // "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
 * ```
 */
export function sha256(input: string | Uint8Array): Uint8Array {
  const data = bytesOf(input);
  // The message, a 1 bit, zeros, and its length in bits as 64 bits: a multiple of 64 bytes.
  const padded = new Uint8Array(Math.ceil((data.length + 9) / 64) * 64);
  padded.set(data);
  padded[data.length] = 0x80;
  const view = new DataView(padded.buffer);
  const bits = data.length * 8;
  view.setUint32(padded.length - 8, Math.floor(bits / 0x100000000));
  view.setUint32(padded.length - 4, bits >>> 0);
  const h = H256.slice();
  const w = new Uint32Array(64);
  for (let block = 0; block < padded.length; block += 64) {
    for (let t = 0; t < 16; t++) w[t] = view.getUint32(block + t * 4);
    for (let t = 16; t < 64; t++) {
      const s0 = rotr32(w[t - 15], 7) ^ rotr32(w[t - 15], 18) ^ (w[t - 15] >>> 3);
      const s1 = rotr32(w[t - 2], 17) ^ rotr32(w[t - 2], 19) ^ (w[t - 2] >>> 10);
      w[t] = w[t - 16] + s0 + w[t - 7] + s1;
    }
    let [a, b, c, d, e, f, g, hh] = h;
    for (let t = 0; t < 64; t++) {
      const t1 = hh + (rotr32(e, 6) ^ rotr32(e, 11) ^ rotr32(e, 25)) + ((e & f) ^ (~e & g)) + K256[t] + w[t];
      const t2 = (rotr32(a, 2) ^ rotr32(a, 13) ^ rotr32(a, 22)) + ((a & b) ^ (a & c) ^ (b & c));
      hh = g;
      g = f;
      f = e;
      e = (d + t1) | 0;
      d = c;
      c = b;
      b = a;
      a = (t1 + t2) | 0;
    }
    const next = [a, b, c, d, e, f, g, hh];
    for (let i = 0; i < 8; i++) h[i] = (h[i] + next[i]) | 0;
  }
  const digest = new Uint8Array(32);
  const out = new DataView(digest.buffer);
  for (let i = 0; i < 8; i++) out.setUint32(i * 4, h[i] >>> 0);
  return digest;
}

/** BLAKE2b's initial state, the same as SHA-512's. */
const IV512 = [
  0x6a09e667f3bcc908n,
  0xbb67ae8584caa73bn,
  0x3c6ef372fe94f82bn,
  0xa54ff53a5f1d36f1n,
  0x510e527fade682d1n,
  0x9b05688c2b3e6c1fn,
  0x1f83d9abfb41bd6bn,
  0x5be0cd19137e2179n,
];

/** BLAKE2b's message schedule: the order of the block's words in each of the 12 rounds (the last two repeat the first two). */
const SIGMA = [
  [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15],
  [14, 10, 4, 8, 9, 15, 13, 6, 1, 12, 0, 2, 11, 7, 5, 3],
  [11, 8, 12, 0, 5, 2, 15, 13, 10, 14, 3, 6, 7, 1, 9, 4],
  [7, 9, 3, 1, 13, 12, 11, 14, 2, 6, 5, 10, 4, 0, 15, 8],
  [9, 0, 5, 7, 2, 4, 10, 15, 14, 1, 11, 12, 6, 8, 3, 13],
  [2, 12, 6, 10, 0, 11, 8, 3, 4, 13, 7, 5, 15, 14, 1, 9],
  [12, 5, 1, 15, 14, 13, 4, 10, 0, 7, 6, 3, 9, 2, 8, 11],
  [13, 11, 7, 14, 12, 1, 3, 9, 5, 0, 15, 4, 8, 6, 2, 10],
  [6, 15, 14, 9, 11, 3, 0, 8, 12, 2, 13, 7, 1, 4, 10, 5],
  [10, 2, 8, 4, 7, 6, 1, 5, 15, 11, 9, 14, 3, 12, 13, 0],
];

const BLOCK = 128;

/**
 * The unkeyed BLAKE2b digest of text's UTF-8 bytes or of bytes, `length` bytes long (1 to 64): the
 * length is a parameter of the hash, so a short digest is not a cut long one.
 *
 * @example
 * ```ts
 * toHex(blake2b("abc", 4)); // "63906248"
 * ```
 */
export function blake2b(input: string | Uint8Array, length: number): Uint8Array {
  if (!(Number.isInteger(length) && length >= 1 && length <= 64)) {
    throw new RangeError(`A BLAKE2b digest is 1 to 64 bytes long, not ${length}.`);
  }
  const data = bytesOf(input);
  const h = new BigUint64Array(IV512);
  h[0] ^= 0x01010000n ^ BigInt(length);
  const v = new BigUint64Array(16);
  const m = new BigUint64Array(16);
  const block = new Uint8Array(BLOCK);
  const words = new DataView(block.buffer);
  const blocks = Math.max(1, Math.ceil(data.length / BLOCK));
  for (let index = 0; index < blocks; index++) {
    const start = index * BLOCK;
    const last = index === blocks - 1;
    block.fill(0);
    block.set(data.subarray(start, start + BLOCK));
    for (let i = 0; i < 16; i++) m[i] = words.getBigUint64(i * 8, true);
    v.set(h);
    v.set(IV512, 8);
    v[12] ^= BigInt(Math.min(start + BLOCK, data.length)); // the bytes so far; inputs here stay far below 2^64
    if (last) v[14] = ~v[14];
    for (let round = 0; round < 12; round++) {
      const s = SIGMA[round % 10];
      mix(v, 0, 4, 8, 12, m[s[0]], m[s[1]]);
      mix(v, 1, 5, 9, 13, m[s[2]], m[s[3]]);
      mix(v, 2, 6, 10, 14, m[s[4]], m[s[5]]);
      mix(v, 3, 7, 11, 15, m[s[6]], m[s[7]]);
      mix(v, 0, 5, 10, 15, m[s[8]], m[s[9]]);
      mix(v, 1, 6, 11, 12, m[s[10]], m[s[11]]);
      mix(v, 2, 7, 8, 13, m[s[12]], m[s[13]]);
      mix(v, 3, 4, 9, 14, m[s[14]], m[s[15]]);
    }
    for (let i = 0; i < 8; i++) h[i] ^= v[i] ^ v[i + 8];
  }
  const out = new Uint8Array(64);
  const view = new DataView(out.buffer);
  for (let i = 0; i < 8; i++) view.setBigUint64(i * 8, h[i], true);
  return out.slice(0, length);
}

/** BLAKE2b's G function over four words of the working vector (stores into it wrap modulo 2^64). */
function mix(v: BigUint64Array, a: number, b: number, c: number, d: number, x: bigint, y: bigint): void {
  v[a] = v[a] + v[b] + x;
  v[d] = rotr64(v[d] ^ v[a], 32n);
  v[c] = v[c] + v[d];
  v[b] = rotr64(v[b] ^ v[c], 24n);
  v[a] = v[a] + v[b] + y;
  v[d] = rotr64(v[d] ^ v[a], 16n);
  v[c] = v[c] + v[d];
  v[b] = rotr64(v[b] ^ v[c], 63n);
}

function rotr64(x: bigint, n: bigint): bigint {
  return BigInt.asUintN(64, (x >> n) | (x << (64n - n)));
}
