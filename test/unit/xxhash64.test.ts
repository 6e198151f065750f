import assert from 'node:assert/strict';
import { test } from 'node:test';
import { xxHash64 } from '../../src/common/hash/xxhash64';
import { referenceXxHash64, XXH64_SANITY_VECTORS, xxHashSanityBuffer } from '../helpers/hash_reference';

const sanity = xxHashSanityBuffer(222);

test('the BigInt reference gives the published XXH64 sanity vectors', () => {
  for (const [length, seed, expected] of XXH64_SANITY_VECTORS) {
    assert.equal(referenceXxHash64(sanity.subarray(0, length), seed), expected, `length ${length} seed ${seed}`);
  }
});

test('xxHash64 gives the published XXH64 sanity vectors', () => {
  for (const [length, seed, expected] of XXH64_SANITY_VECTORS) {
    assert.equal(xxHash64(sanity.subarray(0, length), seed), expected, `length ${length} seed ${seed}`);
  }
  assert.equal(xxHash64(''), 0xef46db3751d8e999n);
});

test('strings hash as their UTF-8 bytes', () => {
  assert.equal(xxHash64('abc'), 0x44bc2cf5ad770999n);
  assert.equal(xxHash64('a'), 0xd24ec4f1a98c6e5bn);
  assert.equal(xxHash64('héllo ✓'), xxHash64(new TextEncoder().encode('héllo ✓')));
});

test('every length through three stripes and both lane sizes agrees with the reference, with seeds', () => {
  for (const seed of [0n, 1n, XXH64_SANITY_VECTORS[1][1], 0xffffffffffffffffn, 0x8000000000000000n]) {
    for (let length = 0; length <= 100; length++) {
      const input = sanity.subarray(100, 100 + length);
      assert.equal(xxHash64(input, seed), referenceXxHash64(input, seed), `length ${length} seed ${seed}`);
    }
  }
});

test('a seed outside 64 bits is taken modulo 2^64, as a uint64_t parameter would be', () => {
  assert.equal(xxHash64('x', -1n), xxHash64('x', 0xffffffffffffffffn));
});
