import assert from 'node:assert/strict';
import { test } from 'node:test';
import { InvalidRegexError, SafeRegex } from '../../src/regex/safe_regex';

function refusal(pattern: string, options?: { maxProgramSize?: number }): InvalidRegexError {
  try {
    SafeRegex.compile(pattern, options);
  } catch (e) {
    assert.ok(e instanceof InvalidRegexError, `${pattern}: ${String(e)}`);
    assert.equal(e.pattern, pattern);
    assert.ok(!e.message.includes('\n'), e.message);
    return e;
  }
  assert.fail(`${JSON.stringify(pattern)} compiled`);
}

test('RE2 syntax is accepted: perl and POSIX classes, Unicode classes, non-greedy, named groups, quoting', () => {
  const cases: [pattern: string, input: string, found: boolean][] = [
    ['^\\w+\\.\\d+$', 'upstream_rq.200', true],
    ['^\\w+\\.\\d+$', 'upstream_rq.2xx', false],
    ['^[[:alpha:]_]+$', 'downstream_cx_total', true],
    ['^\\pL+$', 'köln', true],
    ['^a+?b$', 'aaab', true],
    ['^(?P<cluster>c\\d+)\\.', 'c12.upstream', true],
    ['^(?<cluster>c\\d+)\\.', 'x.c12.upstream', false],
    ['\\Q1.2.3.4\\E', 'listener.1.2.3.4_80', true],
    ['\\Q1.2.3.4\\E', 'listener.1x2x3x4_80', false],
    ['^x{2,3}$', 'xxxx', false],
    ['(?s)a.b', 'a\nb', true],
    ['a.b', 'a\nb', false],
  ];
  for (const [pattern, input, found] of cases) {
    const re = SafeRegex.compile(pattern);
    assert.equal(re.pattern, pattern);
    assert.equal(re.search(input), found, `${pattern} on ${JSON.stringify(input)}`);
  }
});

test('what RE2 refuses (backreferences, lookaround, bad syntax) is an InvalidRegexError with the reason', () => {
  const cases: [pattern: string, reason: string][] = [
    ['(abc', 'missing closing )'],
    ['a)', 'unexpected )'],
    ['[a', 'missing closing ]'],
    ['(\\w)\\1', 'invalid escape sequence: \\1'],
    ['(?=a)b', 'invalid or unsupported Perl syntax: (?='],
    ['a(?!b)', 'invalid or unsupported Perl syntax: (?!'],
    ['(?<=a)b', 'invalid named capture'],
    ['(?<!a)b', 'invalid named capture'],
    ['[z-a]', 'invalid character class range: z-a'],
    ['a**', 'invalid nested repetition operator: **'],
    ['x{1001}', 'invalid repeat count: {1001}'],
    ['\\', 'trailing backslash at end of expression'],
    // A newline in the quoted part stays escaped: the reason is one line.
    ['x[\n', 'missing closing ]: [\\n'],
  ];
  for (const [pattern, reason] of cases) {
    const e = refusal(pattern);
    assert.equal(e.reason, reason, pattern);
    assert.equal(e.message, `invalid regex ${JSON.stringify(pattern)}: ${reason}`);
  }
});

test('search finds the pattern anywhere; fullMatch needs the whole input', () => {
  const re = SafeRegex.compile('upstream_rq');
  assert.equal(re.search('cluster.c1.upstream_rq_200'), true);
  assert.equal(re.fullMatch('cluster.c1.upstream_rq_200'), false);
  assert.equal(re.fullMatch('upstream_rq'), true);
  // FullMatch tries every alternative against the end, not just the leftmost-first one.
  assert.equal(SafeRegex.compile('a|ab').fullMatch('ab'), true);
  const anchored = SafeRegex.compile('^cluster\\.c12.*_5xx$');
  assert.equal(anchored.search('cluster.c123.upstream_rq_5xx'), true);
  assert.equal(anchored.search('cluster.c13.upstream_rq_5xx'), false);
  assert.equal(anchored.search('x.cluster.c12.upstream_rq_5xx'), false);
});

test('(?i) makes the match case-insensitive, with Unicode case folding', () => {
  assert.equal(SafeRegex.compile('UPSTREAM_RQ_5XX').search('cluster.c1.upstream_rq_5xx'), false);
  assert.equal(SafeRegex.compile('(?i)UPSTREAM_RQ_5XX').search('cluster.c1.upstream_rq_5xx'), true);
  assert.equal(SafeRegex.compile('(?i)köln').fullMatch('KÖLN'), true);
  assert.equal(SafeRegex.compile('(?i:a)b').fullMatch('AB'), false);
});

test('names are matched by code point: . takes an astral character whole, \\w stays ASCII as in RE2', () => {
  assert.equal(SafeRegex.compile('^.$').fullMatch('😀'), true);
  assert.equal(SafeRegex.compile('^..$').fullMatch('😀'), false);
  assert.equal(SafeRegex.compile('^\\w+$').fullMatch('café'), false);
  assert.equal(SafeRegex.compile('^[\\w\\pL]+$').fullMatch('café'), true);
  assert.equal(SafeRegex.compile('listener\\.köln_\\d+').search('listener.köln_80.downstream_cx_total'), true);
  assert.equal(SafeRegex.compile('日本').search('http.日本.rq'), true);
});

test('pathological patterns run in linear time on a 10,000-character word', { timeout: 60_000 }, () => {
  const word = 'a'.repeat(10_000);
  const nested = SafeRegex.compile('(\\w+)+!');
  assert.equal(nested.search(word), false);
  assert.equal(nested.search(`${word}!`), true);
  assert.equal(nested.fullMatch(word), false);
  assert.equal(SafeRegex.compile('(a|aa)*b').search(word), false);
  assert.equal(SafeRegex.compile('(a|aa)*b').fullMatch(`${word}b`), true);
});

test('maxProgramSize refuses a larger program, naming both sizes; without it there is no limit', () => {
  assert.equal(SafeRegex.compile('^/api/v[0-9]+/users/[^/]+$', { maxProgramSize: 100 }).fullMatch('/api/v2/users/x'), true);
  assert.equal(refusal('.{200}', { maxProgramSize: 100 }).reason, 'program size of 202 > max program size of 100');
  assert.equal(refusal('a', { maxProgramSize: 0 }).reason, 'program size of 3 > max program size of 0');
  assert.equal(SafeRegex.compile('.{200}').search('x'.repeat(200)), true);
});
