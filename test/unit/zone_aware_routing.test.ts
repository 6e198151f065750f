// Zone-aware routing (Envoy's ZoneAwareLoadBalancerBase) through the round robin balancer, with
// the local cluster's priority set beside it: each routing state, each counter, the runtime
// gates, and the local cluster's updates regenerating the plan.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { DEFAULT_OVERPROVISIONING_FACTOR, type Locality } from '../../src/config/model';
import { LiveRuntime } from '../../src/runtime/live_runtime';
import { createHeapStatsStore } from '../../src/stats/store';
import { ClusterManager } from '../../src/upstream/worker/cluster_manager';
import type { Host } from '../../src/upstream/worker/host';
import { planLocalityRouting } from '../../src/upstream/worker/lb/zone_routing';
import { PrioritySet } from '../../src/upstream/worker/priority_set';
import { silentLogger, staticCluster } from '../helpers/data_plane';
import { balancer, host, ports, sequence, type TestBalancer } from '../helpers/load_balancer';
import { staticSnapshots } from '../helpers/membership';
import type { RandomSource } from '../../src/common/random';

const ZONES: readonly Locality[] = ['a', 'b', 'c'].map((zone) => ({ region: 'r', zone, subZone: '' }));
const LOCAL = ZONES[0];

/** counts[i] hosts in zone i, ports 1000 * (i + 1) + n; the first `unhealthy[i]` of each unhealthy. */
function zoned(counts: readonly number[], unhealthy: readonly number[] = []): Host[] {
  return counts.flatMap((count, zone) =>
    Array.from({ length: count }, (_, n) => host(1000 * (zone + 1) + n, { locality: ZONES[zone], health: n < (unhealthy[zone] ?? 0) ? 'UNHEALTHY' : 'HEALTHY' })),
  );
}

function localSet(counts: readonly number[], unhealthy: readonly number[] = []): PrioritySet {
  const set = new PrioritySet(LOCAL);
  set.update(zoned(counts, unhealthy), DEFAULT_OVERPROVISIONING_FACTOR);
  return set;
}

interface ZoneOptions {
  readonly random?: RandomSource;
  readonly runtime?: Readonly<Record<string, string>>;
  readonly zoneAware?: Partial<{ routingEnabled: number; minClusterSize: number; failTrafficOnPanic: boolean }>;
}

function zoneBalancer(upstream: readonly Host[], local: PrioritySet, options: ZoneOptions = {}): TestBalancer {
  const common = staticCluster('c', []).commonLbConfig;
  return balancer(upstream, {
    random: options.random ?? sequence(0),
    runtime: options.runtime,
    localPrioritySet: local,
    localLocality: LOCAL,
    config: { commonLbConfig: { ...common, zoneAware: { ...common.zoneAware, ...options.zoneAware } } },
  });
}

/** The zone (index in ZONES) of each pick. */
function zonesOf(picks: readonly (number | null)[]): (number | null)[] {
  return picks.map((port) => (port === null ? null : Math.floor(port / 1000) - 1));
}

function counters(b: TestBalancer): Record<string, number> {
  const c = b.info.stats.counters;
  const names = [
    'lb_recalculate_zone_structures',
    'lb_zone_cluster_too_small',
    'lb_zone_no_capacity_left',
    'lb_zone_number_differs',
    'lb_zone_routing_all_directly',
    'lb_zone_routing_cross_zone',
    'lb_zone_routing_sampled',
    'lb_local_cluster_not_ok',
    'lb_healthy_panic',
  ] as const;
  return Object.fromEntries(names.map((n) => [n, c[n].value()]).filter(([, v]) => v !== 0));
}

test('all direct: the local zone holds at least its share of upstream hosts, so it takes every pick', { timeout: 5000 }, () => {
  const b = zoneBalancer(zoned([3, 3]), localSet([1, 1]));
  assert.deepEqual(zonesOf(ports(b.lb, 6)), [0, 0, 0, 0, 0, 0]);
  assert.deepEqual(counters(b), { lb_recalculate_zone_structures: 1, lb_zone_routing_all_directly: 6 });
});

test('residual: the local share is sampled out of 10000, the rest goes cross zone by spare capacity', { timeout: 5000 }, () => {
  // Upstream shares 3333/6666, local 5000/5000: 6666 of 10000 picks stay local, the rest go to b.
  assert.deepEqual(planLocalityRouting(setOf(zoned([2, 4])), localSet([1, 1]).hostSetsPerPriority[0], 6), {
    kind: 'residual',
    localPercentToRoute: 6666,
    residualCapacity: [0, 1666],
  });
  // Per pick: the routing_enabled draw, the sample, and for cross-zone picks the capacity draw.
  const random = sequence(0, 0, 6665, 0, 6666, 5, 0, 9999, 1665);
  const b = zoneBalancer(zoned([2, 4]), localSet([1, 1]), { random });
  assert.deepEqual(zonesOf(ports(b.lb, 3)), [0, 1, 1]);
  assert.deepEqual(counters(b), { lb_recalculate_zone_structures: 1, lb_zone_routing_sampled: 1, lb_zone_routing_cross_zone: 2 });
});

test('residual: cross-zone picks follow each zone\'s spare capacity (and a draw of 0 lands on the local zone, as in Envoy)', { timeout: 5000 }, () => {
  // Upstream 2/4/4 (2000/4000/4000), local 4/3/3 (4000/3000/3000): capacity b 1000, c 1000.
  const plan = planLocalityRouting(setOf(zoned([2, 4, 4])), localSet([4, 3, 3]).hostSetsPerPriority[0], 6);
  assert.deepEqual(plan, { kind: 'residual', localPercentToRoute: 5000, residualCapacity: [0, 1000, 2000] });
  const random = sequence(0, 0, 5000, 1, 0, 5000, 1000, 0, 5000, 1001, 0, 5000, 0);
  const b = zoneBalancer(zoned([2, 4, 4]), localSet([4, 3, 3]), { random });
  assert.deepEqual(zonesOf(ports(b.lb, 4)), [1, 1, 2, 0]);
  assert.deepEqual(counters(b), { lb_recalculate_zone_structures: 1, lb_zone_routing_cross_zone: 4 });
});

test('no capacity left (rounding only): a cross-zone pick takes a random zone and counts lb_zone_no_capacity_left', { timeout: 5000 }, () => {
  // Upstream 1/3/3 of 7 (1428/4285/4285), local 286/857/857 of 2000 (1430/4285/4285).
  const local = localSet([286, 857, 857]);
  assert.deepEqual(planLocalityRouting(setOf(zoned([1, 3, 3])), local.hostSetsPerPriority[0], 6), {
    kind: 'residual',
    localPercentToRoute: 9986,
    residualCapacity: [0, 0, 0],
  });
  const b = zoneBalancer(zoned([1, 3, 3]), local, { random: sequence(0, 0, 9986, 5) });
  assert.deepEqual(zonesOf(ports(b.lb, 1)), [2]);
  assert.deepEqual(counters(b), { lb_recalculate_zone_structures: 1, lb_zone_routing_cross_zone: 1, lb_zone_no_capacity_left: 1 });
});

test('skipped with fewer than 2 zones, uncounted: picks go over all healthy hosts', { timeout: 5000 }, () => {
  const b = zoneBalancer(zoned([6]), localSet([1, 1]));
  assert.deepEqual(ports(b.lb, 3), [1000, 1001, 1002]);
  assert.deepEqual(counters(b), { lb_recalculate_zone_structures: 1 });
});

test('skipped when the local zone has no healthy upstream host: lb_local_cluster_not_ok', { timeout: 5000 }, () => {
  // No host in zone a at all: the local locality is not first.
  const missing = zoneBalancer(zoned([0, 3, 3]), localSet([1, 1]));
  assert.deepEqual(zonesOf(ports(missing.lb, 2)), [1, 1]);
  assert.deepEqual(counters(missing), { lb_recalculate_zone_structures: 1, lb_local_cluster_not_ok: 1 });
  // Zone a's hosts are all unhealthy.
  const empty = zoneBalancer(zoned([2, 6]), localSet([1, 1]), { zoneAware: {} });
  empty.update(zoned([2, 6], [2]));
  assert.deepEqual(counters(empty).lb_local_cluster_not_ok, 1);
  assert.deepEqual(zonesOf(ports(empty.lb, 2)), [1, 1]);
});

test('skipped when the zone counts differ: lb_zone_number_differs', { timeout: 5000 }, () => {
  const b = zoneBalancer(zoned([3, 3]), localSet([1, 1, 1]));
  assert.deepEqual(zonesOf(ports(b.lb, 4)), [0, 0, 0, 1]);
  assert.deepEqual(counters(b), { lb_recalculate_zone_structures: 1, lb_zone_number_differs: 1 });
});

test('skipped below min_cluster_size healthy hosts: lb_zone_cluster_too_small; the runtime overrides the size', { timeout: 5000 }, () => {
  const small = zoneBalancer(zoned([2, 3]), localSet([1, 1]));
  assert.deepEqual(zonesOf(ports(small.lb, 3)), [0, 0, 1]);
  assert.deepEqual(counters(small), { lb_recalculate_zone_structures: 1, lb_zone_cluster_too_small: 1 });
  // At 5, routing applies: shares 4000/6000 against 5000/5000 keep 8000 of 10000 local (draws of 0).
  const configured = zoneBalancer(zoned([2, 3]), localSet([1, 1]), { zoneAware: { minClusterSize: 5 } });
  assert.deepEqual(zonesOf(ports(configured.lb, 3)), [0, 0, 0]);
  assert.deepEqual(counters(configured), { lb_recalculate_zone_structures: 1, lb_zone_routing_sampled: 3 });
  const runtime = zoneBalancer(zoned([2, 3]), localSet([1, 1]), { runtime: { 'upstream.zone_routing.min_cluster_size': '5' } });
  assert.deepEqual(zonesOf(ports(runtime.lb, 3)), [0, 0, 0]);
  assert.deepEqual(counters(runtime), { lb_recalculate_zone_structures: 1, lb_zone_routing_sampled: 3 });
});

test('routing_enabled and runtime upstream.zone_routing.enabled gate each pick', { timeout: 5000 }, () => {
  const off = zoneBalancer(zoned([3, 3]), localSet([1, 1]), { zoneAware: { routingEnabled: 0 } });
  assert.deepEqual(zonesOf(ports(off.lb, 4)), [0, 0, 0, 1]);
  assert.deepEqual(counters(off), { lb_recalculate_zone_structures: 1 });
  // 40%: draws 39 and 140 (140 % 100 = 40) decide.
  const some = zoneBalancer(zoned([3, 3]), localSet([1, 1]), { zoneAware: { routingEnabled: 40 }, random: sequence(0, 39, 140) });
  ports(some.lb, 2);
  assert.deepEqual(counters(some), { lb_recalculate_zone_structures: 1, lb_zone_routing_all_directly: 1 });
  const runtimeOff = zoneBalancer(zoned([3, 3]), localSet([1, 1]), { runtime: { 'upstream.zone_routing.enabled': '0' } });
  assert.deepEqual(zonesOf(ports(runtimeOff.lb, 4)), [0, 0, 0, 1]);
  assert.deepEqual(counters(runtimeOff), { lb_recalculate_zone_structures: 1 });
});

test('a local cluster in panic disables zone routing per pick (lb_local_cluster_not_ok), or fails it with fail_traffic_on_panic', { timeout: 5000 }, () => {
  // Local: 1 healthy host of 4.
  const b = zoneBalancer(zoned([3, 3]), localSet([2, 2], [2, 1]));
  assert.deepEqual(zonesOf(ports(b.lb, 4)), [0, 0, 0, 1]);
  assert.deepEqual(counters(b), { lb_recalculate_zone_structures: 1, lb_local_cluster_not_ok: 4 });
  const failing = zoneBalancer(zoned([3, 3]), localSet([2, 2], [2, 1]), { zoneAware: { failTrafficOnPanic: true } });
  assert.deepEqual(ports(failing.lb, 2), [null, null]);
  assert.deepEqual(counters(failing), { lb_recalculate_zone_structures: 1, lb_local_cluster_not_ok: 2 });
});

test('only priority 0 is zone routed', { timeout: 5000 }, () => {
  // P0 unavailable: P1's hosts serve in turn, whatever their zone.
  const p1 = [...zoned([3, 3])].map((h) => host(h.port, { locality: h.locality, priority: 1 }));
  const b = zoneBalancer([host(9000, { locality: LOCAL, health: 'UNHEALTHY' }), ...p1], localSet([1, 1]), { random: sequence(0, 50) });
  assert.deepEqual(zonesOf(ports(b.lb, 4)), [0, 0, 0, 1]);
  assert.equal(counters(b).lb_zone_routing_all_directly, undefined);
});

test("the local cluster's updates regenerate the plan (lb_recalculate_zone_structures)", { timeout: 5000 }, () => {
  const local = localSet([1, 1]);
  const b = zoneBalancer(zoned([2, 4]), local, { random: sequence(0, 0, 0) });
  ports(b.lb, 1);
  assert.equal(counters(b).lb_zone_routing_sampled, 1);
  // Local now 1/2: upstream a (3333) >= local a (3333): all direct.
  local.update(zoned([1, 2]), DEFAULT_OVERPROVISIONING_FACTOR);
  assert.deepEqual(zonesOf(ports(b.lb, 4)), [0, 0, 0, 0]);
  assert.deepEqual(counters(b), { lb_recalculate_zone_structures: 2, lb_zone_routing_sampled: 1, lb_zone_routing_all_directly: 4 });
});

test('a local cluster that grows a second zone turns zone routing on at the next pick', { timeout: 5000 }, () => {
  // One local zone: no locality routing, every pick over all healthy upstream hosts.
  const local = localSet([2]);
  const b = zoneBalancer(zoned([3, 3]), local);
  assert.deepEqual(zonesOf(ports(b.lb, 4)), [0, 0, 0, 1]);
  // Two local zones, upstream a (5000) >= local a (5000): all direct to the local zone.
  local.update(zoned([1, 1]), DEFAULT_OVERPROVISIONING_FACTOR);
  assert.deepEqual(zonesOf(ports(b.lb, 4)), [0, 0, 0, 0]);
  assert.equal(counters(b).lb_zone_routing_all_directly, 4);
});

test('the cluster manager gives every other cluster the local cluster\'s hosts, and its updates reach their balancers', { timeout: 5000 }, () => {
  const endpoints = (counts: readonly number[], port: number) =>
    counts.map((count, zone) => ({
      locality: ZONES[zone],
      priority: 0,
      loadBalancingWeight: 0,
      lbEndpoints: Array.from({ length: count }, (_, n) => ({ address: { address: `10.0.${zone}.${n + 1}`, port }, hostname: '', healthStatus: 'HEALTHY' as const, loadBalancingWeight: 1, metadata: {} })),
    }));
  const configs = [staticCluster('upstream', []), staticCluster('local', [])].map((c, i) => ({
    ...c,
    loadAssignment: { ...c.loadAssignment, endpoints: i === 0 ? endpoints([3, 3], 80) : endpoints([1, 1], 81) },
  }));
  const store = createHeapStatsStore();
  const manager = new ClusterManager({
    configs,
    snapshots: staticSnapshots(configs, store.hosts),
    store,
    runtime: new LiveRuntime([]),
    log: () => silentLogger,
    localClusterName: 'local',
    localLocality: LOCAL,
  });
  const upstream = manager.get('upstream')!;
  const local = manager.get('local')!;
  assert.ok(Array.from({ length: 6 }, () => upstream.chooseHost(null)!.ip).every((ip) => ip.startsWith('10.0.0.')));
  assert.equal(upstream.info.stats.counters.lb_zone_routing_all_directly.value(), 6);
  // The local cluster does not route by its own zones.
  assert.equal(local.info.stats.counters.lb_recalculate_zone_structures.value(), 0);
  const before = upstream.info.stats.counters.lb_recalculate_zone_structures.value();
  local.refreshHealth();
  assert.equal(upstream.info.stats.counters.lb_recalculate_zone_structures.value(), before + 1);
});

function setOf(hosts: readonly Host[]) {
  const set = new PrioritySet(LOCAL);
  set.update(hosts, DEFAULT_OVERPROVISIONING_FACTOR);
  return set.hostSetsPerPriority[0];
}
