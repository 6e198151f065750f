import assert from 'node:assert/strict';
import { test } from 'node:test';
import { murmurHash2, STD_HASH_SEED } from '../../src/common/hash/murmur_hash2';

// std::hash<std::string>{}(s) printed by a program built with g++ (libstdc++, x86-64); the
// first five are also Envoy's test/common/common/hash_test.cc vectors for murmurHash2.
const LIBSTDCXX: ReadonlyArray<readonly [string, bigint]> = [
  ['', 6142509188972423790n],
  ['foo', 9631199822919835226n],
  ['bar', 11474628671133349555n],
  ['foo\nbar', 16306510975912980159n],
  ['lyft', 12847078931730529320n],
  ['a', 4993892634952068459n],
  ['10.0.0.1:80_0', 13659246566588789388n],
  ['12345678', 10113836418918046885n],
  ['123456789abcdefgh', 10280977052341072324n],
  ['héllo ✓', 9004439166895791303n],
];

test("matches libstdc++'s std::hash<std::string> with its default seed", () => {
  for (const [input, expected] of LIBSTDCXX) assert.equal(murmurHash2(input), expected, JSON.stringify(input));
  assert.equal(STD_HASH_SEED, 0xc70f6907n);
});

test('the seed is honored: std::_Hash_bytes("foo", 3, 1) from the same program', () => {
  assert.equal(murmurHash2('foo', 1n), 16481074758685916174n);
});
