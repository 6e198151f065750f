import assert from 'node:assert/strict';
import { test } from 'node:test';
import { escapeLogLine } from '../../src/log/escape';
import {
  compilePattern,
  DEFAULT_LOG_FORMAT,
  withLocationPrefix,
  type LogRecord,
  type PatternContext,
} from '../../src/log/pattern';

const CONTEXT: PatternContext = { threadId: 42, processId: 4242, escaped: false };

/** A record at `date`, 456789 ns past its millisecond. */
function recordAt(date: Date, overrides: Partial<LogRecord> = {}): LogRecord {
  return {
    seconds: Math.floor(date.getTime() / 1000),
    nanos: (date.getTime() % 1000) * 1e6 + 456_789,
    level: 'info',
    logger: 'upstream',
    message: 'hello',
    location: { path: 'src/upstream/cluster.ts', line: 42, functionName: 'onHostChange' },
    ...overrides,
  };
}

/** The line without its end-of-line, which every line gets exactly once. */
function render(pattern: string, record: LogRecord, context: PatternContext = CONTEXT): string {
  const line = compilePattern(pattern, context).format(record);
  assert.ok(line.endsWith('\n') && !line.slice(0, -1).includes('\n'), `one line: ${JSON.stringify(line)}`);
  return line.slice(0, -1);
}

/** Runs `body` with the process's time zone set to `zone` (Node applies TZ changes at once). */
function inTimeZone(zone: string, body: () => void): void {
  const saved = process.env.TZ;
  process.env.TZ = zone;
  try {
    body();
  } finally {
    if (saved === undefined) delete process.env.TZ;
    else process.env.TZ = saved;
  }
}

test('every flag of the spec table renders spdlog style', { timeout: 20000 }, () => {
  inTimeZone('UTC', () => {
    const record = recordAt(new Date(2026, 10, 21, 16, 20, 16, 123));
    const expected: ReadonlyArray<[string, string]> = [
      ['%v', 'hello'],
      ['%t', '42'],
      ['%P', '4242'],
      ['%n', 'upstream'],
      ['%l', 'info'],
      ['%L', 'I'],
      ['%a', 'Sat'],
      ['%A', 'Saturday'],
      ['%b', 'Nov'],
      ['%B', 'November'],
      ['%c', 'Sat Nov 21 16:20:16 2026'],
      ['%C', '26'],
      ['%Y', '2026'],
      ['%D', '11/21/26'],
      ['%x', '11/21/26'],
      ['%m', '11'],
      ['%d', '21'],
      ['%H', '16'],
      ['%I', '04'],
      ['%M', '20'],
      ['%S', '16'],
      ['%e', '123'],
      ['%f', '123456'],
      ['%F', '123456789'],
      ['%p', 'PM'],
      ['%r', '04:20:16 PM'],
      ['%R', '16:20'],
      ['%T', '16:20:16'],
      ['%X', '16:20:16'],
      ['%z', '+00:00'],
      ['%%', '%'],
      ['%@', 'src/upstream/cluster.ts:42'],
      ['%s', 'cluster.ts'],
      ['%g', 'src/upstream/cluster.ts'],
      ['%#', '42'],
      ['%!', 'onHostChange'],
    ];
    for (const [pattern, text] of expected) assert.equal(render(pattern, record), text, pattern);
  });
});

test('level names are spdlog 1.7 names, long and short', { timeout: 20000 }, () => {
  const record = recordAt(new Date(2026, 10, 21, 16, 20, 16, 123));
  const levels: ReadonlyArray<[LogRecord['level'], string]> = [
    ['trace', 'trace T'],
    ['debug', 'debug D'],
    ['info', 'info I'],
    ['warning', 'warning W'],
    ['error', 'error E'],
    ['critical', 'critical C'],
  ];
  for (const [level, text] of levels) assert.equal(render('%l %L', { ...record, level }), text);
});

test('the UTC offset follows the local time zone, east positive', { timeout: 20000 }, () => {
  inTimeZone('Asia/Kolkata', () => {
    assert.equal(render('%z %H:%M', recordAt(new Date(2026, 10, 21, 16, 20, 16))), '+05:30 16:20');
  });
  inTimeZone('America/New_York', () => {
    assert.equal(render('%z', recordAt(new Date(2026, 10, 21, 16, 20, 16))), '-05:00');
  });
});

test('12-hour clock runs 01-12 around midnight and noon', { timeout: 20000 }, () => {
  assert.equal(render('%I %p|%r', recordAt(new Date(2026, 10, 21, 0, 5, 3))), '12 AM|12:05:03 AM');
  assert.equal(render('%I %p|%r', recordAt(new Date(2026, 10, 21, 12, 0, 0))), '12 PM|12:00:00 PM');
  assert.equal(render('%I %p', recordAt(new Date(2026, 10, 21, 9, 0, 0))), '09 AM');
});

test('%c leaves the day unpadded and month names are spdlog\'s', { timeout: 20000 }, () => {
  assert.equal(render('%c', recordAt(new Date(2026, 10, 1, 9, 5, 3))), 'Sun Nov 1 09:05:03 2026');
  assert.equal(render('%b %B', recordAt(new Date(2026, 8, 1))), 'Sept September');
  assert.equal(render('%b', recordAt(new Date(2026, 4, 1))), 'May');
});

test('sub-second fields are zero padded', { timeout: 20000 }, () => {
  const record = { ...recordAt(new Date(2026, 10, 21)), nanos: 1_002_003 };
  assert.equal(render('%e %f %F', record), '001 001002 001002003');
});

test('the default format', { timeout: 20000 }, () => {
  assert.equal(DEFAULT_LOG_FORMAT, '[%Y-%m-%d %T.%e][%t][%l][%n] [%g:%#] %v');
  const line = render(DEFAULT_LOG_FORMAT, recordAt(new Date(2026, 10, 21, 16, 20, 16, 123)));
  assert.equal(line, '[2026-11-21 16:20:16.123][42][info][upstream] [src/upstream/cluster.ts:42] hello');
  assert.match(
    render(DEFAULT_LOG_FORMAT, recordAt(new Date(), { level: 'warning', logger: 'main' })),
    /^\[\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}\.\d{3}\]\[42\]\[warning\]\[main\] \[src\/upstream\/cluster\.ts:42\] hello$/,
  );
});

test('location flags print nothing when the location is unknown', { timeout: 20000 }, () => {
  const record = recordAt(new Date(2026, 10, 21), { location: null });
  assert.equal(render('<%@|%s|%g|%#|%!>', record), '<||||>');
});

test('a pattern knows whether it needs the caller location', { timeout: 20000 }, () => {
  assert.equal(compilePattern(DEFAULT_LOG_FORMAT, CONTEXT).usesLocation, true);
  assert.equal(compilePattern('%s', CONTEXT).usesLocation, true);
  assert.equal(compilePattern('[%Y-%m-%d %T.%e][%t][%l][%n] %v', CONTEXT).usesLocation, false);
  assert.equal(compilePattern('100%%g', CONTEXT).usesLocation, false);
});

test('unknown flags print as written and a dangling % is dropped', { timeout: 20000 }, () => {
  const record = recordAt(new Date(2026, 10, 21));
  assert.equal(render('%q %5q %v', record), '%q %q hello');
  assert.equal(render('100%% done%', record), '100% done');
  assert.equal(render('end%-12', record), 'end');
});

test('padding aligns right, left (-) or center (=), never truncates, at most 64', { timeout: 20000 }, () => {
  const record = recordAt(new Date(2026, 10, 21));
  assert.equal(render('[%8l]', record), '[    info]');
  assert.equal(render('[%-8l]', record), '[info    ]');
  assert.equal(render('[%=8l]', record), '[  info  ]');
  assert.equal(render('[%=7l]', record), '[ info  ]');
  assert.equal(render('[%2l]', record), '[info]');
  assert.equal(render('[%-l]', record), '[info]');
  assert.equal(render('%100v', record), ' '.repeat(59) + 'hello');
});

test('one compiled pattern follows the clock from line to line', { timeout: 20000 }, () => {
  const format = compilePattern('%T.%e', CONTEXT);
  const first = recordAt(new Date(2026, 10, 21, 16, 20, 16, 123));
  const next = { ...first, seconds: first.seconds + 1, nanos: 7_000_000 };
  assert.equal(format.format(first), '16:20:16.123\n');
  assert.equal(format.format(next), '16:20:17.007\n');
  assert.equal(format.format(first), '16:20:16.123\n');
});

test('prefix-with-location puts [%g:%#] before every %v', { timeout: 20000 }, () => {
  assert.equal(
    withLocationPrefix('[%Y-%m-%d %T.%e][%t][%l][%n] %v'),
    '[%Y-%m-%d %T.%e][%t][%l][%n] [%g:%#] %v',
  );
  assert.equal(withLocationPrefix('%v|%v'), '[%g:%#] %v|[%g:%#] %v');
  assert.equal(withLocationPrefix('100%%v'), '100%%v');
  assert.equal(withLocationPrefix('%%%v'), '%%[%g:%#] %v');
  assert.equal(withLocationPrefix('%n'), '%n');
});

test('escaping: C escapes, control characters in hex, text untouched', { timeout: 20000 }, () => {
  assert.equal(escapeLogLine('a\nb\tc\rd "q" \'s\' \\ \x01\x1b\x7f\n'), 'a\\nb\\tc\\rd \\"q\\" \\\'s\\\' \\\\ \\x01\\x1b\\x7f\n');
  assert.equal(escapeLogLine('plain text, été\n'), 'plain text, été\n');
});

test('escaping keeps the trailing whitespace of the line', { timeout: 20000 }, () => {
  assert.equal(escapeLogLine('one\ntwo \t\r\n'), 'one\\ntwo \t\r\n');
  assert.equal(escapeLogLine('\n\n'), '\n\n');
});

test('an escaped format keeps a multi-line message on one line', { timeout: 20000 }, () => {
  const context = { ...CONTEXT, escaped: true };
  const record = recordAt(new Date(2026, 10, 21), { message: 'first\nsecond\tthird' });
  assert.equal(compilePattern('[%n] %v', context).format(record), '[upstream] first\\nsecond\\tthird\n');
  assert.equal(compilePattern('[%n] %v', CONTEXT).format(record), '[upstream] first\nsecond\tthird\n');
  // As in Envoy 1.16, the whole line is escaped, the pattern's own text included.
  assert.equal(compilePattern('"%v"', context).format(recordAt(new Date(), { message: 'x' })), '\\"x\\"\n');
});
