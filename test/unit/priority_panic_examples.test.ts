// Envoy's documented examples of priority levels, degraded endpoints and the panic threshold
// (arch_overview/upstream/load_balancing: priority, degraded, panic_threshold), row by row,
// and the panic threshold's settings. Each priority has 100 hosts, so a percentage of
// endpoints is a host count. Where a documented figure is not what Envoy's arithmetic gives
// (integer loads, rounding leftovers to the first priority), the row says so and holds Envoy's.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { loadBootstrap } from '../../src/config/load';
import { HealthFlag } from '../../src/upstream/shared/health_flags';
import type { Host } from '../../src/upstream/worker/host';
import { computePriorityLoad, type HostCounts } from '../../src/upstream/worker/lb/priority_load';
import { staticCluster } from '../helpers/data_plane';
import { balancer, host, ports, sequence } from '../helpers/load_balancer';
import { DEFAULT_OVERPROVISIONING_FACTOR } from '../../src/config/model';
import { builtinExtensions } from '../../src/extensions/builtin_extensions';

const HOSTS = 100;

/** `percents[i]` healthy hosts out of 100 at priority i, the rest unhealthy. */
function healthyCounts(percents: readonly number[]): HostCounts[] {
  return percents.map((healthy) => ({ hosts: HOSTS, healthy, degraded: 0, overprovisioningFactor: DEFAULT_OVERPROVISIONING_FACTOR }));
}

interface PriorityRow {
  /** Healthy endpoints per priority, percent. */
  readonly healthy: readonly number[];
  /** Traffic per priority, percent, as documented. */
  readonly traffic: readonly number[];
  /** Envoy's own figures, where the document's are off. */
  readonly envoy?: readonly number[];
}

// priority.rst: two priorities, P=1 100% healthy.
const TWO_LEVELS_P1_HEALTHY: readonly PriorityRow[] = [
  { healthy: [100, 100], traffic: [100, 0] },
  { healthy: [72, 100], traffic: [100, 0] },
  { healthy: [71, 100], traffic: [99, 1] },
  { healthy: [50, 100], traffic: [70, 30] },
  { healthy: [25, 100], traffic: [35, 65] },
  { healthy: [0, 100], traffic: [0, 100] },
];

// priority.rst: two priorities, both varying.
const TWO_LEVELS: readonly PriorityRow[] = [
  { healthy: [100, 100], traffic: [100, 0] },
  { healthy: [72, 72], traffic: [100, 0] },
  { healthy: [71, 71], traffic: [99, 1] },
  { healthy: [50, 50], traffic: [70, 30] },
  { healthy: [25, 100], traffic: [35, 65] },
  { healthy: [25, 25], traffic: [50, 50] },
];

// priority.rst: three priorities.
const THREE_LEVELS: readonly PriorityRow[] = [
  { healthy: [100, 100, 100], traffic: [100, 0, 0] },
  { healthy: [72, 72, 100], traffic: [100, 0, 0] },
  { healthy: [71, 71, 100], traffic: [99, 1, 0] },
  { healthy: [50, 50, 100], traffic: [70, 30, 0] },
  { healthy: [25, 100, 100], traffic: [35, 65, 0] },
  { healthy: [25, 25, 100], traffic: [35, 35, 30] },
  // Health 35/35/28 (normalized total 98) gives 35/35/28; the 2 left go to P=0.
  { healthy: [25, 25, 20], traffic: [36, 36, 28], envoy: [37, 35, 28] },
];

// The priority page describes the load split alone: panic (the next table) is disabled here,
// else the last rows, every priority below 50%, would split by host count.
for (const [name, rows] of [
  ['two priorities, P=1 healthy', TWO_LEVELS_P1_HEALTHY],
  ['two priorities', TWO_LEVELS],
  ['three priorities', THREE_LEVELS],
] as const) {
  test(`priority levels (${name}): Envoy's example table`, { timeout: 5000 }, () => {
    for (const row of rows) {
      const load = computePriorityLoad(healthyCounts(row.healthy), 0);
      assert.deepEqual(load.healthy, row.envoy ?? row.traffic, `healthy ${row.healthy.join('/')}`);
    }
  });
}

// degraded.rst: P=0 healthy/degraded/unhealthy percent -> traffic to its healthy, degraded hosts.
const DEGRADED: readonly { readonly hosts: readonly [number, number, number]; readonly traffic: readonly [number, number] }[] = [
  { hosts: [100, 0, 0], traffic: [100, 0] },
  { hosts: [71, 0, 29], traffic: [100, 0] },
  { hosts: [71, 29, 0], traffic: [99, 1] },
  { hosts: [25, 65, 10], traffic: [35, 65] },
  { hosts: [5, 0, 95], traffic: [100, 0] },
];

test("degraded endpoints: Envoy's example table", { timeout: 5000 }, () => {
  for (const { hosts: [healthy, degraded], traffic } of DEGRADED) {
    const load = computePriorityLoad([{ hosts: HOSTS, healthy, degraded, overprovisioningFactor: DEFAULT_OVERPROVISIONING_FACTOR }]);
    assert.deepEqual([load.healthy[0], load.degraded[0]], traffic, `${healthy}/${degraded}`);
  }
});

interface PanicRow {
  readonly healthy: readonly [number, number];
  readonly traffic: readonly [number, number];
  readonly panic: readonly [boolean, boolean];
  readonly envoy?: readonly [number, number];
}

// panic_threshold.rst, threshold 50%: P=1 healthy, then both varying.
const PANIC: readonly PanicRow[] = [
  { healthy: [72, 100], traffic: [100, 0], panic: [false, false] },
  { healthy: [71, 100], traffic: [99, 1], panic: [false, false] },
  { healthy: [50, 100], traffic: [70, 30], panic: [false, false] },
  { healthy: [25, 100], traffic: [35, 65], panic: [false, false] },
  { healthy: [0, 100], traffic: [0, 100], panic: [false, false] },
  { healthy: [72, 72], traffic: [100, 0], panic: [false, false] },
  { healthy: [71, 71], traffic: [99, 1], panic: [false, false] },
  // Health 70 + 84: P=0 takes its 70 (the priority page's own arithmetic), not 50.
  { healthy: [50, 60], traffic: [50, 50], panic: [false, false], envoy: [70, 30] },
  // As in the priority page's table: 35/65, not 25/75.
  { healthy: [25, 100], traffic: [25, 75], panic: [false, false], envoy: [35, 65] },
  { healthy: [25, 25], traffic: [50, 50], panic: [true, true] },
  // Health 7 + 91 = 98: loads 7 and 92, the 1 left to P=0.
  { healthy: [5, 65], traffic: [7, 93], panic: [true, false], envoy: [8, 92] },
];

test("panic threshold: Envoy's example tables", { timeout: 5000 }, () => {
  for (const row of PANIC) {
    const load = computePriorityLoad(healthyCounts(row.healthy), 50);
    assert.deepEqual(load.healthy, row.envoy ?? row.traffic, `healthy ${row.healthy.join('/')}`);
    assert.deepEqual(load.panic, row.panic, `panic ${row.healthy.join('/')}`);
  }
});

/** `healthy` healthy hosts, then `unhealthy` unhealthy ones, ports from 80. */
function hostsOf(healthy: number, unhealthy: number): Host[] {
  return Array.from({ length: healthy + unhealthy }, (_, i) => host(80 + i, i < healthy ? {} : { health: 'UNHEALTHY' }));
}

test('healthy_panic_threshold: 50% by default, below it every host serves and lb_healthy_panic counts each pick', { timeout: 5000 }, () => {
  const half = balancer(hostsOf(2, 2));
  assert.deepEqual(ports(half.lb, 4), [80, 81, 80, 81]);
  assert.equal(half.info.stats.counters.lb_healthy_panic.value(), 0);
  const quarter = balancer(hostsOf(1, 3));
  assert.deepEqual(ports(quarter.lb, 4), [80, 81, 82, 83]);
  assert.equal(quarter.info.stats.counters.lb_healthy_panic.value(), 4);
});

test('healthy_panic_threshold 0 disables panic: only healthy hosts serve, and none when none is healthy', { timeout: 5000 }, () => {
  const config = { commonLbConfig: { ...balancerConfig(), healthyPanicThreshold: 0 } };
  const b = balancer(hostsOf(1, 3), { config });
  assert.deepEqual(ports(b.lb, 3), [80, 80, 80]);
  assert.equal(b.info.stats.counters.lb_healthy_panic.value(), 0);
  assert.deepEqual(ports(balancer(hostsOf(0, 3), { config }).lb, 2), [null, null]);
});

test('healthy_panic_threshold is truncated to the whole percent: 33.9% does not panic at 67 of 200 healthy', { timeout: 5000 }, () => {
  const loaded = loadBootstrap({
    extensions: builtinExtensions(),
    configYaml: JSON.stringify({
      static_resources: {
        clusters: [
          {
            name: 'c',
            connect_timeout: '1s',
            load_assignment: { cluster_name: 'c', endpoints: [{ lb_endpoints: [{ endpoint: { address: { socket_address: { address: '10.0.0.1', port_value: 80 } } } }] }] },
            common_lb_config: { healthy_panic_threshold: { value: 33.9 } },
          },
        ],
      },
    }),
    bootstrapVersion: 3,
    allowUnknownStaticFields: false,
  });
  const config = loaded.bootstrap.clusters[0];
  assert.equal(config.commonLbConfig.healthyPanicThreshold, 33);
  // 33.5% healthy: above 33, below 34.
  const b = balancer(hostsOf(67, 133), { config: { commonLbConfig: config.commonLbConfig } });
  assert.ok(ports(b.lb, 200).every((port) => port !== null && port < 80 + 67));
  assert.equal(b.info.stats.counters.lb_healthy_panic.value(), 0);
});

test('runtime upstream.healthy_panic_threshold overrides the configured threshold', { timeout: 5000 }, () => {
  // 3 of 5 healthy (availability 84%, so panic is considered): no panic at 50, panic at 80.
  assert.deepEqual(ports(balancer(hostsOf(3, 2)).lb, 4), [80, 81, 82, 80]);
  const raised = balancer(hostsOf(3, 2), { runtime: { 'upstream.healthy_panic_threshold': '80' } });
  assert.deepEqual(ports(raised.lb, 5), [80, 81, 82, 83, 84]);
  assert.equal(raised.info.stats.counters.lb_healthy_panic.value(), 5);
  // And 0 disables it.
  const zero = balancer(hostsOf(1, 3), { runtime: { 'upstream.healthy_panic_threshold': '0' } });
  assert.deepEqual(ports(zero.lb, 2), [80, 80]);
  assert.equal(zero.info.stats.counters.lb_healthy_panic.value(), 0);
});

test('fail_traffic_on_panic: a priority in panic gets no host, and lb_healthy_panic still counts', { timeout: 5000 }, () => {
  const config = { commonLbConfig: { ...balancerConfig(), zoneAware: { routingEnabled: 100, minClusterSize: 6, failTrafficOnPanic: true } } };
  const b = balancer(hostsOf(1, 3), { config });
  assert.deepEqual(ports(b.lb, 2), [null, null]);
  assert.equal(b.info.stats.counters.lb_healthy_panic.value(), 2);
});

// The spec's example of ignore_new_hosts_until_first_hc: P0 = {healthy, new unhealthy, new
// unhealthy}, P1 = {healthy, healthy}.
function newHostsExample(newFlags: number): Host[] {
  return [
    host(80),
    host(81, { healthFlags: newFlags }),
    host(82, { healthFlags: newFlags }),
    host(90, { priority: 1 }),
    host(91, { priority: 1 }),
  ];
}

test('ignore_new_hosts_until_first_hc: new hosts out of the arithmetic keep all traffic on P0 (1 / (3 - 2))', { timeout: 5000 }, () => {
  // The seed, then one draw per pick: hashes 0..99.
  const random = sequence(0, ...Array.from({ length: 100 }, (_, i) => i));
  const b = balancer(newHostsExample(HealthFlag.FAILED_ACTIVE_HC | HealthFlag.PENDING_ACTIVE_HC), { random });
  assert.deepEqual(new Set(ports(b.lb, 100)), new Set([80]));
  assert.equal(b.info.stats.counters.lb_healthy_panic.value(), 0);
});

test('without ignore_new_hosts_until_first_hc the same hosts split by 1.4 overprovisioning: 46% P0, 54% P1', { timeout: 5000 }, () => {
  const random = sequence(0, ...Array.from({ length: 100 }, (_, i) => i));
  const b = balancer(newHostsExample(HealthFlag.FAILED_ACTIVE_HC), { random });
  const picks = ports(b.lb, 100);
  assert.equal(picks.filter((port) => port === 80).length, 46);
  assert.equal(picks.filter((port) => port === 90 || port === 91).length, 54);
  assert.equal(b.info.stats.counters.lb_healthy_panic.value(), 0);
});

test('new hosts do not count toward panic but serve in it', { timeout: 5000 }, () => {
  // 1 healthy of 3 eligible (33%) panics; the pending host is among those served.
  const pending = HealthFlag.FAILED_ACTIVE_HC | HealthFlag.PENDING_ACTIVE_HC;
  const hosts = [host(80), host(81, { health: 'UNHEALTHY' }), host(82, { health: 'UNHEALTHY' }), host(83, { healthFlags: pending })];
  const b = balancer(hosts);
  assert.deepEqual(ports(b.lb, 4), [80, 81, 82, 83]);
  assert.equal(b.info.stats.counters.lb_healthy_panic.value(), 4);
});

function balancerConfig() {
  return staticCluster('c', []).commonLbConfig;
}
