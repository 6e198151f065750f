// The aggregate cluster's balancer in a worker's cluster manager: the children's priorities
// linearized in list order, the load split by health (Envoy's arithmetic), the child picking at
// the chosen priority, and the list following membership and CDS changes.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { ClusterConfig } from '../../src/config/model';
import { LiveRuntime } from '../../src/runtime/live_runtime';
import { createHeapStatsStore, type SharedStatsStore } from '../../src/stats/store';
import { ClusterManager } from '../../src/upstream/worker/cluster_manager';
import { HealthFlag } from '../../src/upstream/shared/health_flags';
import { silentLogger, staticCluster, type EndpointSpec } from '../helpers/data_plane';
import { MembershipDriver, staticSnapshots } from '../helpers/membership';
import type { RandomSource } from '../../src/common/random';

const NO_DOWNSTREAM = {};

function aggregate(name: string, clusters: string[]): ClusterConfig {
  return staticCluster(name, [], {
    lbPolicy: 'CLUSTER_PROVIDED',
    clusterType: { name: 'proxy.clusters.aggregate', typedConfig: { '@type': 'type.googleapis.com/envoy.extensions.clusters.aggregate.v3.ClusterConfig', clusters } },
  });
}

/** Draws 0, 1, 2, ... 99, 0, ...: every point of a 100-percent split once per hundred draws. */
function sweep(): RandomSource {
  let next = 0;
  return () => next++ % 100;
}

interface Setup {
  readonly clusters: ClusterManager;
  readonly store: SharedStatsStore;
  /** Sets or clears FAILED_ACTIVE_HC on `cluster`'s host at 127.0.0.1:`port`. */
  fail(cluster: string, port: number, failed: boolean): void;
  /** The port each of `n` picks of `cluster` lands on, counted. */
  picks(cluster: string, n: number): Map<number, number>;
}

function setup(configs: ClusterConfig[], random: RandomSource = sweep(), buildOnFirstUse = false): Setup {
  const store = createHeapStatsStore();
  const drivers = new Map<string, MembershipDriver>();
  for (const config of configs) {
    const driver = new MembershipDriver(config.name, store.hosts);
    driver.next(config.loadAssignment.endpoints);
    drivers.set(config.name, driver);
  }
  const clusters = new ClusterManager({ configs, snapshots: [...drivers.values()].map((d) => d.snapshot), store, runtime: new LiveRuntime([]), random, log: () => silentLogger, buildOnFirstUse });
  return {
    clusters,
    store,
    fail: (cluster, port, failed) => clusters.update(drivers.get(cluster)!.setHealthFlags(`127.0.0.1:${port}`, HealthFlag.FAILED_ACTIVE_HC, failed)),
    picks: (cluster, n) => {
      const counts = new Map<number, number>();
      for (let i = 0; i < n; i++) {
        const port = clusters.get(cluster)!.chooseHost(null)?.port ?? 0;
        counts.set(port, (counts.get(port) ?? 0) + 1);
      }
      return counts;
    },
  };
}

/** Picks per child: the primary's ports are below 2000, the secondary's above. */
function byChild(counts: Map<number, number>): { primary: number; secondary: number; none: number } {
  const sum = (keep: (port: number) => boolean) => [...counts].filter(([port]) => keep(port)).reduce((total, [, n]) => total + n, 0);
  return { primary: sum((p) => p > 0 && p < 2000), secondary: sum((p) => p >= 2000), none: sum((p) => p === 0) };
}

const hosts = (...ports: number[]): EndpointSpec[] => ports.map((port) => ({ port }));

test('traffic fails over from the first cluster to the next as its hosts fail, by Envoy\'s arithmetic (overprovisioning 1.4)', () => {
  const { fail, picks, clusters } = setup([aggregate('agg', ['primary', 'secondary']), staticCluster('primary', hosts(1001, 1002)), staticCluster('secondary', hosts(2001, 2002))]);
  assert.deepEqual(byChild(picks('agg', 100)), { primary: 100, secondary: 0, none: 0 });
  // Half the primary healthy: availability floor(1.4 * 50) = 70 percent.
  fail('primary', 1001, true);
  assert.deepEqual(byChild(picks('agg', 100)), { primary: 70, secondary: 30, none: 0 });
  assert.equal(picks('agg', 100).get(1001), undefined, 'the child picks among its healthy hosts');
  fail('primary', 1002, true);
  assert.deepEqual(byChild(picks('agg', 100)), { primary: 0, secondary: 100, none: 0 });
  fail('primary', 1001, false);
  fail('primary', 1002, false);
  assert.deepEqual(byChild(picks('agg', 100)), { primary: 100, secondary: 0, none: 0 });
  clusters.close();
});

test('a worker that builds clusters on first use builds the children when the aggregate needs them, from the updates they took meanwhile', () => {
  const { fail, picks, clusters } = setup([aggregate('agg', ['primary', 'secondary']), staticCluster('primary', hosts(1001, 1002)), staticCluster('secondary', hosts(2001))], sweep(), true);
  fail('primary', 1001, true);
  assert.deepEqual(byChild(picks('agg', 100)), { primary: 70, secondary: 30, none: 0 });
  fail('primary', 1002, true);
  assert.deepEqual(byChild(picks('agg', 100)), { primary: 0, secondary: 100, none: 0 });
  clusters.close();
});

test('every child unhealthy: the load follows host counts (total panic), as Envoy\'s base balancer does', () => {
  const { fail, picks, clusters } = setup([aggregate('agg', ['primary', 'secondary']), staticCluster('primary', hosts(1001)), staticCluster('secondary', hosts(2001, 2002, 2003))]);
  fail('primary', 1001, true);
  for (const port of [2001, 2002, 2003]) fail('secondary', port, true);
  assert.deepEqual(byChild(picks('agg', 100)), { primary: 25, secondary: 75, none: 0 });
  clusters.close();
});

test('priorities linearize in list order, skipping empty ones; the child picks at the priority the aggregate chose', () => {
  const primary = staticCluster('primary', [{ port: 1001 }, { port: 1002 }, { port: 1101, priority: 1 }, { port: 1301, priority: 3 }]);
  // Draws alternate 99, 0, 99, ...: a child choosing its priority itself would take the 0 after each 99.
  let draw = 0;
  const { fail, clusters } = setup([aggregate('agg', ['primary', 'secondary']), primary, staticCluster('secondary', hosts(2001))], () => (draw++ % 2 === 0 ? 99 : 0));
  fail('primary', 1001, true);
  // Linearized [primary.P0 (70), primary.P1 (100), primary.P3, secondary.P0]: loads 70, 30, 0, 0.
  // Draw 99 is primary.P1's and the child picks there without a draw of its own; draw 0 is primary.P0's.
  const agg = clusters.get('agg')!;
  assert.deepEqual(Array.from({ length: 6 }, () => agg.chooseHost(null)?.port), [1101, 1002, 1101, 1002, 1101, 1002]);
  clusters.close();
});

test('a host the aggregate picked is served by its child: same pools, same host stats, same circuit breakers', () => {
  const { clusters } = setup([aggregate('agg', ['primary']), staticCluster('primary', hosts(1001))]);
  const agg = clusters.get('agg')!;
  const primary = clusters.get('primary')!;
  const host = agg.chooseHost(null)!;
  assert.equal(agg.hostCluster(host), primary);
  assert.equal(primary.hostCluster(host), primary);
  assert.equal(agg.hostStats(host), primary.hostStats(host));
  const pool = agg.httpPool(host, NO_DOWNSTREAM, 'DEFAULT', 'http1');
  assert.ok(pool !== null);
  assert.equal(pool, primary.httpPool(host, NO_DOWNSTREAM, 'DEFAULT', 'http1'));
  clusters.close();
});

test('children CDS adds later, replaces and removes are followed; a missing child is skipped', () => {
  const { clusters, store, picks } = setup([aggregate('agg', ['later', 'secondary']), staticCluster('secondary', hosts(2001))]);
  assert.deepEqual([...picks('agg', 4)], [[2001, 4]]);
  const add = (config: ClusterConfig) => clusters.add(config, staticSnapshots([config], store.hosts)[0]!);
  add(staticCluster('later', hosts(1001)));
  assert.deepEqual([...picks('agg', 4)], [[1001, 4]]);
  add(staticCluster('later', hosts(1002)));
  assert.deepEqual([...picks('agg', 4)], [[1002, 4]]);
  add(staticCluster('secondary', hosts(2002)));
  clusters.remove('later');
  assert.deepEqual([...picks('agg', 4)], [[2002, 4]]);
  clusters.remove('secondary');
  assert.deepEqual([...picks('agg', 4)], [[0, 4]], 'no child with hosts: no host');
  clusters.close();
});

test('an aggregate CDS replaces stops following its children', () => {
  const { clusters, store, fail } = setup([staticCluster('primary', hosts(1001)), staticCluster('secondary', hosts(2001))]);
  const add = (config: ClusterConfig) => clusters.add(config, staticSnapshots([config], store.hosts)[0]!);
  add(aggregate('agg', ['primary', 'secondary']));
  const old = clusters.get('agg')!;
  add(aggregate('agg', ['primary', 'secondary']));
  fail('primary', 1001, true);
  // The new one fails over; the retired one no longer hears of its children (its requests in flight are done).
  assert.equal(clusters.get('agg')!.chooseHost(null)?.port, 2001);
  assert.equal(old.chooseHost(null)?.port, 1001);
  clusters.close();
});
