// XXH64 (the xxHash specification's 64-bit variant), which Envoy hashes route hash policies,
// ring hash keys and Maglev offsets with. BigInt arithmetic costs microseconds per key, so
// 64-bit words are kept in local int32 pairs (high, low) that V8 holds unboxed, and multiplied
// with Math.imul plus the low halves' high product in 16-bit pieces; only xxHash64's result is
// made a bigint.

import { hashAsBigInt, mulHi } from './uint64_math';

// The specification's five primes, as int32 halves.
const P1_HI = 0x9e3779b1 | 0;
const P1_LO = 0x85ebca87 | 0;
const P2_HI = 0xc2b2ae3d | 0;
const P2_LO = 0x27d4eb4f | 0;
const P3_HI = 0x165667b1 | 0;
const P3_LO = 0x9e3779f9 | 0;
const P4_HI = 0x85ebca77 | 0;
const P4_LO = 0xc2b2ae63 | 0;
const P5_HI = 0x27d4eb2f | 0;
const P5_LO = 0x165667c5 | 0;

/** XXH64 of `input` (a string is hashed as its UTF-8 bytes) with `seed` (default 0), as a uint64. */
export function xxHash64(input: string | Uint8Array, seed: bigint = 0n): bigint {
  return hashAsBigInt(xxHash64Into, input, seed);
}

/**
 * XXH64 of the first `length` bytes of `bytes`, the seed given as 32-bit halves, written as
 * unsigned halves to out[at] (high) and out[at + 1] (low): the allocation-free form for table
 * builds that hash millions of keys.
 */
export function xxHash64Into(bytes: Uint8Array, length: number, seedHi: number, seedLo: number, out: Uint32Array, at: number): void {
  seedHi |= 0;
  seedLo |= 0;
  let hHi: number;
  let hLo: number;
  let p = 0;
  if (length >= 32) {
    const v = new Int32Array(8);
    v[1] = (seedLo + P1_LO) | 0;
    v[0] = (seedHi + P1_HI + carry(seedLo, P1_LO)) | 0;
    v[0] = (v[0] + P2_HI + carry(v[1], P2_LO)) | 0;
    v[1] = (v[1] + P2_LO) | 0;
    v[3] = (seedLo + P2_LO) | 0;
    v[2] = (seedHi + P2_HI + carry(seedLo, P2_LO)) | 0;
    v[4] = seedHi;
    v[5] = seedLo;
    // seed - P1 is seed + (2^64 - P1).
    v[7] = (seedLo - P1_LO) | 0;
    v[6] = (seedHi - P1_HI - ((seedLo >>> 0) < (P1_LO >>> 0) ? 1 : 0)) | 0;
    do {
      for (let i = 0; i < 8; i += 2) stripeRound(v, i, read32(bytes, p + 4 * i + 4), read32(bytes, p + 4 * i));
      p += 32;
    } while (p + 32 <= length);
    hHi = 0;
    hLo = 0;
    for (let i = 0, r = 0; i < 8; i += 2) {
      r = i === 0 ? 1 : i === 2 ? 7 : i === 4 ? 12 : 18;
      const rHi = rotlHi(v[i], v[i + 1], r);
      const rLo = rotlLo(v[i], v[i + 1], r);
      hHi = (hHi + rHi + carry(hLo, rLo)) | 0;
      hLo = (hLo + rLo) | 0;
    }
    for (let i = 0; i < 8; i += 2) {
      // h = (h ^ round(0, v)) * P1 + P4
      const tHi = mulHi(v[i], v[i + 1], P2_HI, P2_LO);
      const tLo = Math.imul(v[i + 1], P2_LO);
      const rHi = rotlHi(tHi, tLo, 31);
      const rLo = rotlLo(tHi, tLo, 31);
      const kHi = mulHi(rHi, rLo, P1_HI, P1_LO);
      const kLo = Math.imul(rLo, P1_LO);
      const xHi = hHi ^ kHi;
      const xLo = hLo ^ kLo;
      const mHi = mulHi(xHi, xLo, P1_HI, P1_LO);
      const mLo = Math.imul(xLo, P1_LO);
      hHi = (mHi + P4_HI + carry(mLo, P4_LO)) | 0;
      hLo = (mLo + P4_LO) | 0;
    }
  } else {
    hHi = (seedHi + P5_HI + carry(seedLo, P5_LO)) | 0;
    hLo = (seedLo + P5_LO) | 0;
  }
  // The length joins as a 64-bit value; inputs here are far below 2^32 bytes.
  hHi = (hHi + carry(hLo, length)) | 0;
  hLo = (hLo + length) | 0;
  while (p + 8 <= length) {
    // h = rotl(h ^ round(0, lane), 27) * P1 + P4
    const laneHi = read32(bytes, p + 4);
    const laneLo = read32(bytes, p);
    const tHi = mulHi(laneHi, laneLo, P2_HI, P2_LO);
    const tLo = Math.imul(laneLo, P2_LO);
    const rHi = rotlHi(tHi, tLo, 31);
    const rLo = rotlLo(tHi, tLo, 31);
    const xHi = hHi ^ mulHi(rHi, rLo, P1_HI, P1_LO);
    const xLo = hLo ^ Math.imul(rLo, P1_LO);
    const yHi = rotlHi(xHi, xLo, 27);
    const yLo = rotlLo(xHi, xLo, 27);
    const mHi = mulHi(yHi, yLo, P1_HI, P1_LO);
    const mLo = Math.imul(yLo, P1_LO);
    hHi = (mHi + P4_HI + carry(mLo, P4_LO)) | 0;
    hLo = (mLo + P4_LO) | 0;
    p += 8;
  }
  if (p + 4 <= length) {
    // h = rotl(h ^ (lane32 * P1), 23) * P2 + P3
    const lane = read32(bytes, p);
    const xHi = hHi ^ mulHi(0, lane, P1_HI, P1_LO);
    const xLo = hLo ^ Math.imul(lane, P1_LO);
    const yHi = rotlHi(xHi, xLo, 23);
    const yLo = rotlLo(xHi, xLo, 23);
    const mHi = mulHi(yHi, yLo, P2_HI, P2_LO);
    const mLo = Math.imul(yLo, P2_LO);
    hHi = (mHi + P3_HI + carry(mLo, P3_LO)) | 0;
    hLo = (mLo + P3_LO) | 0;
    p += 4;
  }
  while (p < length) {
    // h = rotl(h ^ (byte * P5), 11) * P1
    const b = bytes[p];
    const xHi = hHi ^ mulHi(0, b, P5_HI, P5_LO);
    const xLo = hLo ^ Math.imul(b, P5_LO);
    const yHi = rotlHi(xHi, xLo, 11);
    const yLo = rotlLo(xHi, xLo, 11);
    hHi = mulHi(yHi, yLo, P1_HI, P1_LO);
    hLo = Math.imul(yLo, P1_LO);
    p++;
  }
  // Avalanche: h ^= h >> 33; h *= P2; h ^= h >> 29; h *= P3; h ^= h >> 32.
  hLo ^= hHi >>> 1;
  let mHi = mulHi(hHi, hLo, P2_HI, P2_LO);
  let mLo = Math.imul(hLo, P2_LO);
  mLo ^= (mHi << 3) | (mLo >>> 29);
  mHi ^= mHi >>> 29;
  hHi = mulHi(mHi, mLo, P3_HI, P3_LO);
  hLo = Math.imul(mLo, P3_LO);
  hLo ^= hHi;
  out[at] = hHi;
  out[at + 1] = hLo;
}

/** One stripe lane: v = rotl(v + lane * P2, 31) * P1, on the pair at v[i], v[i + 1]. */
function stripeRound(v: Int32Array, i: number, laneHi: number, laneLo: number): void {
  const tHi = mulHi(laneHi, laneLo, P2_HI, P2_LO);
  const tLo = Math.imul(laneLo, P2_LO);
  const aLo = v[i + 1];
  const sHi = (v[i] + tHi + carry(aLo, tLo)) | 0;
  const sLo = (aLo + tLo) | 0;
  const rHi = rotlHi(sHi, sLo, 31);
  const rLo = rotlLo(sHi, sLo, 31);
  v[i] = mulHi(rHi, rLo, P1_HI, P1_LO);
  v[i + 1] = Math.imul(rLo, P1_LO);
}

/** The carry out of adding two low halves. */
function carry(aLo: number, bLo: number): number {
  return (aLo >>> 0) + (bLo >>> 0) > 0xffffffff ? 1 : 0;
}

/** High half of a 64-bit word rotated left by 0 < n < 32. */
function rotlHi(hi: number, lo: number, n: number): number {
  return (hi << n) | (lo >>> (32 - n));
}

function rotlLo(hi: number, lo: number, n: number): number {
  return (lo << n) | (hi >>> (32 - n));
}

function read32(b: Uint8Array, p: number): number {
  return b[p] | (b[p + 1] << 8) | (b[p + 2] << 16) | (b[p + 3] << 24);
}
