// properCaseHeaderKey against the spellings Envoy's ProperCaseHeaderKeyFormatter produces.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { properCaseHeaderKey } from '../../src/http/http1/header_key_format';

test('properCaseHeaderKey: each word starts upper case, as Envoy spells it', () => {
  const cases: readonly (readonly [string, string])[] = [
    ['content-type', 'Content-Type'],
    ['host', 'Host'],
    ['x-forwarded-for', 'X-Forwarded-For'],
    ['x-request-id', 'X-Request-Id'],
    // A digit ends nothing: the letter after it stays as it is.
    ['x-1abc', 'X-1abc'],
    ['a1b', 'A1b'],
    // Any other character starts a word.
    ['foo_bar.baz', 'Foo_Bar.Baz'],
    ['--x', '--X'],
    // Upper case letters are kept, never lowered.
    ['X-FOO', 'X-FOO'],
    ['', ''],
  ];
  for (const [name, expected] of cases) assert.equal(properCaseHeaderKey(name), expected, name);
});
