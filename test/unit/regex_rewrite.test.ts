import assert from 'node:assert/strict';
import { test } from 'node:test';
import { InvalidRewriteError, parseRewrite } from '../../src/regex/rewrite';
import { Substitution } from '../../src/regex/substitution';

test('Envoy\'s documented regex_rewrite examples', () => {
  const cases: [string, string, string, string][] = [
    ['^/service/([^/]+)(/.*)$', '\\2/instance/\\1', '/service/foo/v1/api', '/v1/api/instance/foo'],
    ['one', 'two', '/xxx/one/yyy/one/zzz', '/xxx/two/yyy/two/zzz'],
    ['^(.*?)one(.*)$', '\\1two\\2', '/xxx/one/yyy/one/zzz', '/xxx/two/yyy/one/zzz'],
    ['(?i)/xxx/', '/yyy/', '/aaa/XxX/bbb', '/aaa/yyy/bbb'],
  ];
  for (const [pattern, substitution, input, expected] of cases) assert.equal(Substitution.compile(pattern, substitution).apply(input), expected, pattern);
});

test('RE2 is greedy: the host_rewrite_path_regex example of Envoy\'s docs takes two segments, as Envoy does', () => {
  assert.equal(Substitution.compile('^/(.+)/.+$', '\\1').apply('/envoyproxy.io/some/path'), 'envoyproxy.io/some');
  assert.equal(Substitution.compile('^/([^/]+)/.+$', '\\1').apply('/envoyproxy.io/some/path'), 'envoyproxy.io');
});

test('no match leaves the input; \\0 is the whole match and \\\\ a backslash', () => {
  assert.equal(Substitution.compile('^/nope', 'x').apply('/path'), '/path');
  assert.equal(Substitution.compile('b+', '[\\0]').apply('abbbc'), 'a[bbb]c');
  assert.equal(Substitution.compile('a', '\\\\').apply('cat'), 'c\\t');
});

test('rewrites RE2 refuses are refused in its words', () => {
  assert.deepEqual(parseRewrite('x\\1y', 1), ['x', 1, 'y']);
  assert.throws(() => parseRewrite('\\2', 1), new InvalidRewriteError('Rewrite schema requests 2 matches, but the regexp only has 1 parenthesized subexpressions.'));
  assert.throws(() => parseRewrite('a\\', 0), new InvalidRewriteError("Rewrite schema error: '\\' not allowed at end."));
  assert.throws(() => parseRewrite('\\n', 0), new InvalidRewriteError("Rewrite schema error: '\\' must be followed by a digit or '\\'."));
});
