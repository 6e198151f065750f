import { LiveRuntime } from '../../src/runtime/live_runtime';
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { ClusterConfig } from '../../src/config/model';
import { createHeapStatsStore } from '../../src/stats/store';
import type { ClusterDiscovery, ClusterType } from '../../src/upstream/supervisor/cluster_discovery';
import { builtinExtensions } from '../../src/extensions/builtin_extensions';
import { clusterTypes } from '../../src/extensions/supervisor_factories';
import { HealthFlag } from '../../src/upstream/shared/health_flags';
import type { DiscoveredHost, MembershipUpdate } from '../../src/upstream/shared/membership';
import { CLUSTER_INIT_TIMEOUT_MS, SupervisorClusterManager, UnknownClusterTypeError } from '../../src/upstream/supervisor/supervisor_cluster_manager';
import { silentLogger, staticCluster } from '../helpers/data_plane';
import { subscriptionFactory } from '../helpers/subscriptions';
import { ManualClock } from '../helpers/manual_clock';
import { DEFAULT_POLICY } from '../helpers/membership';

const NO_LOCALITY = { region: '', zone: '', subZone: '' };

function discovered(port: number, more: Partial<DiscoveredHost> = {}): DiscoveredHost {
  return { address: { address: '10.0.0.1', port }, hostname: '', weight: 1, priority: 0, locality: NO_LOCALITY, localityWeight: 0, metadata: {}, healthFlags: 0, ...more };
}

/** A cluster type whose results the test hands in, and whose initialization it decides. */
function scriptedType(): { type: ClusterType; emit: (hosts: DiscoveredHost[]) => void; initialize: () => void } {
  let onHosts: (hosts: readonly DiscoveredHost[]) => void = () => undefined;
  let initialize: () => void = () => undefined;
  const initialized = new Promise<void>((resolve) => (initialize = resolve));
  const discovery: ClusterDiscovery = { start: (on) => (onHosts = on), initialized, close: () => undefined };
  return { type: { name: 'STRICT_DNS', create: () => discovery }, emit: (hosts) => onHosts(hosts), initialize };
}

function manager(configs: ClusterConfig[], types: ReadonlyMap<string, ClusterType> = clusterTypes(builtinExtensions())) {
  const store = createHeapStatsStore();
  const updates: MembershipUpdate[] = [];
  const clock = new ManualClock();
  const clusters = new SupervisorClusterManager(configs, {
    subscriptions: subscriptionFactory(store, silentLogger),
    types,
    hosts: store.hosts,
    stats: store,
    log: () => silentLogger,
    clock,
    runtime: new LiveRuntime([]),
    onUpdate: (u) => updates.push(u),
  });
  return { store, updates, clusters, clock };
}

test('static clusters: version 1 from the load assignment, a live slot per host, the membership stats', async () => {
  const { store, clusters, updates } = manager([
    staticCluster('mixed', [
      { port: 1, weight: 3 },
      { port: 2, health: 'HEALTHY', weight: 7, priority: 1 },
      { port: 3, health: 'UNHEALTHY', weight: 50 },
      { port: 4, health: 'DEGRADED' },
      { port: 5, health: 'DRAINING' },
    ]),
    staticCluster('empty', []),
  ]);
  await clusters.initialize();
  const [mixed, empty] = clusters.snapshots();
  assert.equal(mixed!.version, 1);
  assert.deepEqual(mixed!.hosts.map((h) => [h.address.port, h.weight, h.priority, h.healthFlags]), [
    [1, 3, 0, 0],
    [3, 50, 0, HealthFlag.FAILED_EDS_HEALTH],
    [4, 1, 0, HealthFlag.DEGRADED_EDS_HEALTH],
    [5, 1, 0, HealthFlag.FAILED_EDS_HEALTH],
    [2, 7, 1, 0],
  ]);
  for (const h of mixed!.hosts) assert.ok(store.hosts.isLive(h.slot));
  assert.equal(new Set(mixed!.hosts.map((h) => h.slot.slot)).size, 5);
  assert.deepEqual(empty, { cluster: 'empty', version: 1, hosts: [], policy: DEFAULT_POLICY });
  const s = store.snapshot();
  assert.equal(s.get('cluster.mixed.membership_total'), 5);
  assert.equal(s.get('cluster.mixed.membership_healthy'), 2);
  assert.equal(s.get('cluster.mixed.membership_degraded'), 1);
  assert.equal(s.get('cluster.mixed.membership_excluded'), 0);
  assert.equal(s.get('cluster.mixed.max_host_weight'), 50);
  // Envoy counts the first population as a membership change; an empty one is none.
  assert.equal(s.get('cluster.mixed.membership_change'), 1);
  assert.equal(s.get('cluster.empty.membership_change'), 0);
  // Workers forked after initialization take the snapshots: nothing was sent.
  assert.deepEqual(updates, []);
  clusters.close();
  for (const h of mixed!.hosts) assert.equal(store.hosts.isLive(h.slot), false);
});

test('later results become versioned updates: added, changed and removed hosts, slots kept, freed and reused', async () => {
  const scripted = scriptedType();
  const { store, clusters, updates } = manager([staticCluster('dns', [], { type: 'STRICT_DNS' })], new Map([['STRICT_DNS', scripted.type]]));
  const initializing = clusters.initialize();
  let done = false;
  void initializing.then(() => (done = true));
  scripted.emit([discovered(80), discovered(81)]);
  await new Promise((resolve) => setImmediate(resolve));
  assert.equal(done, false, 'initialization waits for the cluster type');
  scripted.initialize();
  await initializing;
  const first = clusters.snapshot('dns')!;
  assert.equal(first.version, 1);
  const slot80 = first.hosts[0]!.slot;
  const slot81 = first.hosts[1]!.slot;

  // An unchanged result changes nothing.
  scripted.emit([discovered(80), discovered(81)]);
  assert.equal(updates.length, 0);

  scripted.emit([discovered(80, { weight: 5 }), discovered(82)]);
  assert.equal(updates.length, 1);
  const u = updates[0]!;
  assert.deepEqual([u.baseVersion, u.version, u.added, u.changed, u.removed], [1, 2, ['10.0.0.1:82'], ['10.0.0.1:80'], ['10.0.0.1:81']]);
  assert.deepEqual(u.hosts[0]!.slot, slot80, 'a host that stays keeps its slot');
  assert.equal(store.hosts.isLive(slot81), false, 'a host that left gave its slot back');
  assert.equal(u.hosts[1]!.slot.slot, slot81.slot, 'and the next host to join reuses it');
  assert.notEqual(u.hosts[1]!.slot.generation, slot81.generation);
  assert.equal(clusters.snapshot('dns')!.version, 2);
  assert.equal(store.snapshot().get('cluster.dns.membership_change'), 2);
  assert.equal(store.snapshot().get('cluster.dns.max_host_weight'), 5);
  clusters.close();
});

test('health bits other than EDS survive a rediscovery of the same host', async () => {
  const scripted = scriptedType();
  const { clusters, updates } = manager([staticCluster('dns', [], { type: 'STRICT_DNS' })], new Map([['STRICT_DNS', scripted.type]]));
  scripted.emit([discovered(80, { healthFlags: HealthFlag.FAILED_EDS_HEALTH })]);
  scripted.initialize();
  await clusters.initialize();
  scripted.emit([discovered(80)]);
  assert.equal(updates.at(-1)!.hosts[0]!.healthFlags, 0);
  clusters.close();
});

test("Envoy's phases: secondary clusters (EDS) start once the primary ones are initialized and beforeSecondary (RTDS) has settled", async () => {
  const primary = scriptedType();
  const secondary = scriptedType();
  let secondaryStarted = false;
  const secondaryType: ClusterType = {
    name: 'EDS',
    secondary: true,
    create: (config, context) => {
      const discovery = secondary.type.create(config, context);
      return {
        ...discovery,
        start: (on) => {
          secondaryStarted = true;
          discovery.start(on);
        },
      };
    },
  };
  const { clusters } = manager(
    [staticCluster('eds', [], { type: 'EDS' }), staticCluster('dns', [], { type: 'STRICT_DNS' })],
    new Map([['STRICT_DNS', primary.type], ['EDS', secondaryType]]),
  );
  let rtdsDone: () => void = () => undefined;
  const order: string[] = [];
  let done = false;
  const initializing = clusters
    .initialize(() => {
      order.push('beforeSecondary');
      return new Promise<void>((resolve) => (rtdsDone = resolve));
    })
    .then(() => (done = true));
  const turn = () => new Promise((resolve) => setImmediate(resolve));
  await turn();
  assert.equal(secondaryStarted, false, 'the secondary cluster waits for the primary ones');
  assert.deepEqual(order, []);
  // Both are there from the start, in configuration order.
  assert.deepEqual(clusters.snapshots().map((s) => s.cluster), ['eds', 'dns']);
  primary.initialize();
  await turn();
  assert.deepEqual(order, ['beforeSecondary']);
  assert.equal(secondaryStarted, false, 'and for RTDS');
  rtdsDone();
  await turn();
  assert.equal(secondaryStarted, true);
  assert.equal(done, false);
  secondary.initialize();
  await initializing;
  clusters.close();
});

test('a type the registry lacks is refused by cluster name', async () => {
  const types = new Map([...clusterTypes(builtinExtensions())].filter(([name]) => name !== 'ORIGINAL_DST'));
  const { clusters } = manager([staticCluster('odd', [], { type: 'ORIGINAL_DST' })], types);
  await assert.rejects(clusters.initialize(), (e: Error) => e instanceof UnknownClusterTypeError && /cluster 'odd': cluster type ORIGINAL_DST/.test(e.message));
});

test('initialization stops waiting after the timeout; the late first result then reaches the workers as an update', async () => {
  const scripted = scriptedType();
  const { clusters, updates, clock } = manager([staticCluster('slow', [], { type: 'STRICT_DNS' })], new Map([['STRICT_DNS', scripted.type]]));
  let done = false;
  const initializing = clusters.initialize().then(() => (done = true));
  await new Promise((resolve) => setImmediate(resolve));
  clock.advance(CLUSTER_INIT_TIMEOUT_MS - 1);
  await new Promise((resolve) => setImmediate(resolve));
  assert.equal(done, false);
  clock.advance(1);
  await initializing;
  assert.deepEqual(clusters.snapshot('slow'), { cluster: 'slow', version: 0, hosts: [], policy: DEFAULT_POLICY });
  scripted.emit([discovered(80)]);
  assert.deepEqual([updates[0]!.baseVersion, updates[0]!.version, updates[0]!.added], [0, 1, ['10.0.0.1:80']]);
  clusters.close();
});

/** A started manager of one scripted cluster with `windowMs` of update_merge_window, at version 1. */
async function mergingManager(windowMs: number) {
  const scripted = scriptedType();
  const config = staticCluster('dns', [], { type: 'STRICT_DNS' });
  const m = manager([{ ...config, commonLbConfig: { ...config.commonLbConfig, updateMergeWindowMs: windowMs } }], new Map([['STRICT_DNS', scripted.type]]));
  const initializing = m.clusters.initialize();
  scripted.emit([discovered(80), discovered(81)]);
  scripted.initialize();
  await initializing;
  const counter = (name: string) => m.store.snapshot().get(`cluster_manager.${name}`) ?? 0;
  return { ...m, scripted, counter };
}

test('update_merge_window: a first change goes at once; later weight, health and metadata changes are held and merged until the window ends', async () => {
  const { clusters, updates, clock, scripted, counter } = await mergingManager(1000);
  // The cluster's first update after a quiet window is never held.
  scripted.emit([discovered(80, { weight: 2 }), discovered(81)]);
  assert.equal(updates.length, 1);
  assert.equal(counter('update_out_of_merge_window'), 1);
  clock.advance(100);
  scripted.emit([discovered(80, { weight: 3 }), discovered(81)]);
  clock.advance(200);
  scripted.emit([discovered(80, { weight: 3 }), discovered(81, { healthFlags: HealthFlag.FAILED_EDS_HEALTH, metadata: { 'proxy.lb': { v: 1 } } })]);
  assert.equal(updates.length, 1, 'held');
  // GET /clusters sees the change; the workers' view (what a restarted worker starts from) does not yet.
  assert.equal(clusters.snapshot('dns')!.version, 4);
  assert.equal(clusters.workerSnapshots()[0]!.version, 2);
  clock.advance(799);
  assert.equal(updates.length, 1);
  clock.advance(1);
  assert.equal(updates.length, 2, 'delivered when the window that started at the first held change ends');
  const merged = updates[1]!;
  assert.deepEqual([merged.baseVersion, merged.version, merged.added, merged.changed, merged.removed], [2, 4, [], ['10.0.0.1:80', '10.0.0.1:81'], []]);
  assert.deepEqual(merged.hosts.map((h) => [h.weight, h.healthFlags, h.metadata]), [[3, 0, {}], [1, HealthFlag.FAILED_EDS_HEALTH, { 'proxy.lb': { v: 1 } }]]);
  assert.equal(clusters.workerSnapshots()[0]!.version, 4);
  assert.deepEqual([counter('cluster_updated'), counter('cluster_updated_via_merge'), counter('update_merge_cancelled')], [1, 1, 0]);
  clusters.close();
});

test('update_merge_window: a host added or removed goes at once, carrying the held changes', async () => {
  const { clusters, updates, clock, scripted, counter } = await mergingManager(1000);
  scripted.emit([discovered(80, { weight: 2 }), discovered(81)]);
  clock.advance(10);
  scripted.emit([discovered(80, { weight: 2 }), discovered(81, { weight: 9 })]);
  assert.equal(updates.length, 1);
  scripted.emit([discovered(80, { weight: 2 }), discovered(82)]);
  assert.equal(updates.length, 2);
  const u = updates[1]!;
  assert.deepEqual([u.baseVersion, u.version, u.added, u.changed, u.removed], [2, 4, ['10.0.0.1:82'], [], ['10.0.0.1:81']], 'a held change of a host since removed is dropped');
  assert.equal(counter('update_merge_cancelled'), 1);
  assert.equal(clock.pending, 0, 'the window timer is cancelled');
  // A change right after a delivery is held again.
  scripted.emit([discovered(80, { weight: 4 }), discovered(82)]);
  assert.equal(updates.length, 2);
  clock.advance(1000);
  assert.equal(updates.length, 3);
  assert.equal(updates[2]!.baseVersion, 4);
  assert.deepEqual([counter('cluster_updated'), counter('cluster_updated_via_merge')], [2, 1]);
  clusters.close();
  assert.equal(clock.pending, 0);
});

test('update_merge_window 0 delivers every change at once', async () => {
  const { clusters, updates, clock, scripted } = await mergingManager(0);
  scripted.emit([discovered(80, { weight: 2 }), discovered(81)]);
  scripted.emit([discovered(80, { weight: 3 }), discovered(81)]);
  scripted.emit([discovered(80, { weight: 3, healthFlags: HealthFlag.DEGRADED_EDS_HEALTH }), discovered(81)]);
  assert.deepEqual(updates.map((u) => [u.baseVersion, u.version]), [[1, 2], [2, 3], [3, 4]]);
  assert.equal(clock.pending, 0);
  clusters.close();
});
