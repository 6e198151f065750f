// Envoy's health check state machine and check timing, as pure functions: first success,
// thresholds, network versus active failures, pending hosts, edge intervals, jitter bounds and
// the no-traffic interval.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { HealthCheck } from '../../src/config/model';
import { HealthFlag } from '../../src/upstream/shared/health_flags';
import { initialCheckDelay, nextCheckDelay } from '../../src/upstream/supervisor/health_check/check_interval';
import { type CheckOutcome, INITIAL_COUNTS, judge, type Verdict } from '../../src/upstream/supervisor/health_check/verdict';
import { seededRandom } from '../helpers/seeded_random';

const FAILED = HealthFlag.FAILED_ACTIVE_HC;
const DEGRADED = HealthFlag.DEGRADED_ACTIVE_HC;
const PENDING = HealthFlag.PENDING_ACTIVE_HC;
const OK: CheckOutcome = { kind: 'success', degraded: false };
const DEGRADED_OK: CheckOutcome = { kind: 'success', degraded: true };
const NETWORK: CheckOutcome = { kind: 'failure', type: 'NETWORK' };
const ACTIVE: CheckOutcome = { kind: 'failure', type: 'ACTIVE' };

const thresholds = { healthyThreshold: 3, unhealthyThreshold: 2, alwaysLogHealthCheckFailures: false };

/** Runs outcomes from a new host's flags; every verdict along the way. */
function run(flags: number, outcomes: CheckOutcome[], t = thresholds): Verdict[] {
  let counts = INITIAL_COUNTS;
  return outcomes.map((outcome) => {
    const verdict = judge(flags, counts, outcome, t);
    flags = verdict.flags;
    counts = verdict.counts;
    return verdict;
  });
}

test('the first success marks a new host healthy at once, and says so as a first check', () => {
  const [v] = run(FAILED, [OK]);
  assert.equal(v!.flags, 0);
  assert.equal(v!.transition, 'Changed');
  assert.deepEqual(v!.events, [{ kind: 'add_healthy', firstCheck: true }]);
});

test('after a failure, healthy_threshold successes in a row are needed, each pending until the last', () => {
  const verdicts = run(FAILED, [NETWORK, OK, OK, NETWORK, OK, OK, OK]);
  assert.deepEqual(verdicts.map((v) => [v.flags & FAILED, v.transition]), [
    [FAILED, 'Unchanged'],
    [FAILED, 'ChangePending'],
    [FAILED, 'ChangePending'],
    // A failure starts the count again.
    [FAILED, 'Unchanged'],
    [FAILED, 'ChangePending'],
    [FAILED, 'ChangePending'],
    [0, 'Changed'],
  ]);
  assert.deepEqual(verdicts[6]!.events, [{ kind: 'add_healthy', firstCheck: false }]);
  // The first check's failure is logged even without always_log_health_check_failures.
  assert.deepEqual(verdicts[0]!.events, [{ kind: 'health_check_failure', failureType: 'NETWORK', firstCheck: true }]);
  assert.deepEqual(verdicts[3]!.events, []);
});

test('network failures count to unhealthy_threshold; an active failure ejects at once', () => {
  const network = run(FAILED, [OK, NETWORK, OK, NETWORK, NETWORK]);
  assert.deepEqual(network.map((v) => [v.flags & FAILED, v.transition]), [
    [0, 'Changed'],
    [0, 'ChangePending'],
    // A success resets the count.
    [0, 'Unchanged'],
    [0, 'ChangePending'],
    [FAILED, 'Changed'],
  ]);
  assert.deepEqual(network[4]!.events, [{ kind: 'eject_unhealthy', failureType: 'NETWORK' }]);
  const active = run(FAILED, [OK, ACTIVE]);
  assert.equal(active[1]!.flags, FAILED);
  assert.equal(active[1]!.transition, 'Changed');
  assert.deepEqual(active[1]!.events, [{ kind: 'eject_unhealthy', failureType: 'ACTIVE' }]);
});

test('always_log_health_check_failures logs every failure', () => {
  const verdicts = run(FAILED, [OK, NETWORK, NETWORK], { ...thresholds, alwaysLogHealthCheckFailures: true });
  assert.deepEqual(verdicts[1]!.events, [{ kind: 'health_check_failure', failureType: 'NETWORK', firstCheck: false }]);
  assert.deepEqual(verdicts[2]!.events, [
    { kind: 'eject_unhealthy', failureType: 'NETWORK' },
    { kind: 'health_check_failure', failureType: 'NETWORK', firstCheck: false },
  ]);
});

test('degraded answers set and clear DEGRADED_ACTIVE_HC, a change of its own', () => {
  const verdicts = run(FAILED, [DEGRADED_OK, DEGRADED_OK, OK]);
  assert.deepEqual(verdicts.map((v) => [v.flags, v.transition]), [
    [DEGRADED, 'Changed'],
    [DEGRADED, 'Unchanged'],
    [0, 'Changed'],
  ]);
  assert.deepEqual(verdicts[0]!.events, [{ kind: 'add_healthy', firstCheck: true }, { kind: 'degraded_healthy_host' }]);
  assert.deepEqual(verdicts[2]!.events, [{ kind: 'no_longer_degraded_host' }]);
});

test('the first verdict clears PENDING_ACTIVE_HC, whatever it is, and is a change for the balancers', () => {
  const [failed] = run(FAILED | PENDING, [NETWORK]);
  assert.equal(failed!.flags, FAILED);
  assert.equal(failed!.transition, 'Changed');
  const [passed] = run(FAILED | PENDING, [OK]);
  assert.equal(passed!.flags, 0);
});

test('judging leaves other sources’ bits alone', () => {
  const other = HealthFlag.FAILED_OUTLIER_CHECK | HealthFlag.FAILED_EDS_HEALTH;
  const [v] = run(FAILED | other, [OK]);
  assert.equal(v!.flags, other);
});

const config: HealthCheck = {
  timeoutMs: 1000,
  intervalMs: 10_000,
  initialJitterMs: 0,
  intervalJitterMs: 0,
  intervalJitterPercent: 0,
  unhealthyThreshold: 2,
  healthyThreshold: 3,
  noTrafficIntervalMs: 60_000,
  unhealthyIntervalMs: 5_000,
  unhealthyEdgeIntervalMs: 2_000,
  healthyEdgeIntervalMs: 3_000,
  reuseConnection: true,
  transportSocketMatchCriteria: null,
  eventLogPath: '',
  alwaysLogHealthCheckFailures: false,
  checker: { kind: 'tcp', send: '', receive: [] },
};
const traffic = { hadTraffic: true, minIntervalMs: 0, maxIntervalMs: Number.MAX_SAFE_INTEGER };
const never = () => assert.fail('no jitter configured: no random number is drawn');

test('intervals: by outcome and transition, edge intervals while a threshold counts', () => {
  assert.equal(nextCheckDelay(config, true, 'Unchanged', traffic, never), 10_000);
  assert.equal(nextCheckDelay(config, true, 'Changed', traffic, never), 10_000);
  assert.equal(nextCheckDelay(config, true, 'ChangePending', traffic, never), 3_000);
  assert.equal(nextCheckDelay(config, false, 'Unchanged', traffic, never), 5_000);
  assert.equal(nextCheckDelay(config, false, 'Changed', traffic, never), 5_000);
  assert.equal(nextCheckDelay(config, false, 'ChangePending', traffic, never), 2_000);
});

test('no_traffic_interval until the cluster has had a connection', () => {
  const quiet = { ...traffic, hadTraffic: false };
  for (const transition of ['Unchanged', 'Changed', 'ChangePending'] as const) {
    assert.equal(nextCheckDelay(config, true, transition, quiet, never), 60_000);
    assert.equal(nextCheckDelay(config, false, transition, quiet, never), 60_000);
  }
});

test('jitter: interval_jitter and interval_jitter_percent add within their bounds; the runtime clamps; never 0', () => {
  const jittered = { ...config, intervalJitterMs: 700, intervalJitterPercent: 20 };
  const random = (() => {
    const r = seededRandom(13);
    return () => Math.floor(r() * 0x100000000);
  })();
  const delays = Array.from({ length: 2000 }, () => nextCheckDelay(jittered, true, 'Unchanged', traffic, random));
  const min = Math.min(...delays);
  const max = Math.max(...delays);
  assert.ok(min >= 10_000 && max < 10_000 + 2_000 + 700, `${min}..${max}`);
  // Spread over the whole range, not stuck at one end.
  assert.ok(min < 10_300 && max > 12_300, `${min}..${max}`);
  assert.equal(nextCheckDelay(config, true, 'Unchanged', { ...traffic, maxIntervalMs: 4_000 }, never), 4_000);
  assert.equal(nextCheckDelay(config, true, 'Unchanged', { ...traffic, minIntervalMs: 20_000 }, never), 20_000);
  assert.equal(nextCheckDelay({ ...config, intervalMs: 0 }, true, 'Unchanged', traffic, never), 1);
});

test('initial_jitter delays the first check by less than itself; without it the first check runs at once', () => {
  assert.equal(initialCheckDelay(config, traffic, never), 0);
  const random = (() => {
    const r = seededRandom(7);
    return () => Math.floor(r() * 0x100000000);
  })();
  const delays = Array.from({ length: 500 }, () => initialCheckDelay({ ...config, initialJitterMs: 250 }, traffic, random));
  assert.ok(Math.min(...delays) >= 1 && Math.max(...delays) < 250);
  assert.ok(Math.max(...delays) > 200);
});
