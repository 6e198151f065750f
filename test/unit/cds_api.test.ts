// CdsApi over a real SupervisorClusterManager: each state-of-the-world update is diffed against
// the CDS clusters (added, modified, removed, unchanged), warming holds a change back until the
// new cluster's first result, and a bad resource rejects the update after the good ones apply.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { JsonObject } from '../../src/config/json';
import type { ClusterConfig } from '../../src/config/model';
import { protoSchema } from '../../src/config/schema';
import type { DecodedResource } from '../../src/config/xds/subscription';
import { LiveRuntime } from '../../src/runtime/live_runtime';
import { createHeapStatsStore } from '../../src/stats/store';
import { CdsApi } from '../../src/upstream/supervisor/cds_api';
import type { ClusterDiscovery, ClusterType } from '../../src/upstream/supervisor/cluster_discovery';
import { builtinExtensions } from '../../src/extensions/builtin_extensions';
import { clusterTypes } from '../../src/extensions/supervisor_factories';
import type { ClusterSnapshot, DiscoveredHost } from '../../src/upstream/shared/membership';
import { SupervisorClusterManager } from '../../src/upstream/supervisor/supervisor_cluster_manager';
import { silentLogger, staticCluster } from '../helpers/data_plane';
import { turnsDuring } from '../helpers/event_loop_turns';
import { ManualClock } from '../helpers/manual_clock';
import { subscriptionFactory } from '../helpers/subscriptions';

const NO_LOCALITY = { region: '', zone: '', subZone: '' };
const LAST_UPDATED = new Date('2026-01-02T03:04:05.678Z');

/** STRICT_DNS clusters whose first result the test hands in, per cluster created. */
class ScriptedDns implements ClusterType {
  readonly name = 'STRICT_DNS';
  readonly created: Array<{ config: ClusterConfig; emit: (ports: number[]) => void; closed: boolean }> = [];

  create(config: ClusterConfig): ClusterDiscovery {
    let onHosts: (hosts: readonly DiscoveredHost[]) => void = () => undefined;
    let initialize: () => void = () => undefined;
    const initialized = new Promise<void>((resolve) => (initialize = resolve));
    const entry = {
      config,
      closed: false,
      emit: (ports: number[]) => {
        onHosts(ports.map((port) => ({ address: { address: '10.0.0.1', port }, hostname: 'h', weight: 1, priority: 0, locality: NO_LOCALITY, localityWeight: 0, metadata: {}, healthFlags: 0 })));
        initialize();
      },
    };
    this.created.push(entry);
    return { start: (on) => (onHosts = on), initialized, close: () => (entry.closed = true) };
  }
}

function staticResource(name: string, port: number, extra: JsonObject = {}): DecodedResource {
  return {
    name,
    resource: {
      name,
      connect_timeout: '1s',
      load_assignment: { cluster_name: name, endpoints: [{ lb_endpoints: [{ endpoint: { address: { socket_address: { address: '10.0.0.2', port_value: port } } } }] }] },
      ...extra,
    },
  };
}

function dnsResource(name: string, hostPort: number): DecodedResource {
  return {
    name,
    resource: {
      name,
      type: 'STRICT_DNS',
      connect_timeout: '1s',
      load_assignment: { cluster_name: name, endpoints: [{ lb_endpoints: [{ endpoint: { address: { socket_address: { address: 'svc.test', port_value: hostPort } } } }] }] },
    },
  };
}

function setup(staticClusters: ClusterConfig[] = []) {
  const store = createHeapStatsStore();
  const dns = new ScriptedDns();
  const events: string[] = [];
  const clusters = new SupervisorClusterManager(staticClusters, {
    subscriptions: subscriptionFactory(store, silentLogger),
    types: new Map([...clusterTypes(builtinExtensions()), ['STRICT_DNS', dns]]),
    hosts: store.hosts,
    stats: store,
    log: () => silentLogger,
    clock: new ManualClock(),
    runtime: new LiveRuntime([]),
    onUpdate: (u) => events.push(`update ${u.cluster} v${u.version}`),
    onClusterActive: (config, snapshot: ClusterSnapshot) => events.push(`active ${config.name} ${snapshot.hosts.map((h) => h.address.port).join(',')}`),
    onClusterRemoved: (name) => events.push(`removed ${name}`),
  });
  const cds = new CdsApi({
    source: { kind: 'path', path: '/unused', initialFetchTimeoutMs: 15_000, resourceApiVersion: 'V3' },
    subscriptions: subscriptionFactory(store, silentLogger),
    clusters,
    schema: protoSchema(),
    disabledExtensions: new Set(),
    extensions: builtinExtensions(),
    stats: store.scope('cluster_manager.cds'),
    log: silentLogger,
    now: () => LAST_UPDATED,
  });
  const stat = (name: string) => store.snapshot().get(`cluster_manager.${name}`);
  return { store, dns, events, clusters, cds, stat };
}

const settle = () => new Promise((resolve) => setImmediate(resolve));

test('added, unchanged, modified and removed clusters, with the cluster_manager stats and version', async () => {
  const { cds, clusters, events, stat, store } = setup([staticCluster('fixed', [{ port: 1 }])]);
  await clusters.initialize();
  assert.equal(stat('cluster_added'), 1);
  assert.equal(cds.versionInfo(), '');

  await cds.onConfigUpdate([staticResource('a', 10), staticResource('b', 20)], 'v1');
  await cds.initialized;
  assert.deepEqual(events, ['active a 10', 'active b 20']);
  assert.equal(cds.versionInfo(), 'v1');
  assert.deepEqual(clusters.snapshots().map((s) => s.cluster), ['fixed', 'a', 'b']);
  assert.equal(stat('cluster_added'), 3);
  assert.equal(stat('active_clusters'), 3);
  assert.equal(clusters.addedViaApi('a'), true);
  assert.equal(clusters.addedViaApi('fixed'), false);
  assert.deepEqual(clusters.dynamicClusters().active.map((c) => [c.name, c.versionInfo, c.lastUpdated.toISOString()]), [
    ['a', 'v1', LAST_UPDATED.toISOString()],
    ['b', 'v1', LAST_UPDATED.toISOString()],
  ]);

  // The same resources again (keys in another order): nothing applies, the version stays.
  events.length = 0;
  const reordered = staticResource('a', 10);
  await cds.onConfigUpdate([{ name: 'a', resource: Object.fromEntries(Object.entries(reordered.resource).reverse()) }, staticResource('b', 20)], 'v2');
  await settle();
  assert.deepEqual(events, []);
  assert.equal(cds.versionInfo(), 'v1');
  assert.equal(stat('cluster_modified'), 0);

  // b changes, a goes.
  await cds.onConfigUpdate([staticResource('b', 21)], 'v3');
  await settle();
  assert.deepEqual(events, ['removed a', 'active b 21']);
  assert.equal(cds.versionInfo(), 'v3');
  assert.equal(stat('cluster_modified'), 1);
  assert.equal(stat('cluster_removed'), 1);
  assert.equal(stat('active_clusters'), 2);
  assert.deepEqual(clusters.dynamicClusters().active.map((c) => [c.name, c.versionInfo]), [['b', 'v3']]);
  assert.equal(clusters.snapshot('a'), undefined);
  assert.equal(store.snapshot().get('cluster.a.membership_total'), 0, 'a removed cluster has no hosts left');
  assert.equal(store.snapshot().get('cluster.b.membership_total'), 1);
});

test('a modified cluster warms while the old one stays active, then replaces it; its host slots are given back', async () => {
  const { cds, clusters, dns, events, stat, store } = setup();
  await clusters.initialize();
  await cds.onConfigUpdate([dnsResource('d', 80)], '1');
  let initialized = false;
  void cds.initialized.then(() => (initialized = true));
  await settle();
  assert.equal(initialized, false, 'initialization waits for the first result');
  assert.equal(stat('warming_clusters'), 1);
  assert.equal(clusters.snapshot('d'), undefined, 'a warming cluster is not active');
  assert.deepEqual(clusters.dynamicClusters().warming.map((c) => c.name), ['d']);
  dns.created[0]!.emit([80]);
  await settle();
  assert.equal(initialized, true);
  assert.deepEqual(events, ['active d 80']);
  const oldSlot = clusters.snapshot('d')!.hosts[0]!.slot;

  await cds.onConfigUpdate([dnsResource('d', 81)], '2');
  await settle();
  assert.equal(stat('warming_clusters'), 1);
  assert.equal(stat('active_clusters'), 1);
  assert.equal(clusters.snapshot('d')!.hosts[0]!.address.port, 80, 'the old cluster serves while the new one warms');
  // The old one's changes still reach the workers meanwhile.
  dns.created[0]!.emit([80, 90]);
  assert.equal(events.at(-1), 'update d v2');
  dns.created[1]!.emit([81]);
  await settle();
  assert.equal(events.at(-1), 'active d 81');
  assert.equal(dns.created[0]!.closed, true);
  assert.equal(store.hosts.isLive(oldSlot), false);
  assert.equal(stat('warming_clusters'), 0);
  assert.equal(clusters.dynamicClusters().active[0]!.versionInfo, '2');
  // Late results of the replaced discovery are ignored.
  const count = events.length;
  dns.created[0]!.emit([99]);
  assert.equal(events.length, count);
});

test('a cluster removed while warming never becomes active', async () => {
  const { cds, clusters, dns, events, stat } = setup();
  await clusters.initialize();
  await cds.onConfigUpdate([dnsResource('d', 80)], '1');
  await cds.onConfigUpdate([], '2');
  dns.created[0]!.emit([80]);
  await settle();
  assert.deepEqual(events, []);
  assert.equal(dns.created[0]!.closed, true);
  assert.equal(stat('cluster_removed'), 1);
  assert.equal(stat('warming_clusters'), 0);
  assert.equal(cds.versionInfo(), '2');
});

test('a bad resource rejects the update; the good ones apply (Envoy 1.16), duplicates and static names too', async () => {
  const { cds, clusters, events } = setup([staticCluster('fixed', [{ port: 1 }])]);
  await clusters.initialize();
  await assert.rejects(
    () =>
      cds.onConfigUpdate(
        [staticResource('good', 10), staticResource('bad', 11, { lb_policy: 'CLUSTER_PROVIDED' }), staticResource('good', 12), staticResource('fixed', 13)],
        '7',
      ),
    (error: Error) => {
      assert.match(error.message, /^Error adding\/updating cluster\(s\) bad: resources\[1\]\.lb_policy: .*, good: duplicate cluster good found$/);
      return true;
    },
  );
  await settle();
  assert.deepEqual(events, ['active good 10']);
  assert.equal(cds.versionInfo(), '7');
  // The static cluster is untouched.
  assert.equal(clusters.snapshot('fixed')!.hosts[0]!.address.port, 1);
  assert.equal(clusters.addedViaApi('fixed'), false);
  await cds.initialized;
});

test('initialization ends at the first failure, without clusters', async () => {
  const { cds, clusters } = setup();
  await clusters.initialize();
  cds.onConfigUpdateFailed('fetch_timeout', null);
  await cds.initialized;
  assert.equal(cds.versionInfo(), '');
});

test('a large update is applied in slices that let the event loop turn; its clusters activate in order', async () => {
  const { cds, clusters, events, stat } = setup();
  await clusters.initialize();
  const resources = Array.from({ length: 1000 }, (_, i) => staticResource(`c${i}`, 1000 + i));
  const { turns } = await turnsDuring(() => cds.onConfigUpdate(resources, 'big'));
  // 1,000 resources in slices of 100: the loop turned between them.
  assert.ok(turns >= 5, `the event loop turned ${turns} times`);
  await cds.initialized;
  assert.deepEqual(events, resources.map((r, i) => `active ${r.name} ${1000 + i}`));
  assert.equal(stat('active_clusters'), 1000);
  assert.equal(cds.versionInfo(), 'big');

  // Removing them all is sliced too, and the rejection of a bad resource comes after all of it.
  events.length = 0;
  await assert.rejects(cds.onConfigUpdate([staticResource('bad', 1, { lb_policy: 'CLUSTER_PROVIDED' })], 'gone'), /bad: resources\[0\]\.lb_policy/);
  assert.equal(events.length, 1000);
  assert.equal(stat('active_clusters'), 0);
  assert.equal(cds.versionInfo(), 'gone');
});

test('an update under way stops at its next slice when CDS closes', async () => {
  const { cds, clusters, stat } = setup();
  await clusters.initialize();
  const update = cds.onConfigUpdate(Array.from({ length: 1000 }, (_, i) => staticResource(`c${i}`, 1000 + i)), 'big');
  cds.close();
  await update;
  assert.equal(stat('cluster_added'), 100, 'only the first slice was applied');
  assert.equal(cds.versionInfo(), '');
});
