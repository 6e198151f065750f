// Envoy's StringMatcher: ignore_case folds A-Z only (absl's ASCII folding), on configuration text
// and on byte strings read off the wire alike; a byte string is compared with the matcher's UTF-8.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { asciiLowerCase } from '../../src/common/ascii_case';
import { byteStringMatcher, stringMatcher } from '../../src/common/string_matcher';

const bytes = (text: string): string => Buffer.from(text, 'utf8').toString('latin1');

test('asciiLowerCase folds A-Z and leaves every other character as it is', () => {
  assert.equal(asciiLowerCase('Hello-World_09'), 'hello-world_09');
  assert.equal(asciiLowerCase('ÉCOLE Straße'), 'École straße');
  // U+212A KELVIN SIGN lower-cases to k in Unicode; not in Envoy.
  assert.equal(asciiLowerCase('\u212A'), '\u212A');
  // A byte string: c3 stays c3 (toLowerCase would make it e3).
  assert.equal(asciiLowerCase(bytes('CAFÉ')), `caf${bytes('É')}`);
});

test('ignore_case compares A-Z without case and nothing else', () => {
  const exact = stringMatcher({ kind: 'exact', value: 'Kelvin', ignoreCase: true });
  assert.equal(exact('KELVIN'), true);
  assert.equal(exact('\u212Aelvin'), false, 'the Kelvin sign is not K');
  const prefix = stringMatcher({ kind: 'prefix', value: 'ÉT', ignoreCase: true });
  assert.equal(prefix('Été'), true);
  assert.equal(prefix('été'), false, 'É and é differ to Envoy');
});

test('a byte string matches the UTF-8 of the text, case folded on A-Z only', () => {
  const contains = byteStringMatcher({ kind: 'contains', value: 'Zürich', ignoreCase: true });
  assert.equal(contains(bytes('to ZÜRICH')), false, 'Ü (c3 9c) is not ü (c3 bc)');
  assert.equal(contains(bytes('to züRICH')), true);
  // c3 bc against e3 bc: a byte that folds under toLowerCase's latin1 rules must not match.
  assert.equal(contains('to z\u00e3\u00bcrich'), false);
  const regex = byteStringMatcher({ kind: 'safe_regex', value: 'caf.', ignoreCase: false });
  assert.equal(regex(bytes('café')), true, 'é read as one character');
});
