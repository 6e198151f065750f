// Locality-weighted balancing (locality_weighted_lb_config): localities picked by EDF over their
// effective weights, then a host within the locality, exact sequences with fixed seeds.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { DEFAULT_OVERPROVISIONING_FACTOR, type Locality } from '../../src/config/model';
import { HealthFlag } from '../../src/upstream/shared/health_flags';
import type { Host } from '../../src/upstream/worker/host';
import { effectiveLocalityWeight } from '../../src/upstream/worker/lb/locality_scheduler';
import { PrioritySet } from '../../src/upstream/worker/priority_set';
import { staticCluster } from '../helpers/data_plane';
import { balancer, host, ports, type TestBalancer } from '../helpers/load_balancer';

const ZONES: readonly Locality[] = ['a', 'b', 'c'].map((zone) => ({ region: 'r', zone, subZone: '' }));

/** Zone i's hosts have ports 1000 * (i + 1) + n and its locality weight. */
function zone(index: number, weight: number, count: number, spec: (n: number) => Parameters<typeof host>[1] = () => ({})): Host[] {
  return Array.from({ length: count }, (_, n) => host(1000 * (index + 1) + n, { locality: ZONES[index], localityWeight: weight, ...spec(n) }));
}

function weighted(hosts: readonly Host[], localityWeighted = true): TestBalancer {
  const common = staticCluster('c', []).commonLbConfig;
  return balancer(hosts, { config: { commonLbConfig: { ...common, localityWeighted } } });
}

function countByZone(picks: readonly (number | null)[]): number[] {
  const counts = ZONES.map(() => 0);
  for (const port of picks) if (port !== null) counts[Math.floor(port / 1000) - 1]++;
  return counts;
}

test('localities by EDF over their weights, then hosts in turn within each; weight 0 is never picked', { timeout: 5000 }, () => {
  const b = weighted([...zone(0, 1, 2), ...zone(1, 2, 2), ...zone(2, 0, 2)]);
  // EDF over a (1) and b (2): b at 0.5, a at 1 (inserted first), b at 1, b at 1.5, a at 2, b at 2...
  assert.deepEqual(ports(b.lb, 6), [2000, 1000, 2001, 2000, 1001, 2001]);
  assert.deepEqual(countByZone(ports(b.lb, 3000)), [1000, 2000, 0]);
});

test('without locality_weighted_lb_config the locality weights are ignored', { timeout: 5000 }, () => {
  const b = weighted([...zone(0, 1, 2), ...zone(1, 2, 2), ...zone(2, 0, 2)], false);
  assert.deepEqual(countByZone(ports(b.lb, 600)), [200, 200, 200]);
});

test("a locality's weight shrinks with its availability: weight * min(1, 1.4 * healthy / hosts)", { timeout: 5000 }, () => {
  // b: 1 of 4 healthy, 2 * 1.4 * 0.25 = 0.7 against a's 1.
  const hosts = [...zone(0, 1, 2), ...zone(1, 2, 4, (n) => ({ health: n === 0 ? 'HEALTHY' : 'UNHEALTHY' }))];
  const b = weighted(hosts);
  const set = b.set.hostSetsPerPriority[0];
  assert.equal(effectiveLocalityWeight(set, set.healthyHostsPerLocality, 0), 1);
  assert.equal(effectiveLocalityWeight(set, set.healthyHostsPerLocality, 1), 2 * (1.4 * 0.25));
  const counts = countByZone(ports(b.lb, 1700));
  assert.ok(Math.abs(counts[0] - 1000) <= 1 && Math.abs(counts[1] - 700) <= 1, `${counts}`);
  // Only b's healthy host serves b's share.
  assert.ok(ports(b.lb, 100).every((port) => port !== null && port !== 2001 && port !== 2002 && port !== 2003));
});

test("the load assignment's overprovisioning_factor replaces 1.4: at 1.0, b's 1 of 4 healthy weighs 2 * 0.25", { timeout: 5000 }, () => {
  const hosts = [...zone(0, 1, 2), ...zone(1, 2, 4, (n) => ({ health: n === 0 ? 'HEALTHY' : 'UNHEALTHY' }))];
  const b = weighted(hosts);
  b.set.update(hosts, 100);
  b.lb.refresh();
  const set = b.set.hostSetsPerPriority[0];
  assert.equal(set.overprovisioningFactor, 100);
  assert.equal(effectiveLocalityWeight(set, set.healthyHostsPerLocality, 1), 2 * 0.25);
  const counts = countByZone(ports(b.lb, 1500));
  assert.ok(Math.abs(counts[0] - 1000) <= 1 && Math.abs(counts[1] - 500) <= 1, `${counts}`);
});

test('80% available is still full weight (1.4 overprovisioning caps at 1)', { timeout: 5000 }, () => {
  const set = new PrioritySet();
  set.update(zone(0, 3, 5, (n) => ({ health: n === 0 ? 'UNHEALTHY' : 'HEALTHY' })), DEFAULT_OVERPROVISIONING_FACTOR);
  const hostSet = set.hostSetsPerPriority[0];
  assert.equal(effectiveLocalityWeight(hostSet, hostSet.healthyHostsPerLocality, 0), 3);
});

test('hosts awaiting their first health check are left out of the locality arithmetic', { timeout: 5000 }, () => {
  const pending = HealthFlag.FAILED_ACTIVE_HC | HealthFlag.PENDING_ACTIVE_HC;
  const set = new PrioritySet();
  set.update(zone(0, 2, 3, (n) => (n === 0 ? {} : { healthFlags: pending })), DEFAULT_OVERPROVISIONING_FACTOR);
  const hostSet = set.hostSetsPerPriority[0];
  // 1 healthy of 3, but of 1 eligible: full weight, not 2 * 1.4 / 3.
  assert.equal(effectiveLocalityWeight(hostSet, hostSet.healthyHostsPerLocality, 0), 2);
});

test('degraded traffic picks among localities by their degraded hosts', { timeout: 5000 }, () => {
  const b = weighted([...zone(0, 1, 1, () => ({ health: 'DEGRADED' })), ...zone(1, 3, 1, () => ({ health: 'DEGRADED' }))]);
  assert.deepEqual(countByZone(ports(b.lb, 400)), [100, 300, 0]);
});

test('no locality with weight: picks ignore localities', { timeout: 5000 }, () => {
  const b = weighted([...zone(0, 0, 1), ...zone(1, 0, 3)]);
  assert.deepEqual(countByZone(ports(b.lb, 400)), [100, 300, 0]);
});

test('a priority in panic uses all its hosts, whatever their locality weight', { timeout: 5000 }, () => {
  const b = weighted([...zone(0, 1, 2, () => ({ health: 'UNHEALTHY' })), ...zone(1, 0, 2, (n) => ({ health: n === 0 ? 'HEALTHY' : 'UNHEALTHY' }))]);
  assert.deepEqual(countByZone(ports(b.lb, 400)), [200, 200, 0]);
  assert.equal(b.info.stats.counters.lb_healthy_panic.value(), 400);
});

test('unequal host weights within a locality follow its own EDF schedule', { timeout: 5000 }, () => {
  const b = weighted([...zone(0, 1, 2, (n) => ({ weight: n + 1 })), ...zone(1, 1, 1)]);
  const picks = ports(b.lb, 600);
  assert.deepEqual(
    [picks.filter((p) => p === 1000).length, picks.filter((p) => p === 1001).length, picks.filter((p) => p === 2000).length],
    [100, 200, 300],
  );
});
