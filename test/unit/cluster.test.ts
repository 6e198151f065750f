import assert from 'node:assert/strict';
import { test } from 'node:test';
import { LiveRuntime } from '../../src/runtime/live_runtime';
import type { ClusterConfig, LocalityLbEndpoints } from '../../src/config/model';
import { createHeapStatsStore, SharedStatsStore } from '../../src/stats/store';
import { DEFAULT_POLICY, MembershipDriver, staticSnapshots } from '../helpers/membership';
import { FieldError } from '../../src/config/errors';
import { Cluster, MembershipVersionError } from '../../src/upstream/worker/cluster';
import { ClusterManager } from '../../src/upstream/worker/cluster_manager';
import { silentConnectionLogs, silentLogger, staticCluster } from '../helpers/data_plane';
import { ManualClock } from '../helpers/manual_clock';
import { SecretStore } from '../../src/tls/secret_store';

const NO_LOCALITY = { region: '', zone: '', subZone: '' };
/** Requests of no particular downstream connection: the cluster has no upstream filters. */
const NO_DOWNSTREAM = {};

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

/** A cluster 'c', empty, and the driver of its membership. */
function clusterC(store: SharedStatsStore, overrides: Partial<ClusterConfig> = {}): { cluster: Cluster; membership: (endpoints: LocalityLbEndpoints[]) => void } {
  const driver = new MembershipDriver('c', store.hosts);
  const cluster = new Cluster(staticCluster('c', [], overrides), driver.snapshot, { store, runtime: new LiveRuntime([]), random: () => 0, readBuffer: Buffer.alloc(1024), localLocality: null, log: silentLogger, connectionLogs: silentConnectionLogs, secrets: new SecretStore([]), reportsTables: true, onConsecutiveFailure: () => undefined, onHostsPicked: () => undefined, clock: new ManualClock() });
  return {
    cluster,
    membership: (endpoints) => {
      const update = driver.next(endpoints);
      if (update !== null) cluster.update(update);
    },
  };
}

test('the cluster manager builds every cluster and finds them by name', () => {
  const store = createHeapStatsStore();
  const configs = [staticCluster('a', [{ port: 1 }]), staticCluster('b:x', [{ port: 2 }])];
  const clusters = new ClusterManager({ configs, snapshots: staticSnapshots(configs, store.hosts), store, runtime: new LiveRuntime([]), log: () => silentLogger });
  assert.equal(clusters.get('a')?.info.statName, 'a');
  assert.equal(clusters.get('b:x')?.info.statName, 'b_x');
  assert.equal(clusters.get('c'), undefined);
  clusters.close();
});

test('CDS clusters join, replace one of their name and leave; a worker started later builds them from its init', () => {
  const store = createHeapStatsStore();
  const configs = [staticCluster('fixed', [{ port: 1 }])];
  const clusters = new ClusterManager({ configs, snapshots: staticSnapshots(configs, store.hosts), store, runtime: new LiveRuntime([]), log: () => silentLogger });
  const [first] = staticSnapshots([staticCluster('dyn', [{ port: 2 }])], store.hosts);
  clusters.add(staticCluster('dyn', [], { connectTimeoutMs: 1000 }), first!);
  const old = clusters.get('dyn')!;
  assert.equal(old.chooseHost(null)?.port, 2);
  const [second] = staticSnapshots([staticCluster('dyn', [{ port: 3 }])], store.hosts);
  clusters.add(staticCluster('dyn', [], { connectTimeoutMs: 2000 }), second!);
  const replacement = clusters.get('dyn')!;
  assert.notEqual(replacement, old);
  assert.equal(replacement.info.connectTimeoutMs, 2000);
  assert.equal(replacement.chooseHost(null)?.port, 3);
  assert.equal(clusters.remove('dyn'), true);
  assert.equal(clusters.get('dyn'), undefined);
  assert.equal(clusters.remove('dyn'), false);
  assert.equal(clusters.get('fixed')?.chooseHost(null)?.port, 1);

  const dynamicConfigs = [staticCluster('dyn', [], { connectTimeoutMs: 3000 })];
  const restarted = new ClusterManager({ configs, dynamicConfigs, snapshots: [...staticSnapshots(configs, store.hosts), second!], store, runtime: new LiveRuntime([]), log: () => silentLogger });
  assert.equal(restarted.get('dyn')?.chooseHost(null)?.port, 3);
  clusters.close();
  restarted.close();
});

test('a worker builds a cluster on first use, from the membership updates it took before', () => {
  const store = createHeapStatsStore();
  const configs = [staticCluster('lazy', [])];
  const driver = new MembershipDriver('lazy', store.hosts);
  const clusters = new ClusterManager({ configs, snapshots: [], store, runtime: new LiveRuntime([]), log: () => silentLogger, buildOnFirstUse: true });
  clusters.update(driver.next(assignment([80, 81]))!);
  clusters.update(driver.next(assignment([81]))!);
  const stale = { cluster: 'lazy', version: 9, baseVersion: 8, hosts: [], added: [], changed: [], removed: [], policy: DEFAULT_POLICY };
  assert.throws(() => clusters.update(stale), MembershipVersionError);
  const lazy = clusters.get('lazy')!;
  assert.equal(lazy.membershipVersion, 2);
  assert.equal(lazy.chooseHost(null)?.port, 81);
  assert.equal(clusters.get('lazy'), lazy);
  assert.equal(clusters.remove('lazy'), true);
  assert.equal(clusters.get('lazy'), undefined);
  clusters.close();
});

test('CLUSTER_PROVIDED needs a cluster type that provides a balancer', () => {
  const store = createHeapStatsStore();
  const provided = staticCluster('p', [], { lbPolicy: 'CLUSTER_PROVIDED' });
  assert.throws(
    () => new ClusterManager({ configs: [staticCluster('rr', []), provided], snapshots: [], store, runtime: new LiveRuntime([]), log: () => silentLogger }),
    (e: unknown) =>
      e instanceof FieldError &&
      e.fieldPath === 'static_resources.clusters[1].lb_policy' &&
      e.reason === "cluster manager: cluster provided LB specified but cluster 'p' did not provide one. Check cluster documentation.",
  );
});

test('an update made for another version is refused, and the worker keeps its membership', () => {
  const store = createHeapStatsStore();
  const { cluster, membership } = clusterC(store);
  membership(assignment([80]));
  const stale = { cluster: 'c', version: 5, baseVersion: 4, hosts: [], added: [], changed: [], removed: ['10.0.0.1:80'], policy: DEFAULT_POLICY };
  assert.throws(() => cluster.update(stale), MembershipVersionError);
  assert.equal(cluster.membershipVersion, 1);
  assert.equal(cluster.chooseHost(null)?.port, 80);
  cluster.close();
});

test('membership updates keep surviving hosts, their stats and their pools', () => {
  const store = createHeapStatsStore();
  const { cluster, membership } = clusterC(store);
  membership(assignment([80, 81]));
  const first = cluster.chooseHost(null)!;
  assert.equal(first.port, 80);
  const pool = cluster.httpPool(first, NO_DOWNSTREAM, 'DEFAULT', 'http1');
  cluster.hostStats(first).rq_total.inc();

  // 81 leaves, 82 arrives; the round-robin position (1) carries over.
  membership(assignment([80, 82]));
  const picks = [cluster.chooseHost(null)!, cluster.chooseHost(null)!, cluster.chooseHost(null)!];
  assert.deepEqual(picks.map((h) => h.port), [82, 80, 82]);
  const survivor = picks.find((h) => h.port === 80)!;
  assert.equal(survivor, first);
  assert.equal(cluster.httpPool(survivor, NO_DOWNSTREAM, 'DEFAULT', 'http1'), pool);
  assert.equal(cluster.hostStats(survivor).rq_total.value(), 1);
  cluster.close();
});

test('health from the assignment applies on update', () => {
  const { cluster, membership } = clusterC(createHeapStatsStore());
  membership([...assignment([80, 81, 82]), ...assignment([83], 'UNHEALTHY').map((g) => ({ ...g, priority: 0 }))]);
  const ports = Array.from({ length: 6 }, () => cluster.chooseHost(null)!.port);
  assert.deepEqual(ports, [80, 81, 82, 80, 81, 82]);
  membership(assignment([80, 81, 82], 'UNHEALTHY'));
  // Every host unhealthy: panic routing still picks them.
  assert.ok(cluster.chooseHost(null) !== null);
  cluster.close();
});

test('common_lb_config.healthy_panic_threshold: 0 disables panic routing', () => {
  const store = createHeapStatsStore();
  const { cluster, membership } = clusterC(store, { commonLbConfig: { ...staticCluster('c', []).commonLbConfig, healthyPanicThreshold: 0 } });
  membership(assignment([80, 81, 82], 'UNHEALTHY'));
  assert.equal(cluster.chooseHost(null), null);
  cluster.close();
});

test('lb_subset_config: the cluster picks through the subset balancer, its subsets following membership', { timeout: 5000 }, () => {
  const lbSubsetConfig = {
    fallbackPolicy: 'ANY_ENDPOINT' as const,
    defaultSubset: {},
    subsetSelectors: [{ keys: ['version'], fallbackPolicy: 'NOT_DEFINED' as const, fallbackKeysSubset: [] }],
    localityWeightAware: false,
    scaleLocalityWeight: false,
    panicModeAny: false,
    listAsAny: false,
  };
  const { cluster, membership } = clusterC(createHeapStatsStore(), { lbSubsetConfig });
  const versioned = (versions: Record<number, string>): LocalityLbEndpoints[] =>
    assignment(Object.keys(versions).map(Number)).map((group) => ({
      ...group,
      lbEndpoints: group.lbEndpoints.map((e) => ({ ...e, metadata: { 'proxy.lb': { version: versions[e.address.port] } } })),
    }));
  const v1 = { hashKey: null, metadataMatch: [{ name: 'version', value: 'v1' }], downstream: null, hostSelectionRetryCount: 0, shouldSelectAnotherHost: () => false };
  const picks = (context: typeof v1 | null) => [...new Set(Array.from({ length: 8 }, () => cluster.chooseHost(context)?.port))].sort();
  membership(versioned({ 80: 'v1', 81: 'v2', 82: 'v1' }));
  assert.deepEqual(picks(v1), [80, 82]);
  assert.deepEqual(picks(null), [80, 81, 82]);
  membership(versioned({ 80: 'v2', 81: 'v2', 82: 'v1' }));
  assert.deepEqual(picks(v1), [82]);
  assert.equal(cluster.info.stats.gauges.lb_subsets_active.value(), 2);
});

test('least request reads each host rq_active over every worker', () => {
  const store = createHeapStatsStore();
  // Another worker: its own column of the same region.
  const other = new SharedStatsStore(store.region, store.region.claimColumn(0, process.pid));
  const driver = new MembershipDriver('c', store.hosts);
  let draw = 0;
  const environment = { store, runtime: new LiveRuntime([]), random: () => draw++ % 2, readBuffer: Buffer.alloc(1024), log: silentLogger, connectionLogs: silentConnectionLogs, secrets: new SecretStore([]), localLocality: null, reportsTables: true, onConsecutiveFailure: () => undefined, onHostsPicked: () => undefined, clock: new ManualClock() };
  const cluster = new Cluster(staticCluster('c', [], { lbPolicy: 'LEAST_REQUEST' }), driver.snapshot, environment);
  cluster.update(driver.next(assignment([80, 81]))!);
  const [first, second] = cluster.prioritySet.hostSetsPerPriority[0]!.hosts;
  // Each pick samples hosts[0] then hosts[1] (draws alternate 0, 1 after the seed).
  draw = 0;
  assert.equal(cluster.chooseHost(null)?.port, 80);
  other.hostStats(first!.slot!).rq_active.inc();
  draw = 0;
  assert.equal(cluster.chooseHost(null)?.port, 81);
  cluster.hostStats(second!).rq_active.add(2);
  draw = 0;
  assert.equal(cluster.chooseHost(null)?.port, 80);
  cluster.close();
});
