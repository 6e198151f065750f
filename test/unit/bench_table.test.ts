import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { RowSummary } from '../../bench/summary';
import { formatErrors, formatFailures, formatGroupTable, formatLatency, formatRatio } from '../../bench/table';

const CLEAN = { errorResponses: 0, socketErrors: { connect: 0, read: 0, write: 0, timeout: 0 } };

function summary(requestsPerSecond: number, cpuUsPerRequest: number | null, errors: Partial<RowSummary> = {}): RowSummary {
  return { requestsPerSecond, p50Us: 806, p99Us: 2020, cpuUsPerRequest, ...CLEAN, ...errors };
}

test('a group table aligns its columns and keeps failed rows in place', () => {
  const table = formatGroupTable('HTTP/1.1, 13-byte body', [
    { label: 'direct (upstream)', outcome: { kind: 'measured', summary: summary(62980.4, null), ratios: { requestsPerSecond: 1.395, cpuPerRequest: null } } },
    { label: 'nginx', outcome: { kind: 'measured', summary: summary(45146, 17.66), ratios: { requestsPerSecond: 1, cpuPerRequest: 1 } } },
    { label: 'proxy', outcome: { kind: 'failed', error: 'proxy exited with code 1 before serving\nError: boom' } },
    {
      label: 'node-http-proxy',
      outcome: {
        kind: 'measured',
        summary: summary(5220, 100.7, { errorResponses: 12, socketErrors: { connect: 0, read: 3, write: 0, timeout: 0 } }),
        ratios: { requestsPerSecond: 0.1156, cpuPerRequest: 5.702 },
      },
    },
  ]);
  assert.equal(
    table,
    [
      'HTTP/1.1, 13-byte body',
      '  row                 req/s    p50     p99  CPU us/req  req/s vs nginx  CPU vs nginx  errors',
      '  direct (upstream)  62,980  806us  2.02ms           -           1.40x             -  none',
      '  nginx              45,146  806us  2.02ms        17.7           1.00x         1.00x  none',
      '  proxy              failed: proxy exited with code 1 before serving',
      '  node-http-proxy     5,220  806us  2.02ms       100.7           0.12x         5.70x  status>=400 12, read 3',
    ].join('\n'),
  );
});

test('latency picks the unit that keeps the number readable', () => {
  assert.equal(formatLatency(806.4), '806us');
  assert.equal(formatLatency(1010), '1.01ms');
  assert.equal(formatLatency(2_100_000), '2.10s');
});

test('ratios print with two decimals, or a dash when there is nothing to compare with', () => {
  assert.equal(formatRatio(0.8333), '0.83x');
  assert.equal(formatRatio(null), '-');
});

test('every kind of error shows, and a clean row says so', () => {
  assert.equal(formatErrors(summary(1, 1)), 'none');
  assert.equal(
    formatErrors(summary(1, 1, { errorResponses: 5, socketErrors: { connect: 1, read: 2, write: 3, timeout: 4 } })),
    'status>=400 5, connect 1, read 2, write 3, timeout 4',
  );
});

test('a failure shared by several rows is printed once, with its details indented', () => {
  const start = 'proxy exited with code 1 before serving\nError: Cannot find module\n    at main.js:6';
  assert.equal(
    formatFailures([
      { row: 'http / proxy', error: start },
      { row: 'http-16k / proxy', error: start },
      { row: 'tcp / proxy tcp_proxy', error: 'wrk exited with code 1: unable to connect' },
    ]),
    [
      'Failed rows',
      '  http / proxy, http-16k / proxy: proxy exited with code 1 before serving',
      '    Error: Cannot find module',
      '        at main.js:6',
      '  tcp / proxy tcp_proxy: wrk exited with code 1: unable to connect',
    ].join('\n'),
  );
});
