// The 64-bit MurmurHash2 variant libstdc++ uses for std::hash<std::string> (_Hash_bytes in
// libsupc++/hash_bytes.cc), which Envoy's ring hash offers as MURMUR_HASH_2 so that rings match
// those of other std::hash based implementations. Same int32-halves arithmetic as xxhash64.ts.

import { hashAsBigInt, mulHi } from './uint64_math';

/** libstdc++'s default seed for std::hash<std::string>, Envoy's MurmurHash::STD_HASH_SEED. */
export const STD_HASH_SEED = 0xc70f6907n;

const MUL_HI = 0xc6a4a793 | 0;
const MUL_LO = 0x5bd1e995 | 0;

/** MurmurHash2-64 (libstdc++'s) of `input` (a string as its UTF-8 bytes) with `seed`, as a uint64. */
export function murmurHash2(input: string | Uint8Array, seed: bigint = STD_HASH_SEED): bigint {
  return hashAsBigInt(murmurHash2Into, input, seed);
}

/** The allocation-free form: the hash of bytes[0, length) to out[at] (high) and out[at + 1] (low). */
export function murmurHash2Into(bytes: Uint8Array, length: number, seedHi: number, seedLo: number, out: Uint32Array, at: number): void {
  // hash = seed ^ (len * mul)
  let hHi = seedHi ^ mulHi(0, length, MUL_HI, MUL_LO);
  let hLo = seedLo ^ Math.imul(length, MUL_LO);
  const aligned = length & ~7;
  for (let p = 0; p < aligned; p += 8) {
    // data = shift_mix(load64(p) * mul) * mul; hash = (hash ^ data) * mul
    const dLo = read32(bytes, p);
    const dHi = read32(bytes, p + 4);
    const mHi = mulHi(dHi, dLo, MUL_HI, MUL_LO);
    const mLo = Math.imul(dLo, MUL_LO) ^ (mHi >>> 15);
    const xHi = hHi ^ mulHi(mHi, mLo, MUL_HI, MUL_LO);
    const xLo = hLo ^ Math.imul(mLo, MUL_LO);
    hHi = mulHi(xHi, xLo, MUL_HI, MUL_LO);
    hLo = Math.imul(xLo, MUL_LO);
  }
  const rest = length & 7;
  if (rest !== 0) {
    // The trailing bytes, little-endian, as one word: hash = (hash ^ data) * mul
    let dHi = 0;
    let dLo = 0;
    for (let i = rest - 1; i >= 0; i--) {
      dHi = (dHi << 8) | (dLo >>> 24);
      dLo = (dLo << 8) | bytes[aligned + i];
    }
    const xHi = hHi ^ dHi;
    const xLo = hLo ^ dLo;
    hHi = mulHi(xHi, xLo, MUL_HI, MUL_LO);
    hLo = Math.imul(xLo, MUL_LO);
  }
  // hash = shift_mix(shift_mix(hash) * mul), shift_mix(v) = v ^ (v >> 47)
  hLo ^= hHi >>> 15;
  const mHi = mulHi(hHi, hLo, MUL_HI, MUL_LO);
  const mLo = Math.imul(hLo, MUL_LO);
  out[at] = mHi;
  out[at + 1] = mLo ^ (mHi >>> 15);
}

function read32(b: Uint8Array, p: number): number {
  return b[p] | (b[p + 1] << 8) | (b[p + 2] << 16) | (b[p + 3] << 24);
}
