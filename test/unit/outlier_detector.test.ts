// Outlier detection end to end in one process: the workers' monitors (SharedHostMonitor) count
// into the host table of a heap stats region, as workers do into shared memory, and the
// supervisor's detector, on a ManualClock, ejects and returns hosts through membership updates.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { clusterStatuses } from '../../src/admin/clusters_handler';
import { renderClustersJson, renderClustersText } from '../../src/admin/clusters_text';
import { healthStatusJson } from '../../src/admin/clusters_handler';
import type { OutlierDetection } from '../../src/config/model';
import { LiveRuntime } from '../../src/runtime/live_runtime';
import { HostRecordField } from '../../src/shared_memory/region_layout';
import { createHeapStatsStore } from '../../src/stats/store';
import { HealthFlag, healthFlagsString } from '../../src/upstream/shared/health_flags';
import { hostKey, type MembershipUpdate } from '../../src/upstream/shared/membership';
import { type OutlierDetector, outlierDetectionFactory, outlierDetectorOf } from '../../src/upstream/supervisor/outlier/detector';
import { OutlierResult } from '../../src/upstream/worker/outlier/host_monitor';
import { SharedHostMonitor } from '../../src/upstream/worker/outlier/shared_host_monitor';
import { SupervisorClusterManager } from '../../src/upstream/supervisor/supervisor_cluster_manager';
import { silentLogger, staticCluster } from '../helpers/data_plane';
import { subscriptionFactory } from '../helpers/subscriptions';
import { ManualClock } from '../helpers/manual_clock';
import { seededRandom } from '../helpers/seeded_random';
import type { RandomSource } from '../../src/common/random';
import { builtinExtensions } from '../../src/extensions/builtin_extensions';
import { clusterTypes } from '../../src/extensions/supervisor_factories';

/** Envoy 1.16's defaults, with a 1 s interval and 3 s base ejection time to keep the arithmetic short. */
function outlierConfig(overrides: Partial<OutlierDetection> = {}): OutlierDetection {
  return {
    consecutive5xx: 5,
    consecutiveGatewayFailure: 5,
    consecutiveLocalOriginFailure: 5,
    intervalMs: 1000,
    baseEjectionTimeMs: 3000,
    maxEjectionPercent: 10,
    enforcingConsecutive5xx: 100,
    enforcingConsecutiveGatewayFailure: 0,
    enforcingConsecutiveLocalOriginFailure: 100,
    enforcingSuccessRate: 100,
    enforcingLocalOriginSuccessRate: 100,
    enforcingFailurePercentage: 0,
    enforcingFailurePercentageLocalOrigin: 0,
    successRateMinimumHosts: 5,
    successRateRequestVolume: 100,
    successRateStdevFactor: 1900,
    failurePercentageThreshold: 85,
    failurePercentageMinimumHosts: 5,
    failurePercentageRequestVolume: 50,
    splitExternalLocalOriginErrors: false,
    ...overrides,
  };
}

/** A seeded uint32 source, as the detector draws its enforcing decisions. */
function seededUint32(seed: number): RandomSource {
  const next = seededRandom(seed);
  return () => Math.floor(next() * 0x100000000);
}

async function setup(hosts: number, overrides: Partial<OutlierDetection> = {}, random: RandomSource = seededUint32(13)) {
  const store = createHeapStatsStore();
  const clock = new ManualClock();
  const runtime = new LiveRuntime([]);
  const updates: MembershipUpdate[] = [];
  const base = staticCluster(
    'c',
    Array.from({ length: hosts }, (_, i) => ({ port: 1000 + i })),
    { outlierDetection: outlierConfig(overrides) },
  );
  // The detector's own timers only: ejections reach the workers unmerged.
  const config = { ...base, commonLbConfig: { ...base.commonLbConfig, updateMergeWindowMs: 0 } };
  const clusters = new SupervisorClusterManager([config], {
    subscriptions: subscriptionFactory(store, silentLogger),
    types: clusterTypes(builtinExtensions()),
    hosts: store.hosts,
    stats: store,
    log: () => silentLogger,
    clock,
    runtime,
    healthSources: [outlierDetectionFactory(random)],
    onUpdate: (u) => updates.push(u),
  });
  await clusters.initialize();
  const detector = outlierDetectorOf(clusters.healthSources('c'))!;
  assert.ok(detector !== null);
  const members = clusters.snapshots()[0]!.hosts;
  // One monitor per host, as a worker's Cluster makes them; a threshold goes straight to the detector.
  const monitors = members.map((member) => {
    const { words, index } = store.hostRecord(member.slot);
    return new SharedHostMonitor(words, index, config.outlierDetection!, runtime, (failure) => detector.onConsecutiveFailure(member.slot, failure));
  });
  const ejected = () =>
    clusters
      .snapshots()[0]!
      .hosts.map((h, i) => ((h.healthFlags & HealthFlag.FAILED_OUTLIER_CHECK) !== 0 ? i : -1))
      .filter((i) => i >= 0);
  const stat = (name: string) => store.snapshot().get(`cluster.c.outlier_detection.${name}`);
  const keys = members.map(hostKey);
  return { store, clock, runtime, clusters, detector, monitors, ejected, stat, keys, updates };
}

function respond(monitor: SharedHostMonitor, code: number, times: number): void {
  for (let i = 0; i < times; i++) monitor.putHttpResponseCode(code);
}

test('the detector declares Envoy 1.16 outlier stats at 0', async () => {
  const { stat, clusters } = await setup(1);
  for (const name of [
    'ejections_active',
    'ejections_total',
    'ejections_overflow',
    'ejections_enforced_total',
    'ejections_consecutive_5xx',
    'ejections_success_rate',
    ...['consecutive_5xx', 'success_rate', 'consecutive_gateway_failure', 'consecutive_local_origin_failure', 'local_origin_success_rate', 'failure_percentage', 'local_origin_failure_percentage'].flatMap((t) => [
      `ejections_detected_${t}`,
      `ejections_enforced_${t}`,
    ]),
  ]) {
    assert.equal(stat(name), 0, name);
  }
  clusters.close();
});

test('consecutive 5xx: five in a row eject at once; a success in between starts the run over', async () => {
  const { monitors, ejected, stat, store, clusters, updates } = await setup(10);
  const m = monitors[0]!;
  respond(m, 500, 4);
  m.putHttpResponseCode(200);
  respond(m, 500, 4);
  assert.deepEqual(ejected(), []);
  m.putHttpResponseCode(500);
  assert.deepEqual(ejected(), [0]);
  // The ejection is a membership update for the workers, changing that host alone.
  assert.deepEqual(updates.at(-1)!.changed, ['127.0.0.1:1000']);
  assert.equal(stat('ejections_active'), 1);
  assert.equal(stat('ejections_detected_consecutive_5xx'), 1);
  assert.equal(stat('ejections_enforced_consecutive_5xx'), 1);
  assert.equal(stat('ejections_consecutive_5xx'), 1);
  assert.equal(stat('ejections_total'), 1);
  assert.equal(stat('ejections_enforced_total'), 1);
  // The run is reset for the next one.
  const host = clusters.snapshots()[0]!.hosts[0]!;
  const { words, index } = store.hostRecord(host.slot);
  assert.equal(Atomics.load(words, index + HostRecordField.Consecutive5xx), 0);
  clusters.close();
});

test('gateway failures: 502-504 count as 5xx too; enforcing_consecutive_gateway_failure defaults to 0', async () => {
  const { monitors, ejected, stat, clusters } = await setup(10, { consecutive5xx: 100 });
  respond(monitors[0]!, 503, 5);
  // Detected, but Envoy enforces none by default.
  assert.equal(stat('ejections_detected_consecutive_gateway_failure'), 1);
  assert.equal(stat('ejections_enforced_consecutive_gateway_failure'), 0);
  assert.deepEqual(ejected(), []);
  clusters.close();
});

test('gateway failures eject when enforced; a 500 breaks the gateway run', async () => {
  const { monitors, ejected, stat, clusters } = await setup(10, { consecutive5xx: 100, enforcingConsecutiveGatewayFailure: 100 });
  respond(monitors[0]!, 502, 4);
  monitors[0]!.putHttpResponseCode(500);
  respond(monitors[0]!, 504, 4);
  assert.deepEqual(ejected(), []);
  monitors[0]!.putHttpResponseCode(503);
  assert.deepEqual(ejected(), [0]);
  assert.equal(stat('ejections_enforced_consecutive_gateway_failure'), 1);
  clusters.close();
});

test('an ejected host returns after base_ejection_time, and its second ejection lasts twice as long', async () => {
  const { monitors, ejected, stat, clock, clusters } = await setup(10);
  respond(monitors[0]!, 500, 5);
  assert.deepEqual(ejected(), [0]);
  // Checked at each 1 s interval: out for 3 s (base x 1).
  clock.advance(2000);
  assert.deepEqual(ejected(), [0]);
  clock.advance(1000);
  assert.deepEqual(ejected(), []);
  assert.equal(stat('ejections_active'), 0);
  // Ejected again at t=3 s: base x 2 = 6 s, so it returns at the interval of t=9 s.
  respond(monitors[0]!, 500, 5);
  assert.deepEqual(ejected(), [0]);
  clock.advance(5000);
  assert.deepEqual(ejected(), [0]);
  clock.advance(1000);
  assert.deepEqual(ejected(), []);
  assert.equal(stat('ejections_enforced_consecutive_5xx'), 2);
  clusters.close();
});

test('max_ejection_percent: an ejection that would pass it counts as overflow instead', async () => {
  const { monitors, ejected, stat, clusters } = await setup(5, { maxEjectionPercent: 20 });
  respond(monitors[0]!, 500, 5);
  // 1 of 5 is 20%: no more while it is out.
  respond(monitors[1]!, 500, 5);
  respond(monitors[2]!, 500, 5);
  assert.deepEqual(ejected(), [0]);
  assert.equal(stat('ejections_overflow'), 2);
  assert.equal(stat('ejections_detected_consecutive_5xx'), 3);
  assert.equal(stat('ejections_active'), 1);
  clusters.close();
});

test('success rate: one skewed host among five is ejected below mean - 1.9 stdev', async () => {
  const { monitors, ejected, stat, clock, clusters, detector, keys, store } = await setup(5);
  // Rates 100, 100, 100, 100, 50 over 100 requests each: mean 90, stdev 20, threshold 90 - 38 = 52.
  for (const m of monitors.slice(0, 4)) respond(m, 200, 100);
  for (let i = 0; i < 50; i++) {
    monitors[4]!.putHttpResponseCode(200);
    monitors[4]!.putHttpResponseCode(500);
  }
  clock.advance(1000);
  assert.deepEqual(ejected(), [4]);
  assert.deepEqual(detector.successRateSummary('external'), { average: 90, ejectionThreshold: 52 });
  assert.deepEqual(detector.successRateSummary('local_origin'), { average: -1, ejectionThreshold: -1 });
  assert.deepEqual(keys.map((k) => detector.successRate(k, 'external')), [100, 100, 100, 100, 50]);
  assert.equal(stat('ejections_detected_success_rate'), 1);
  assert.equal(stat('ejections_enforced_success_rate'), 1);
  assert.equal(stat('ejections_success_rate'), 1);

  // GET /clusters shows the interval's figures.
  const statuses = clusterStatuses(clusters.snapshots(), (slot) => store.hosts.read(slot), () => null, () => detector);
  const text = renderClustersText('static', statuses, healthFlagsString);
  assert.match(text, /^c::outlier::success_rate_average::90\nc::outlier::success_rate_ejection_threshold::52\nc::outlier::local_origin_success_rate_average::-1\nc::outlier::local_origin_success_rate_ejection_threshold::-1\nc::default_priority::/m);
  assert.match(text, /^c::127\.0\.0\.1:1004::success_rate::50\.0$/m);
  assert.match(text, /^c::127\.0\.0\.1:1004::health_flags::\/failed_outlier_check$/m);
  assert.match(text, /^c::127\.0\.0\.1:1000::local_origin_success_rate::-1\.0$/m);
  const json = JSON.parse(renderClustersJson(statuses, healthStatusJson)) as { cluster_statuses: Record<string, unknown>[] };
  const cluster = json.cluster_statuses[0]!;
  assert.deepEqual(Object.keys(cluster), ['name', 'success_rate_ejection_threshold', 'host_statuses', 'circuit_breakers']);
  assert.deepEqual(cluster.success_rate_ejection_threshold, { value: 52 });

  // The next interval had no requests: every rate is back to -1.
  clock.advance(1000);
  assert.deepEqual(keys.map((k) => detector.successRate(k, 'external')), [-1, -1, -1, -1, -1]);
  assert.deepEqual(detector.successRateSummary('external'), { average: -1, ejectionThreshold: -1 });
  clusters.close();
});

test('success rate needs success_rate_request_volume on success_rate_minimum_hosts hosts', async () => {
  const { monitors, ejected, clock, clusters, detector, keys } = await setup(5);
  for (const m of monitors.slice(0, 4)) respond(m, 200, 100);
  respond(monitors[4]!, 200, 40);
  respond(monitors[4]!, 500, 3);
  clock.advance(1000);
  assert.deepEqual(ejected(), []);
  // The low-volume host has volume for neither check (min(100, 50) = 50): no rate shown.
  assert.deepEqual(keys.map((k) => detector.successRate(k, 'external')), [100, 100, 100, 100, -1]);
  assert.deepEqual(detector.successRateSummary('external'), { average: -1, ejectionThreshold: -1 });
  clusters.close();
});

test('failure percentage: a host failing at least failure_percentage_threshold percent is ejected when enforced', async () => {
  const { monitors, ejected, stat, clock, clusters } = await setup(5, { enforcingFailurePercentage: 100, consecutive5xx: 1000 });
  // 60 requests each: under the success rate's volume of 100, over the failure percentage's 50.
  for (const m of monitors.slice(0, 4)) respond(m, 200, 60);
  respond(monitors[4]!, 200, 6);
  respond(monitors[4]!, 500, 54);
  clock.advance(1000);
  assert.deepEqual(ejected(), [4]);
  assert.equal(stat('ejections_detected_failure_percentage'), 1);
  assert.equal(stat('ejections_enforced_failure_percentage'), 1);
  assert.equal(stat('ejections_detected_success_rate'), 0);
  clusters.close();
});

test('without the split, local-origin results count as HTTP codes: a failed connect is a 503', async () => {
  const { monitors, ejected, stat, clusters, store, clock } = await setup(10);
  const m = monitors[0]!;
  // A connect success alone says nothing (the response's code will).
  m.putResult(OutlierResult.LocalOriginConnectSuccess);
  for (let i = 0; i < 4; i++) m.putResult(OutlierResult.LocalOriginConnectFailed);
  m.putResult(OutlierResult.LocalOriginTimeout);
  assert.deepEqual(ejected(), [0]);
  assert.equal(stat('ejections_enforced_consecutive_5xx'), 1);
  // Nothing reached the local-origin counts.
  const host = clusters.snapshots()[0]!.hosts[1]!;
  monitors[1]!.putResult(OutlierResult.LocalOriginConnectSuccessFinal);
  const { words, index } = store.hostRecord(host.slot);
  assert.equal(Atomics.load(words, index + HostRecordField.LocalOriginTotal), 0);
  assert.equal(Atomics.load(words, index + HostRecordField.ExternalSuccess), 1);
  clock.advance(1000);
  clusters.close();
});

test('split_external_local_origin_errors: connect failures have their own run; 5xx do not break it', async () => {
  const { monitors, ejected, stat, clusters } = await setup(10, { splitExternalLocalOriginErrors: true });
  const m = monitors[0]!;
  for (let i = 0; i < 4; i++) {
    m.putResult(OutlierResult.LocalOriginConnectFailed);
    // A 503 answer after a connect: external, leaves the local-origin run alone.
    m.putHttpResponseCode(503);
  }
  assert.deepEqual(ejected(), []);
  m.putResult(OutlierResult.LocalOriginTimeout);
  assert.deepEqual(ejected(), [0]);
  assert.equal(stat('ejections_enforced_consecutive_local_origin_failure'), 1);
  assert.equal(stat('ejections_detected_consecutive_5xx'), 0);
  clusters.close();
});

test('split: the local-origin success rate ejects on its own, with its own figures', async () => {
  const { monitors, ejected, stat, clock, clusters, detector, keys } = await setup(5, { splitExternalLocalOriginErrors: true });
  for (const m of monitors.slice(0, 4)) for (let i = 0; i < 100; i++) m.putResult(OutlierResult.LocalOriginConnectSuccess);
  for (let i = 0; i < 50; i++) {
    monitors[4]!.putResult(OutlierResult.LocalOriginConnectSuccess);
    monitors[4]!.putResult(OutlierResult.LocalOriginConnectFailed);
  }
  clock.advance(1000);
  assert.deepEqual(ejected(), [4]);
  assert.deepEqual(detector.successRateSummary('local_origin'), { average: 90, ejectionThreshold: 52 });
  assert.deepEqual(keys.map((k) => detector.successRate(k, 'local_origin')), [100, 100, 100, 100, 50]);
  assert.deepEqual(keys.map((k) => detector.successRate(k, 'external')), [-1, -1, -1, -1, -1]);
  assert.equal(stat('ejections_enforced_local_origin_success_rate'), 1);
  clusters.close();
});

test('enforcing percentages: a detected outlier is ejected only when the draw falls under the percentage', async () => {
  // Draws of 149 and 150: 149 % 100 = 49 < 50 ejects, 50 does not.
  const draws = [150, 149];
  const { monitors, ejected, stat, clusters } = await setup(10, { enforcingConsecutive5xx: 50, maxEjectionPercent: 100 }, () => draws.pop()!);
  respond(monitors[0]!, 500, 5);
  respond(monitors[1]!, 500, 5);
  assert.deepEqual(ejected(), [0]);
  assert.equal(stat('ejections_detected_consecutive_5xx'), 2);
  assert.equal(stat('ejections_enforced_consecutive_5xx'), 1);
  // Envoy's deprecated total counts detections that were not overflow, enforced or not.
  assert.equal(stat('ejections_total'), 2);
  clusters.close();
});

test('enforcing percentages with a seeded source: about half of 200 detections eject at 50%', async () => {
  const { monitors, stat, clock, clusters } = await setup(2, { enforcingConsecutive5xx: 50, maxEjectionPercent: 100, baseEjectionTimeMs: 1 }, seededUint32(7));
  for (let i = 0; i < 200; i++) {
    respond(monitors[0]!, 500, 5);
    // Back before the next run.
    clock.advance(1000);
  }
  const enforced = stat('ejections_enforced_consecutive_5xx')!;
  assert.equal(stat('ejections_detected_consecutive_5xx'), 200);
  assert.ok(enforced > 70 && enforced < 130, `${enforced}`);
  clusters.close();
});

test('runtime overrides every value at its use', async () => {
  const { monitors, ejected, stat, clock, clusters, runtime } = await setup(5);
  runtime.replace([
    ['outlier_detection.consecutive_5xx', '2'],
    ['outlier_detection.max_ejection_percent', '40'],
    ['outlier_detection.base_ejection_time_ms', '500'],
  ]);
  respond(monitors[0]!, 500, 2);
  respond(monitors[1]!, 500, 2);
  respond(monitors[2]!, 500, 2);
  // 40% of 5: two, then overflow.
  assert.deepEqual(ejected(), [0, 1]);
  assert.equal(stat('ejections_overflow'), 1);
  // Back at the first interval (500 ms base).
  clock.advance(1000);
  assert.deepEqual(ejected(), []);
  // The interval itself, the success rate's volume and factor, and the enforcing percentage.
  runtime.replace([
    ['outlier_detection.interval_ms', '5000'],
    ['outlier_detection.enforcing_consecutive_5xx', '0'],
    ['outlier_detection.success_rate_request_volume', '10'],
    ['outlier_detection.success_rate_stdev_factor', '100'],
  ]);
  for (const m of monitors.slice(0, 4)) respond(m, 200, 10);
  respond(monitors[4]!, 200, 9);
  respond(monitors[4]!, 503, 1);
  // The timer set at t=1 s used the old interval: t=2 s; the next is 5 s later.
  clock.advance(1000);
  // 90% against 100s: mean 98, stdev 4, threshold 98 - 0.1 * 4 = 97.6.
  assert.deepEqual(ejected(), [4]);
  respond(monitors[3]!, 500, 5);
  assert.deepEqual(ejected(), [4]);
  assert.equal(stat('ejections_detected_consecutive_5xx'), 4);
  assert.equal(clock.pendingDelays()[0], 5000);
  clusters.close();
});

test('a freed host slot comes back with zeroed outlier counts', () => {
  const store = createHeapStatsStore();
  const slot = store.hosts.allocate();
  const { words, index } = store.hostRecord(slot);
  Atomics.store(words, index + HostRecordField.Consecutive5xx, 4);
  Atomics.store(words, index + HostRecordField.LocalOriginTotal, 9);
  store.hosts.free(slot);
  const again = store.hosts.allocate();
  assert.equal(again.slot, slot.slot);
  const record = store.hostRecord(again);
  for (let field = HostRecordField.Consecutive5xx; field <= HostRecordField.LocalOriginTotal; field++) assert.equal(Atomics.load(record.words, record.index + field), 0);
});

test('a message about a host slot that was reused is ignored', async () => {
  const { detector, ejected, clusters } = await setup(5);
  const host = clusters.snapshots()[0]!.hosts[0]!;
  (detector as OutlierDetector).onConsecutiveFailure({ slot: host.slot.slot, generation: host.slot.generation + 1 }, 'consecutive_5xx');
  assert.deepEqual(ejected(), []);
  clusters.close();
});
