// ORIGINAL_DST's balancer in a worker's cluster (the header or the restored local address names
// the host, made at first pick and reported to the supervisor) and the supervisor's discovery
// (hosts made from the reports, removed after a cleanup_interval unused), on an injected clock.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { ClusterConfig, SocketAddress } from '../../src/config/model';
import { RequestHead } from '../../src/http/message';
import { LiveRuntime } from '../../src/runtime/live_runtime';
import { createHeapStatsStore, type SharedStatsStore } from '../../src/stats/store';
import { Cluster } from '../../src/upstream/worker/cluster';
import { connectionContext } from '../../src/upstream/worker/lb/load_balancer';
import { applyUpdate, type ClusterSnapshot, type DiscoveredHost, diffMembership } from '../../src/upstream/shared/membership';
import { OriginalDstDiscovery } from '../../src/upstream/supervisor/original_dst_cluster';
import type { DownstreamAddresses } from '../../src/network/downstream_addresses';
import { silentConnectionLogs, silentLogger, staticCluster } from '../helpers/data_plane';
import { ManualClock } from '../helpers/manual_clock';
import { DEFAULT_POLICY } from '../helpers/membership';
import { SecretStore } from '../../src/tls/secret_store';

const CLEANUP_MS = 4000;

function dstConfig(useHttpHeader: boolean): ClusterConfig {
  return staticCluster('dst', [], { type: 'ORIGINAL_DST', lbPolicy: 'CLUSTER_PROVIDED', cleanupIntervalMs: CLEANUP_MS, originalDstLbConfig: { useHttpHeader } });
}

interface Worker {
  readonly cluster: Cluster;
  readonly clock: ManualClock;
  readonly store: SharedStatsStore;
  /** Each hosts_picked report, as address strings. */
  readonly reports: string[][];
  /** Applies the supervisor's membership of `hosts`, as its update would. */
  membership(hosts: readonly DiscoveredHost[]): void;
}

function worker(useHttpHeader: boolean): Worker {
  const store = createHeapStatsStore();
  const clock = new ManualClock();
  const reports: string[][] = [];
  let snapshot: ClusterSnapshot = { cluster: 'dst', version: 0, hosts: [], policy: DEFAULT_POLICY };
  const cluster = new Cluster(dstConfig(useHttpHeader), snapshot, {
    store,
    runtime: new LiveRuntime([]),
    random: () => 0,
    readBuffer: Buffer.alloc(1024),
    localLocality: null,
    log: silentLogger,
    connectionLogs: silentConnectionLogs, secrets: new SecretStore([]),
    reportsTables: true,
    onConsecutiveFailure: () => undefined,
    onHostsPicked: (name, addresses) => {
      assert.equal(name, 'dst');
      reports.push(addresses.map((a) => `${a.address}:${a.port}`));
    },
    clock,
  });
  return {
    cluster,
    clock,
    store,
    reports,
    membership: (hosts) => {
      const update = diffMembership(snapshot, hosts, DEFAULT_POLICY, store.hosts);
      if (update === null) return;
      snapshot = applyUpdate(update);
      cluster.update(update);
    },
  };
}

function head(...values: string[]): RequestHead {
  const request = new RequestHead('GET', '/', false);
  for (const value of values) request.headers.push('x-proxy-original-dst-host', value);
  return request;
}

const NOT_RESTORED: DownstreamAddresses = { remoteAddress: '10.1.1.1', remotePort: 5000, localAddress: '127.0.0.1', localPort: 8080 };
const RESTORED: DownstreamAddresses = { ...NOT_RESTORED, localAddress: '10.0.0.9', localPort: 443, localAddressRestored: true };

function pick(w: Worker, downstream: DownstreamAddresses | null, request: RequestHead | null = null): string | null {
  return w.cluster.chooseHost(connectionContext(downstream, request))?.addressString ?? null;
}

test('the header names the host, only its first value counts; an invalid value counts original_dst_host_invalid and yields none', () => {
  const w = worker(true);
  assert.equal(pick(w, NOT_RESTORED, head('10.0.0.1:80', '10.0.0.2:80')), '10.0.0.1:80');
  assert.equal(pick(w, NOT_RESTORED, head('[2001:db8::1]:8443')), '[2001:db8::1]:8443');
  const invalid = w.cluster.info.stats.counters.original_dst_host_invalid;
  for (const value of ['10.0.0.1', 'host.example:80', '10.0.0.1:65536', '2001:db8::1:80', '10.0.0.1:8o', '']) {
    assert.equal(pick(w, NOT_RESTORED, head(value, '10.0.0.2:80')), null, value);
  }
  assert.equal(invalid.value(), 6);
  // Neither header nor restored address: no host, and nothing invalid.
  assert.equal(pick(w, NOT_RESTORED, head()), null);
  assert.equal(pick(w, null), null);
  assert.equal(w.cluster.chooseHost(null), null);
  assert.equal(invalid.value(), 6);
});

test('an invalid header falls back to the restored destination, as Envoy does', () => {
  const w = worker(true);
  assert.equal(pick(w, RESTORED, head('nonsense')), '10.0.0.9:443');
  assert.equal(w.cluster.info.stats.counters.original_dst_host_invalid.value(), 1);
  // A valid header wins over the restored destination.
  assert.equal(pick(w, RESTORED, head('10.0.0.1:80')), '10.0.0.1:80');
});

test('without use_http_header the header is ignored; the local address counts only once the listener filter restored it', () => {
  const w = worker(false);
  assert.equal(pick(w, NOT_RESTORED, head('10.0.0.1:80')), null);
  assert.equal(pick(w, RESTORED, head('10.0.0.1:80')), '10.0.0.9:443');
  assert.equal(pick(w, { ...RESTORED, localAddressRestored: false }), null);
  assert.equal(w.cluster.info.stats.counters.original_dst_host_invalid.value(), 0);
});

test('a destination seen first is a host at once, reported at once; repeats are reported once per window; the member that joins takes the host over with its stats', () => {
  const w = worker(true);
  const first = w.cluster.chooseHost(connectionContext(NOT_RESTORED, head('10.0.0.1:80')))!;
  assert.equal(first.hostname, 'dst10.0.0.1:80');
  assert.equal(first.slot, null);
  assert.deepEqual(w.reports, [['10.0.0.1:80']]);
  w.cluster.hostStats(first).rq_total.inc();
  w.cluster.hostStats(first).rq_active.inc();
  // The same Host again, before membership has it; the repeats wait for the window's end.
  assert.equal(w.cluster.chooseHost(connectionContext(NOT_RESTORED, head('10.0.0.1:80'))), first);
  assert.equal(pick(w, NOT_RESTORED, head('10.0.0.1:80')), '10.0.0.1:80');
  assert.equal(pick(w, NOT_RESTORED, head('10.0.0.2:80')), '10.0.0.2:80');
  assert.deepEqual(w.reports, [['10.0.0.1:80'], ['10.0.0.2:80']]);
  w.clock.advance(CLEANUP_MS / 4);
  assert.deepEqual(w.reports, [['10.0.0.1:80'], ['10.0.0.2:80'], ['10.0.0.1:80']]);
  // A window with no picks sends nothing, and the reporter stops its timer.
  w.clock.advance(CLEANUP_MS);
  assert.equal(w.reports.length, 3);
  assert.equal(w.clock.pending, 0);

  // The supervisor's membership brings the host: the very Host object, now with a slot, whose
  // shared stats hold what counted before.
  const discovery = new OriginalDstDiscovery({ name: 'dst', cleanupIntervalMs: CLEANUP_MS }, new ManualClock());
  discovery.start((hosts) => w.membership(hosts));
  discovery.hostsPicked([{ address: '10.0.0.1', port: 80 }]);
  const member = w.cluster.prioritySet.hostSetsPerPriority[0]!.hosts;
  assert.deepEqual(member, [first]);
  assert.notEqual(first.slot, null);
  const shared = w.store.hostStats(first.slot!);
  assert.equal(shared.rq_total.value(), 1);
  assert.equal(shared.rq_active.value(), 1);
  w.cluster.hostStats(first).rq_active.dec();
  assert.equal(shared.rq_active.value(), 0);
  // The reporter's windows had ended: the next pick opens one and is reported at once, the one after waits.
  assert.equal(w.cluster.chooseHost(connectionContext(NOT_RESTORED, head('10.0.0.1:80'))), first);
  assert.equal(w.cluster.chooseHost(connectionContext(NOT_RESTORED, head('10.0.0.1:80'))), first);
  assert.equal(w.reports.length, 4);
  discovery.close();
});

test('discovery: a reported destination becomes a host; one unused for a whole cleanup_interval leaves', () => {
  const clock = new ManualClock();
  const discovery = new OriginalDstDiscovery({ name: 'dst', cleanupIntervalMs: CLEANUP_MS }, clock);
  const published: string[][] = [];
  discovery.start((hosts) => published.push(hosts.map((h) => h.hostname)));
  assert.deepEqual(published, [[]]);
  const a: SocketAddress = { address: '10.0.0.1', port: 80 };
  const b: SocketAddress = { address: '2001:db8::1', port: 443 };
  discovery.hostsPicked([a, b, { address: 'not-an-ip', port: 80 }, { address: '10.0.0.3', port: 70000 }]);
  assert.deepEqual(published.at(-1), ['dst10.0.0.1:80', 'dst[2001:db8::1]:443']);
  // Known hosts only get their mark: no new membership.
  discovery.hostsPicked([a]);
  assert.equal(published.length, 2);
  // First sweep: both were used since the start; the marks clear.
  clock.advance(CLEANUP_MS);
  assert.equal(published.length, 2);
  discovery.hostsPicked([a]);
  // Second sweep: b was not used during the whole interval.
  clock.advance(CLEANUP_MS);
  assert.deepEqual(published.at(-1), ['dst10.0.0.1:80']);
  clock.advance(CLEANUP_MS);
  assert.deepEqual(published.at(-1), []);
  // Used again, a destination is a host again.
  discovery.hostsPicked([b]);
  assert.deepEqual(published.at(-1), ['dst[2001:db8::1]:443']);
  discovery.close();
  assert.equal(clock.pending, 0);
  discovery.hostsPicked([a]);
  assert.deepEqual(published.at(-1), ['dst[2001:db8::1]:443']);
});
