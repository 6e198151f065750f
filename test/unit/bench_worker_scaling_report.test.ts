// The worker-scaling benchmark's report: a round's capacity is its throughput over the busiest
// process's share of a CPU, and the verdict compares the median capacities (exact_balance's run
// against one worker's) against 1.7x; each round's split of CPU and connections between the
// workers is printed, for the runs sharing the listen socket and with reuse_port too.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { capacity, evenCapacity, formatScalingReport, summarizeRun, type ScalingRun } from '../../bench/worker_scaling_report';

const ONE: ScalingRun = {
  concurrency: 1,
  spread: 'shared socket',
  rounds: [
    { requestsPerSecond: 20_000, supervisor: 0.01, workers: [1], connections: [50] },
    { requestsPerSecond: 19_000, supervisor: 0.01, workers: [0.95], connections: [50] },
    { requestsPerSecond: 21_000, supervisor: 0.02, workers: [1], connections: [50] },
  ],
};

test('capacity is the throughput when the busiest process has a CPU to itself', () => {
  const round = { requestsPerSecond: 30_000, supervisor: 0.01, connections: [25, 25] };
  assert.equal(capacity({ ...round, workers: [0.75, 0.5] }), 40_000);
  // A supervisor busier than the workers is the limit.
  assert.equal(capacity({ ...round, supervisor: 0.6, workers: [0.5, 0.5] }), 50_000);
  assert.throws(() => capacity({ ...round, supervisor: 0, workers: [0, 0] }), /no process of the proxy used any CPU/);
  // Split evenly, the two workers would each use 62.5%.
  assert.equal(evenCapacity({ ...round, workers: [0.75, 0.5] }), 48_000);
  assert.equal(evenCapacity({ ...round, supervisor: 0.8, workers: [0.75, 0.5] }), 37_500);
});

test('a run reports its medians and every round\'s split between the workers', () => {
  const two: ScalingRun = {
    concurrency: 2,
    spread: 'exact_balance',
    rounds: [
      { requestsPerSecond: 30_000, supervisor: 0.01, workers: [0.75, 0.75], connections: [26, 24] },
      { requestsPerSecond: 20_000, supervisor: 0.03, workers: [0, 1], connections: [0, 50] },
      { requestsPerSecond: 32_000, supervisor: 0.01, workers: [0.8, 0.8], connections: [25, 25] },
    ],
  };
  const summary = summarizeRun(two);
  assert.equal(summary.requestsPerSecond, 30_000);
  assert.equal(summary.capacity, 40_000);
  // The second round's 20,000 req/s over 50% each: 40,000, the median of 40,000, 40,000, 40,000.
  assert.equal(summary.evenCapacity, 40_000);
  assert.equal(summary.supervisor, 0.03);
  assert.deepEqual(summary.workers, [[0.75, 0.75], [0, 1], [0.8, 0.8]]);
  assert.deepEqual(summary.connections, [[26, 24], [0, 50], [25, 25]]);
  // (0.01 + 1.5) / 30,000 s, (0.03 + 1) / 20,000 s, (0.01 + 1.6) / 32,000 s: the median is 50.3 us.
  assert.ok(Math.abs(summary.cpuUsPerRequest - 50.333) < 0.001, String(summary.cpuUsPerRequest));

  const shared: ScalingRun = {
    concurrency: 2,
    spread: 'shared socket',
    rounds: [{ requestsPerSecond: 24_000, supervisor: 0.01, workers: [0.01, 0.99], connections: [0, 51] }],
  };
  const reusePort: ScalingRun = {
    concurrency: 2,
    spread: 'reuse_port',
    rounds: [{ requestsPerSecond: 28_000, supervisor: 0.01, workers: [0.5, 0.9], connections: [20, 31] }],
  };
  assert.equal(
    formatScalingReport(ONE, [shared, reusePort, two], 'the proxy on any CPU'),
    [
      "worker scaling (the proxy row's configuration and load, a new wrk each round; the proxy on any CPU)",
      '  --concurrency 1: 20,000 req/s, 50.5 us of CPU a request, capacity 20,000 req/s; supervisor at most 2%',
      "    by round, each worker's CPU: 100%, 95%, 100%; its connections: 50, 50, 50",
      '  --concurrency 2, shared socket: 24,000 req/s, 42.1 us of CPU a request, capacity 24,242 req/s (48,000 split evenly); supervisor at most 1%',
      "    by round, each worker's CPU: 1% + 99%; its connections: 0 + 51",
      '  --concurrency 2, reuse_port: 28,000 req/s, 50.4 us of CPU a request, capacity 31,111 req/s (40,000 split evenly); supervisor at most 1%',
      "    by round, each worker's CPU: 50% + 90%; its connections: 20 + 31",
      '  --concurrency 2, exact_balance: 30,000 req/s, 50.3 us of CPU a request, capacity 40,000 req/s (40,000 split evenly); supervisor at most 3%',
      "    by round, each worker's CPU: 75% + 75%, 0% + 100%, 80% + 80%; its connections: 26 + 24, 0 + 50, 25 + 25",
      '  --concurrency 2 against 1, by capacity: shared socket 1.21x (split evenly 2.40x), reuse_port 1.56x (split evenly 2.00x), exact_balance 2.00x (split evenly 2.00x)',
      '  --concurrency 2 with exact_balance against 1: 2.00x (target: at least 1.70x)  met',
      "  (capacity: requests per second over the busiest process's share of a CPU, what the proxy serves when that process has a CPU to itself)",
    ].join('\n'),
  );
});

test('below 1.7x is not met, runs out of order and a round with the wrong number of workers are refused', () => {
  const lopsided: ScalingRun = { concurrency: 2, spread: 'exact_balance', rounds: [{ requestsPerSecond: 24_000, supervisor: 0.01, workers: [0.01, 0.99], connections: [0, 50] }] };
  const shared: ScalingRun = { ...lopsided, spread: 'shared socket' };
  const reusePort: ScalingRun = { ...lopsided, spread: 'reuse_port' };
  assert.match(formatScalingReport(ONE, [shared, reusePort, lopsided], 'x'), /with exact_balance against 1: 1\.21x \(target: at least 1\.70x\)  not met/);
  assert.throws(() => formatScalingReport(ONE, [lopsided, reusePort, shared], 'x'), /then 2 with each of: shared socket, reuse_port, exact_balance/);
  assert.throws(() => formatScalingReport(ONE, [shared, reusePort], 'x'), /then 2 with each of/);
  assert.throws(
    () => summarizeRun({ concurrency: 2, spread: 'shared socket', rounds: [{ requestsPerSecond: 1, supervisor: 0, workers: [1], connections: [50] }] }),
    /measured 1 workers, counted 1/,
  );
  assert.throws(() => summarizeRun({ concurrency: 1, spread: 'shared socket', rounds: [] }), /no rounds at --concurrency 1/);
});
