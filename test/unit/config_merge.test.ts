import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mergeJson } from '../../src/config/merge';

test('objects merge key by key, recursively', () => {
  assert.deepEqual(mergeJson({ a: { b: 1, c: 2 }, d: 3 }, { a: { c: 20, e: 5 } }), { a: { b: 1, c: 20, e: 5 }, d: 3 });
});

test('lists and scalars replace', () => {
  assert.deepEqual(mergeJson({ list: [1, 2, 3], n: 1, s: 'a' }, { list: [9], n: 2, s: 'b' }), { list: [9], n: 2, s: 'b' });
  assert.deepEqual(mergeJson({ a: { b: 1 } }, { a: 'flat' }), { a: 'flat' });
  assert.deepEqual(mergeJson({ a: 'flat' }, { a: { b: 1 } }), { a: { b: 1 } });
});

test('the inputs are not modified', () => {
  const base = { a: { b: 1 } };
  const override = { a: { c: 2 } };
  mergeJson(base, override);
  assert.deepEqual(base, { a: { b: 1 } });
  assert.deepEqual(override, { a: { c: 2 } });
});
