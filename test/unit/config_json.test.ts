import assert from 'node:assert/strict';
import { test } from 'node:test';
import { cloneJson, type JsonObject } from '../../src/config/json';

test('cloneJson: a deep copy that shares nothing with its source', () => {
  const source = JSON.parse('{"a":[1,{"b":"x"},null],"c":{"d":true},"e":1.5}') as JsonObject;
  const copy = cloneJson(source);
  assert.deepEqual(copy, source);
  (copy['a'] as JsonObject[])[1]!['b'] = 'y';
  (copy['c'] as JsonObject)['d'] = false;
  assert.deepEqual(source, { a: [1, { b: 'x' }, null], c: { d: true }, e: 1.5 });
});

test('cloneJson: a "__proto__" key stays an own property, as JSON.parse made it', () => {
  const source = JSON.parse('{"__proto__":{"polluted":1},"k":2}') as JsonObject;
  const copy = cloneJson(source);
  assert.equal(Object.getPrototypeOf(copy), Object.prototype);
  assert.deepEqual(Object.keys(copy), ['__proto__', 'k']);
  assert.deepEqual(copy['__proto__'], { polluted: 1 });
  assert.equal((copy as { polluted?: number }).polluted, undefined);
});
