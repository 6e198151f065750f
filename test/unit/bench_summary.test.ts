import assert from 'node:assert/strict';
import { test } from 'node:test';
import { cpuUsPerRequest, median, percentile, ratiosTo, summarize, SummaryError, type Round } from '../../bench/summary';
import type { LoadResult } from '../../bench/load_result';

function wrk(requestsPerSecond: number, overrides: Partial<LoadResult> = {}): LoadResult {
  return {
    requests: requestsPerSecond * 10,
    durationUs: 10_000_000,
    requestsPerSecond,
    latency: { p50Us: 1_000_000 / requestsPerSecond, p75Us: 0, p90Us: 0, p99Us: 10_000_000 / requestsPerSecond },
    errorResponses: 0,
    socketErrors: { connect: 0, read: 0, write: 0, timeout: 0 },
    ...overrides,
  };
}

test('median of odd and even counts; none is an error', () => {
  assert.equal(median([3, 1, 2]), 2);
  assert.equal(median([4, 1, 3, 2]), 2.5);
  assert.equal(median([7]), 7);
  assert.throws(() => median([]), SummaryError);
});

test('nearest-rank percentile: p99 of 1..100 is 99, of 1..1000 is 990; bad input is an error', () => {
  const hundred = Array.from({ length: 100 }, (_, i) => 100 - i);
  assert.equal(percentile(hundred, 99), 99);
  assert.equal(percentile(hundred, 50), 50);
  assert.equal(percentile(hundred, 100), 100);
  assert.equal(percentile(Array.from({ length: 1000 }, (_, i) => i + 1), 99), 990);
  assert.equal(percentile([5], 1), 5);
  assert.throws(() => percentile([], 50), SummaryError);
  assert.throws(() => percentile([1], 0), SummaryError);
  assert.throws(() => percentile([1], 101), SummaryError);
});

test('CPU per request converts clock ticks to microseconds', () => {
  // 250 ticks at 100 Hz = 2.5 s of CPU over 100,000 requests = 25 us each.
  assert.equal(cpuUsPerRequest(250, 100, 100_000), 25);
  assert.equal(cpuUsPerRequest(250, 100, 0), null);
});

test('a row reports per-metric medians and the sum of every error', () => {
  const rounds: Round[] = [
    { load: wrk(1000, { errorResponses: 2 }), cpuTicks: 20 },
    { load: wrk(4000), cpuTicks: 40 },
    { load: wrk(2000, { socketErrors: { connect: 0, read: 3, write: 0, timeout: 1 } }), cpuTicks: 60 },
  ];
  const summary = summarize(rounds, 100);
  assert.equal(summary.requestsPerSecond, 2000);
  assert.equal(summary.p50Us, 500);
  assert.equal(summary.p99Us, 5000);
  // Per round: 200 ms / 10,000 = 20 us; 400 ms / 40,000 = 10 us; 600 ms / 20,000 = 30 us.
  assert.equal(summary.cpuUsPerRequest, 20);
  assert.equal(summary.errorResponses, 2);
  assert.deepEqual(summary.socketErrors, { connect: 0, read: 3, write: 0, timeout: 1 });
});

test('rows without a proxy process have no CPU cost', () => {
  assert.equal(summarize([{ load: wrk(1000), cpuTicks: null }], 100).cpuUsPerRequest, null);
});

test('ratios divide by the nginx row and are absent without it', () => {
  const nginx = summarize([{ load: wrk(4000), cpuTicks: 40 }], 100);
  const ours = summarize([{ load: wrk(2000), cpuTicks: 40 }], 100);
  assert.deepEqual(ratiosTo(ours, nginx), { requestsPerSecond: 0.5, cpuPerRequest: 2 });
  assert.deepEqual(ratiosTo(ours, null), { requestsPerSecond: null, cpuPerRequest: null });
  const direct = summarize([{ load: wrk(8000), cpuTicks: null }], 100);
  assert.deepEqual(ratiosTo(direct, nginx), { requestsPerSecond: 2, cpuPerRequest: null });
});
