import assert from 'node:assert/strict';
import { test } from 'node:test';
import { mergeSlashes, normalizePath } from '../../src/http/path_normalization';

test('dot segments go as RFC 3986 removes them; %2e is a dot, a backslash a slash; the query stays', () => {
  const cases: [string, string][] = [
    ['/a/./b', '/a/b'],
    ['/a/b/../c', '/a/c'],
    ['/a/b/..', '/a/'],
    ['/a/.', '/a/'],
    ['/../../a', '/a'],
    ['/..', '/'],
    ['/a/%2e%2E/b', '/b'],
    ['/a/%2e/b', '/a/b'],
    ['/a\\..\\b', '/b'],
    ['/a/..b/c', '/a/..b/c'],
    ['/a/b?x=/../y', '/a/b?x=/../y'],
    ['/a//b', '/a//b'],
    ['/', '/'],
    ['*', '*'],
  ];
  for (const [path, expected] of cases) assert.equal(normalizePath(path), expected, path);
});

test('runs of slashes before the query become one', () => {
  assert.equal(mergeSlashes('//a///b/'), '/a/b/');
  assert.equal(mergeSlashes('/a/b?x=//y'), '/a/b?x=//y');
  assert.equal(mergeSlashes('/a//b?x=//y'), '/a/b?x=//y');
  assert.equal(mergeSlashes('/plain'), '/plain');
});
