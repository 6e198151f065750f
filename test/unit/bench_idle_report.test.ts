// The idle-connection benchmark's report: the open-files limit it checks first, the RSS each
// connection costs (the second half's growth), and the verdicts against the targets.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { bytesPerConnection, formatIdleReport, softOpenFilesLimit } from '../../bench/idle_report';

const LIMITS = `Limit                     Soft Limit           Hard Limit           Units
Max cpu time              unlimited            unlimited            seconds
Max open files            20000                1048576              files
Max locked memory         8388608              8388608              bytes
`;

test('the soft open-files limit is read from /proc/<pid>/limits', () => {
  assert.equal(softOpenFilesLimit(LIMITS), 20000);
  assert.equal(softOpenFilesLimit(LIMITS.replace('20000  ', 'unlimited')), Infinity);
  assert.throws(() => softOpenFilesLimit('Max processes 10 10 processes\n'), /no "Max open files" line/);
});

test('the RSS a connection costs is the second half of the connections\' growth', () => {
  // 5,000 connections from 40,000 KiB to 57,500 KiB: 3,584 bytes each.
  const result = { opened: 10_000, closedByProxy: 0, active: 10_000, rssKiB: [20_000, 40_000, 57_500] as const };
  assert.equal(bytesPerConnection(result), 3584);
  assert.equal(
    formatIdleReport(result),
    [
      'idle keep-alive connections (--concurrency 1; each served one request, then left open)',
      '  held:                   10,000 of 10,000 active, 0 closed by the proxy (target: 10,000 without error)  met',
      '  worker RSS per connection: 3,584 bytes over the second half, 4,096 over the first (target: at most 4,096)  met',
    ].join('\n'),
  );
});

test('a connection closed or missing, or more than 4 KiB each, is not met', () => {
  const closed = formatIdleReport({ opened: 10_000, closedByProxy: 3, active: 9_997, rssKiB: [20_000, 40_000, 57_500] });
  assert.match(closed, /9,997 of 10,000 active, 3 closed by the proxy .* not met/);
  const heavy = formatIdleReport({ opened: 10_000, closedByProxy: 0, active: 10_000, rssKiB: [20_000, 40_000, 60_000] });
  assert.match(heavy, /held: .* met\n/);
  assert.match(heavy, /4,096 bytes over the second half, 4,096 over the first \(target: at most 4,096\)  met/);
  const heavier = formatIdleReport({ opened: 10_000, closedByProxy: 0, active: 10_000, rssKiB: [20_000, 40_000, 60_001] });
  assert.match(heavier, /4,096 bytes over the second half.*not met/);
});
