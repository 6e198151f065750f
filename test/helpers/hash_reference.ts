// Straightforward BigInt transcriptions of the published hash algorithms, slow and obviously
// right, against which the tests check the fast implementations and compute expected tables.

const M64 = (1n << 64n) - 1n;

const P1 = 0x9e3779b185ebca87n;
const P2 = 0xc2b2ae3d27d4eb4fn;
const P3 = 0x165667b19e3779f9n;
const P4 = 0x85ebca77c2b2ae63n;
const P5 = 0x27d4eb2f165667c5n;

function rotl(x: bigint, r: bigint): bigint {
  return ((x << r) | (x >> (64n - r))) & M64;
}

function lane(b: Uint8Array, p: number, n: number): bigint {
  let v = 0n;
  for (let i = n - 1; i >= 0; i--) v = (v << 8n) | BigInt(b[p + i]);
  return v;
}

function round(acc: bigint, input: bigint): bigint {
  return (rotl((acc + input * P2) & M64, 31n) * P1) & M64;
}

/** XXH64 as the xxHash specification (doc/xxhash_spec.md) states it. */
export function referenceXxHash64(input: string | Uint8Array, seed = 0n): bigint {
  const b = typeof input === 'string' ? new TextEncoder().encode(input) : input;
  const len = b.length;
  let p = 0;
  let h: bigint;
  if (len >= 32) {
    let v1 = (seed + P1 + P2) & M64;
    let v2 = (seed + P2) & M64;
    let v3 = seed;
    let v4 = (seed - P1) & M64;
    for (; p + 32 <= len; p += 32) {
      v1 = round(v1, lane(b, p, 8));
      v2 = round(v2, lane(b, p + 8, 8));
      v3 = round(v3, lane(b, p + 16, 8));
      v4 = round(v4, lane(b, p + 24, 8));
    }
    h = (rotl(v1, 1n) + rotl(v2, 7n) + rotl(v3, 12n) + rotl(v4, 18n)) & M64;
    for (const v of [v1, v2, v3, v4]) h = (((h ^ round(0n, v)) * P1) + P4) & M64;
  } else {
    h = (seed + P5) & M64;
  }
  h = (h + BigInt(len)) & M64;
  for (; p + 8 <= len; p += 8) h = ((rotl(h ^ round(0n, lane(b, p, 8)), 27n) * P1) + P4) & M64;
  if (p + 4 <= len) {
    h = ((rotl(h ^ ((lane(b, p, 4) * P1) & M64), 23n) * P2) + P3) & M64;
    p += 4;
  }
  for (; p < len; p++) h = (rotl(h ^ ((BigInt(b[p]) * P5) & M64), 11n) * P1) & M64;
  h ^= h >> 33n;
  h = (h * P2) & M64;
  h ^= h >> 29n;
  h = (h * P3) & M64;
  h ^= h >> 32n;
  return h;
}

/** The xxHash repository's sanity buffer (cli/xsum_sanity_check.c): top bytes of a multiplicative sequence. */
export function xxHashSanityBuffer(length: number): Uint8Array {
  const out = new Uint8Array(length);
  let gen = 2654435761n;
  for (let i = 0; i < length; i++) {
    out[i] = Number(gen >> 56n);
    gen = (gen * 11400714785074694797n) & M64;
  }
  return out;
}

export const XXH_PRIME32 = 2654435761n;

/** Published XXH64 vectors (xxHash cli/xsum_sanity_check.c): [length of sanity buffer, seed, hash]. */
export const XXH64_SANITY_VECTORS: ReadonlyArray<readonly [number, bigint, bigint]> = [
  [0, 0n, 0xef46db3751d8e999n],
  [0, XXH_PRIME32, 0xac75fda2929b17efn],
  [1, 0n, 0xe934a84adb052768n],
  [1, XXH_PRIME32, 0x5014607643a9b4c3n],
  [4, 0n, 0x9136a0dca57457een],
  [14, 0n, 0x8282dcc4994e35c8n],
  [14, XXH_PRIME32, 0xc3bd6bf63deb6df0n],
  [222, 0n, 0xb641ae8cb691c174n],
  [222, XXH_PRIME32, 0x20cb8ab7ae10c14an],
];
