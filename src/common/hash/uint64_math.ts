// 64-bit multiplication on int32 halves, for hashes that must not pay for BigInt: the low half
// of a product is Math.imul of the low halves; the high half is computed here.

/** The high 32 bits (as int32) of (a * b) mod 2^64, a and b given as int32 halves. */
export function mulHi(aHi: number, aLo: number, bHi: number, bLo: number): number {
  // The low halves' full product in 16-bit pieces, each partial sum below 2^32.
  const a0 = aLo & 0xffff;
  const a1 = aLo >>> 16;
  const b0 = bLo & 0xffff;
  const b1 = bLo >>> 16;
  const mid1 = a1 * b0 + ((a0 * b0) >>> 16);
  const mid2 = a0 * b1 + (mid1 & 0xffff);
  const high = a1 * b1 + (mid1 >>> 16) + (mid2 >>> 16);
  return (high + Math.imul(aHi, bLo) + Math.imul(aLo, bHi)) | 0;
}

/** An allocation-free 64-bit hash: of bytes[0, length) with the seed's halves, to out[at] (high) and out[at + 1] (low). */
export type HashInto = (bytes: Uint8Array, length: number, seedHi: number, seedLo: number, out: Uint32Array, at: number) => void;

/** `hashInto` of `input` (a string as its UTF-8 bytes) with a 64-bit `seed`, as a uint64. */
export function hashAsBigInt(hashInto: HashInto, input: string | Uint8Array, seed: bigint): bigint {
  const bytes = typeof input === 'string' ? Buffer.from(input, 'utf8') : input;
  const s = BigInt.asUintN(64, seed);
  const out = new Uint32Array(2);
  hashInto(bytes, bytes.length, Number(s >> 32n), Number(s & 0xffffffffn), out, 0);
  return (BigInt(out[0]) << 32n) | BigInt(out[1]);
}
