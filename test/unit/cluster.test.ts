import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { ClusterConfig, LocalityLbEndpoints } from '../../src/config/model';
import { createHeapStatsStore, SharedStatsStore } from '../../src/stats/store';
import { assignHostSlots } from '../../src/upstream/host_slots';
import { Cluster, UnsupportedClusterError } from '../../src/upstream/cluster';
import { ClusterManager } from '../../src/upstream/cluster_manager';
import { staticCluster } from '../helpers/data_plane';

const NO_LOCALITY = { region: '', zone: '', subZone: '' };

function assignment(ports: readonly number[], health: 'HEALTHY' | 'UNHEALTHY' = 'HEALTHY'): LocalityLbEndpoints[] {
  return [
    {
      locality: NO_LOCALITY,
      priority: 0,
      loadBalancingWeight: 0,
      lbEndpoints: ports.map((port) => ({ address: { address: '10.0.0.1', port }, hostname: '', healthStatus: health, loadBalancingWeight: 1, metadata: {} })),
    },
  ];
}

/** A cluster 'c' whose host stats slots cover ports 80..83. */
function clusterC(store: SharedStatsStore, overrides: Partial<ClusterConfig> = {}): Cluster {
  const slots = assignHostSlots([{ ...staticCluster('c', []), loadAssignment: { clusterName: 'c', endpoints: assignment([80, 81, 82, 83]) } }], store.hosts);
  return new Cluster(staticCluster('c', [], overrides), store, slots, () => 0, Buffer.alloc(1024));
}

test('the cluster manager builds every cluster and finds them by name', () => {
  const store = createHeapStatsStore();
  const configs = [staticCluster('a', [{ port: 1 }]), staticCluster('b:x', [{ port: 2 }])];
  const clusters = new ClusterManager(configs, store, assignHostSlots(configs, store.hosts));
  assert.equal(clusters.get('a')?.info.statName, 'a');
  assert.equal(clusters.get('b:x')?.info.statName, 'b_x');
  assert.equal(clusters.get('c'), undefined);
  clusters.close();
});

test('discovery types and policies the data plane cannot serve are refused', () => {
  const store = createHeapStatsStore();
  assert.throws(() => new ClusterManager([staticCluster('dns', [], { type: 'STRICT_DNS' })], store, {}), UnsupportedClusterError);
  assert.throws(() => new ClusterManager([staticCluster('lr', [], { lbPolicy: 'LEAST_REQUEST' })], store, {}), UnsupportedClusterError);
});

test('membership updates keep surviving hosts, their stats and their pools', () => {
  const store = createHeapStatsStore();
  const cluster = clusterC(store);
  cluster.updateMembership(assignment([80, 81]));
  const first = cluster.chooseHost()!;
  assert.equal(first.port, 80);
  const pool = cluster.httpPool(first);
  cluster.hostStats(first).rq_total.inc();

  // 81 leaves, 82 arrives; the round-robin position (1) carries over.
  cluster.updateMembership(assignment([80, 82]));
  const picks = [cluster.chooseHost()!, cluster.chooseHost()!, cluster.chooseHost()!];
  assert.deepEqual(picks.map((h) => h.port), [82, 80, 82]);
  const survivor = picks.find((h) => h.port === 80)!;
  assert.equal(survivor, first);
  assert.equal(cluster.httpPool(survivor), pool);
  assert.equal(cluster.hostStats(survivor).rq_total.value(), 1);
  cluster.close();
});

test('health from the assignment applies on update', () => {
  const cluster = clusterC(createHeapStatsStore());
  cluster.updateMembership([...assignment([80, 81, 82]), ...assignment([83], 'UNHEALTHY').map((g) => ({ ...g, priority: 0 }))]);
  const ports = Array.from({ length: 6 }, () => cluster.chooseHost()!.port);
  assert.deepEqual(ports, [80, 81, 82, 80, 81, 82]);
  cluster.updateMembership(assignment([80, 81, 82], 'UNHEALTHY'));
  // Every host unhealthy: panic routing still picks them.
  assert.ok(cluster.chooseHost() !== null);
  cluster.close();
});

test('common_lb_config.healthy_panic_threshold: 0 disables panic routing', () => {
  const store = createHeapStatsStore();
  const cluster = clusterC(store, { commonLbConfig: { ...staticCluster('c', []).commonLbConfig, healthyPanicThreshold: 0 } });
  cluster.updateMembership(assignment([80, 81, 82], 'UNHEALTHY'));
  assert.equal(cluster.chooseHost(), null);
  cluster.close();
});
