import assert from 'node:assert/strict';
import { test } from 'node:test';
import { formatCurves, formatRestarts, splitFailures } from '../../bench/soak_report';

test("a failure within the window after a worker kill is that worker's; any other counts against the proxy", () => {
  const split = splitFailures(
    [
      { atMs: 999, reason: 'ECONNRESET' },
      { atMs: 1_000, reason: 'ECONNRESET' },
      { atMs: 1_900, reason: 'ECONNRESET' },
      { atMs: 2_100, reason: 'status 503' },
      { atMs: 9_000, reason: 'ECONNRESET' },
    ],
    [1_000, 8_500],
    1_000,
  );
  assert.deepEqual(split, { afterKill: 3, other: 2, reasons: [['ECONNRESET', 4], ['status 503', 1]] });
});

test('the curves: the newest epoch per process, older epochs summed, a dash for a process not there', () => {
  const text = formatCurves(
    [
      {
        atMs: 0,
        processes: [
          { role: 'supervisor', newest: true, pid: 10, rssKiB: 10240, fds: 20 },
          { role: 'worker', newest: true, pid: 12, rssKiB: 20480, fds: 31 },
          { role: 'worker', newest: true, pid: 11, rssKiB: 30720, fds: 30 },
        ],
      },
      {
        atMs: 10_400,
        processes: [
          { role: 'supervisor', newest: true, pid: 20, rssKiB: 10240, fds: 20 },
          { role: 'worker', newest: true, pid: 21, rssKiB: 20480, fds: 30 },
          { role: 'supervisor', newest: false, pid: 10, rssKiB: 1024, fds: 5 },
          { role: 'worker', newest: false, pid: 11, rssKiB: 1024, fds: 6 },
        ],
      },
    ],
    2,
  );
  assert.equal(
    text,
    [
      'RSS / open descriptors per process (the newest epoch; older ones summed)',
      '  t (s)  supervisor     worker 0       worker 1       older epochs',
      '      0  10.0 MiB / 20  30.0 MiB / 30  20.0 MiB / 31  -',
      '     10  10.0 MiB / 20  20.0 MiB / 30  -              2 proc, 2.0 MiB / 11',
    ].join('\n'),
  );
});

test("the restarts' times: median, min and max; none said so", () => {
  assert.equal(formatRestarts([1_900, 1_800, 2_400]), 'hot restarts: 3, SIGHUP to the new epoch serving: median 1900 ms, min 1800 ms, max 2400 ms');
  assert.equal(formatRestarts([]), 'hot restarts: none');
});
