import assert from 'node:assert/strict';
import { test } from 'node:test';
import { HealthFlag } from '../../src/upstream/shared/health_flags';
import type { Host } from '../../src/upstream/worker/host';
import { choosePriority, computePriorityLoad } from '../../src/upstream/worker/lb/priority_load';
import { balancer, host, ports, sequence } from '../helpers/load_balancer';
import { DEFAULT_OVERPROVISIONING_FACTOR } from '../../src/config/model';
import type { RandomSource } from '../../src/common/random';

function rr(hosts: Host[], random: RandomSource) {
  const b = balancer(hosts, { random });
  return { lb: b.lb, update: b.update, healthyPanic: b.info.stats.counters.lb_healthy_panic };
}

test('equal weights: hosts in turn, starting at the seed', () => {
  const hosts = [host(80), host(81), host(82)];
  assert.deepEqual(ports(rr(hosts, sequence(0)).lb, 7), [80, 81, 82, 80, 81, 82, 80]);
  assert.deepEqual(ports(rr(hosts, sequence(4)).lb, 4), [81, 82, 80, 81]);
});

test('unequal weights: EDF picks in proportion to weight, offset by seed % n pre-picks', () => {
  const hosts = [host(80, { weight: 1 }), host(81, { weight: 2 }), host(82, { weight: 3 })];
  // Seed 0: the scheduler's own order (see edf_scheduler.test.ts).
  assert.deepEqual(ports(rr(hosts, sequence(0)).lb, 6), [82, 81, 82, 80, 81, 82]);
  // Seed 4: 4 % 3 = 1 pick skipped.
  assert.deepEqual(ports(rr(hosts, sequence(4)).lb, 5), [81, 82, 80, 81, 82]);
  const { lb } = rr(hosts, sequence(7));
  const counts = new Map<number | null, number>();
  for (const p of ports(lb, 600)) counts.set(p, (counts.get(p) ?? 0) + 1);
  assert.deepEqual([...counts.entries()].sort(), [[80, 100], [81, 200], [82, 300]]);
});

test('weight 0 counts as 1', () => {
  assert.equal(host(80, { weight: 0 }).weight, 1);
});

test('unhealthy, draining and timed-out hosts get no traffic while enough are healthy', () => {
  const hosts = [host(80), host(81, { health: 'UNHEALTHY' }), host(82), host(83, { health: 'DRAINING' }), host(84), host(85, { health: 'TIMEOUT' }), host(86)];
  const { lb, healthyPanic } = rr(hosts, sequence(0));
  assert.deepEqual(ports(lb, 8), [80, 82, 84, 86, 80, 82, 84, 86]);
  assert.equal(healthyPanic.value(), 0);
});

test('below the 50% panic threshold every host is used and lb_healthy_panic counts', () => {
  const hosts = [host(80), host(81, { health: 'UNHEALTHY' }), host(82, { health: 'UNHEALTHY' })];
  const { lb, healthyPanic } = rr(hosts, sequence(0));
  assert.deepEqual(ports(lb, 3), [80, 81, 82]);
  assert.equal(healthyPanic.value(), 3);
});

test('no hosts: no pick', () => {
  const { lb } = rr([], sequence(0));
  assert.equal(lb.chooseHost(null), null);
});

test('refresh applies health changes and keeps the round-robin position', () => {
  const hosts = [host(80), host(81), host(82), host(83)];
  const { lb, update } = rr(hosts, sequence(0));
  assert.deepEqual(ports(lb, 2), [80, 81]);
  hosts[2].healthFlags |= HealthFlag.FAILED_ACTIVE_HC;
  update(hosts);
  // The healthy source keeps its index (2): 80, 81, 83 -> index 2 is 83.
  assert.deepEqual(ports(lb, 3), [83, 80, 81]);
});

test('priorities: P0 takes all traffic while healthy, spills over to P1 as it degrades', () => {
  const p0 = [host(80), host(81), host(82), host(83)];
  const p1 = [host(90, { priority: 1 }), host(91, { priority: 1 })];
  const hosts = [...p0, ...p1];
  const { lb, update } = rr(hosts, sequence(0, 0, 0, 0, 99));
  assert.deepEqual(ports(lb, 4), [80, 81, 82, 83]);
  // 2 of 4 healthy: P0 health = min(100, 140 * 2 / 4) = 70%, P1 gets the other 30%.
  p0[0].healthFlags |= HealthFlag.FAILED_ACTIVE_HC;
  p0[1].healthFlags |= HealthFlag.FAILED_ACTIVE_HC;
  update(hosts);
  // The seed was the first draw; now 0 -> point 1 (P0), 99 -> point 100 (P1).
  assert.deepEqual(ports(lb, 5), [82, 83, 82, 90, 91]);
});

test('priority loads follow Envoy: overprovisioning 1.4, degraded spill, rounding to the first', () => {
  // All healthy.
  assert.deepEqual(computePriorityLoad([{ hosts: 4, healthy: 4, degraded: 0, overprovisioningFactor: DEFAULT_OVERPROVISIONING_FACTOR }]), { healthy: [100], degraded: [0], panic: [false] });
  // Envoy's example: health 10/20/10 and degraded 20/10/0 (after overprovisioning) give
  // 16/28/14 healthy and 28/14/0 degraded (panic disabled: these hosts would all panic).
  const load = computePriorityLoad(
    [
      { hosts: 14, healthy: 1, degraded: 2, overprovisioningFactor: DEFAULT_OVERPROVISIONING_FACTOR },
      { hosts: 14, healthy: 2, degraded: 1, overprovisioningFactor: DEFAULT_OVERPROVISIONING_FACTOR },
      { hosts: 14, healthy: 1, degraded: 0, overprovisioningFactor: DEFAULT_OVERPROVISIONING_FACTOR },
    ],
    0,
  );
  assert.deepEqual(load.healthy, [16, 28, 14]);
  assert.deepEqual(load.degraded, [28, 14, 0]);
  // 80% healthy is still 100% available (112% capped).
  assert.deepEqual(computePriorityLoad([{ hosts: 5, healthy: 4, degraded: 0, overprovisioningFactor: DEFAULT_OVERPROVISIONING_FACTOR }, { hosts: 1, healthy: 1, degraded: 0, overprovisioningFactor: DEFAULT_OVERPROVISIONING_FACTOR }]).healthy, [100, 0]);
});

test('panic: a priority is in panic below the threshold unless total availability is 100%', () => {
  const allUnhealthy = computePriorityLoad([{ hosts: 4, healthy: 0, degraded: 0, overprovisioningFactor: DEFAULT_OVERPROVISIONING_FACTOR }, { hosts: 2, healthy: 0, degraded: 0, overprovisioningFactor: DEFAULT_OVERPROVISIONING_FACTOR }]);
  // Every priority in panic: load by host count.
  assert.deepEqual(allUnhealthy, { healthy: [67, 33], degraded: [0, 0], panic: [true, true] });
  // P0 in panic (1 of 4) but P1 healthy: P1 covers it, nobody panics.
  const covered = computePriorityLoad([{ hosts: 4, healthy: 1, degraded: 0, overprovisioningFactor: DEFAULT_OVERPROVISIONING_FACTOR }, { hosts: 2, healthy: 2, degraded: 0, overprovisioningFactor: DEFAULT_OVERPROVISIONING_FACTOR }]);
  assert.deepEqual(covered, { healthy: [35, 65], degraded: [0, 0], panic: [false, false] });
  // Threshold 0 disables panic; with nothing available P0 nominally keeps all load.
  assert.deepEqual(computePriorityLoad([{ hosts: 2, healthy: 0, degraded: 0, overprovisioningFactor: DEFAULT_OVERPROVISIONING_FACTOR }], 0), { healthy: [100], degraded: [0], panic: [false] });
  assert.deepEqual(choosePriority(covered, 34), { priority: 0, availability: 'healthy' });
  assert.deepEqual(choosePriority(covered, 35), { priority: 1, availability: 'healthy' });
});

test('degraded hosts take the load healthy ones cannot', () => {
  const hosts = [host(80), host(81, { health: 'DEGRADED' }), host(82, { health: 'DEGRADED' }), host(83, { health: 'DEGRADED' })];
  const { lb } = rr(hosts, sequence(0, 0, 0, 99));
  // Healthy availability 35%, degraded 100%: loads 35 healthy / 65 degraded; the seed is the first draw.
  assert.deepEqual(ports(lb, 3), [80, 80, 81]);
});
