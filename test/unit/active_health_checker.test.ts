// The active health checker in the supervisor's cluster manager, against real upstreams on
// 127.0.0.1 that the test turns bad and good, with the manual clock deciding when checks run:
// membership flags, initialization, stats, intervals and the event log.

import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { createServer as createHttpServer, type IncomingMessage, type Server as HttpServer } from 'node:http';
import { createServer, type Server, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { test } from 'node:test';
import type { ClusterConfig, HealthCheck } from '../../src/config/model';
import { LiveRuntime } from '../../src/runtime/live_runtime';
import { createHeapStatsStore } from '../../src/stats/store';
import type { ClusterDiscovery, ClusterType } from '../../src/upstream/supervisor/cluster_discovery';
import { builtinExtensions } from '../../src/extensions/builtin_extensions';
import { clusterTypes, healthCheckers } from '../../src/extensions/supervisor_factories';
import { HealthFlag } from '../../src/upstream/shared/health_flags';
import { ActiveHealthChecking } from '../../src/upstream/supervisor/health_check/active_health_checking';
import { destinationHost, type DiscoveredHost } from '../../src/upstream/shared/membership';
import { SupervisorClusterManager } from '../../src/upstream/supervisor/supervisor_cluster_manager';
import { silentLogger, staticCluster } from '../helpers/data_plane';
import { subscriptionFactory } from '../helpers/subscriptions';
import { ManualClock } from '../helpers/manual_clock';
import { refusedPort } from '../helpers/refused_port';

const FAILED = HealthFlag.FAILED_ACTIVE_HC;

const BASE: HealthCheck = {
  timeoutMs: 500,
  intervalMs: 1000,
  initialJitterMs: 0,
  intervalJitterMs: 0,
  intervalJitterPercent: 0,
  unhealthyThreshold: 2,
  healthyThreshold: 2,
  noTrafficIntervalMs: 60_000,
  unhealthyIntervalMs: 700,
  unhealthyEdgeIntervalMs: 300,
  healthyEdgeIntervalMs: 400,
  reuseConnection: true,
  transportSocketMatchCriteria: null,
  eventLogPath: '',
  alwaysLogHealthCheckFailures: false,
  checker: { kind: 'tcp', send: '', receive: [] },
};

async function until(what: string, condition: () => boolean): Promise<void> {
  const deadline = Date.now() + 5000;
  while (!condition()) {
    if (Date.now() > deadline) assert.fail(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

async function listen<T extends Server | HttpServer>(server: T): Promise<number> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return (server.address() as AddressInfo).port;
}

function start(cluster: ClusterConfig, wallClock = Date.now) {
  const store = createHeapStatsStore();
  const clock = new ManualClock();
  const clusters = new SupervisorClusterManager([cluster], {
    subscriptions: subscriptionFactory(store, silentLogger),
    types: clusterTypes(builtinExtensions()),
    hosts: store.hosts,
    stats: store,
    log: () => silentLogger,
    clock,
    runtime: new LiveRuntime([]),
    healthSources: [new ActiveHealthChecking(healthCheckers(builtinExtensions()), () => 0, wallClock)],
    onUpdate: () => undefined,
  });
  const flags = (port: number) => clusters.snapshot(cluster.name)!.hosts.find((h) => h.address.port === port)!.healthFlags;
  const stat = (name: string) => store.snapshot().get(`cluster.${cluster.name}.health_check.${name}`);
  return { store, clock, clusters, flags, stat, initialized: clusters.initialize() };
}

/** A TCP upstream that answers `ping` with `pong` while good, and hangs up while bad. */
async function pingServer(): Promise<{ server: Server; port: number; good: { value: boolean } }> {
  const good = { value: true };
  const server = createServer((socket: Socket) => {
    socket.on('data', (data) => {
      if (!good.value) socket.destroy();
      else if (data.includes('ping')) socket.write('..pong..');
    });
    socket.on('error', () => undefined);
  });
  return { server, port: await listen(server), good };
}

test('TCP: first verdicts, then network failures count to unhealthy_threshold with the edge interval; no-traffic interval until a connection', async () => {
  const { server, port, good } = await pingServer();
  const closedPort = await refusedPort();
  const check: HealthCheck = { ...BASE, checker: { kind: 'tcp', send: Buffer.from('ping').toString('hex'), receive: [Buffer.from('pong').toString('hex')] } };
  const hc = start(staticCluster('c', [{ port }, { port: closedPort }], { healthChecks: [check] }));
  try {
    await hc.initialized;
    assert.equal(hc.flags(port), 0);
    assert.equal(hc.flags(closedPort), FAILED);
    assert.deepEqual(['attempt', 'success', 'failure', 'network_failure', 'passive_failure', 'verify_cluster', 'healthy', 'degraded'].map(hc.stat), [2, 1, 1, 1, 0, 0, 1, 0]);
    // No connection through the cluster yet: both hosts wait for the no-traffic interval.
    assert.deepEqual(hc.clock.pendingDelays(), [60_000, 60_000]);
    hc.store.counter('cluster.c.upstream_cx_total').inc();
    hc.clock.advance(60_000);
    await until('the second round', () => hc.stat('attempt') === 4 && hc.stat('success')! + hc.stat('failure')! === 4);
    // A success keeps the interval; a failure of a failed host takes unhealthy_interval.
    assert.deepEqual(hc.clock.pendingDelays(), [700, 1000]);

    good.value = false;
    hc.clock.advance(700);
    await until('the closed port again', () => hc.stat('attempt') === 5 && hc.stat('failure') === 3);
    hc.clock.advance(300);
    await until('the first failure', () => hc.stat('failure') === 4);
    assert.equal(hc.flags(port), 0, 'one network failure is not enough');
    // unhealthy_edge_interval while the threshold counts.
    assert.ok(hc.clock.pendingDelays().includes(300));
    hc.clock.advance(300);
    await until('the second failure', () => hc.flags(port) === FAILED);
    assert.equal(hc.stat('healthy'), 0);

    good.value = true;
    hc.clock.advance(700);
    await until('a success', () => hc.stat('success') === 3);
    assert.equal(hc.flags(port), FAILED, 'healthy_threshold is 2');
    hc.clock.advance(400);
    await until('healthy again', () => hc.flags(port) === 0);
    assert.equal(hc.stat('healthy'), 1);
  } finally {
    hc.clusters.close();
    server.close();
  }
});

test('HTTP: the request, an unexpected status ejects at once, x-proxy-degraded, the checked cluster header', async () => {
  const requests: IncomingMessage[] = [];
  let answer: { status: number; headers?: Record<string, string> } = { status: 200, headers: { 'x-proxy-upstream-healthchecked-cluster': 'backend-east' } };
  const server = createHttpServer((req, res) => {
    requests.push(req);
    res.writeHead(answer.status, answer.headers ?? {});
    res.end('ok');
  });
  const port = await listen(server);
  const check: HealthCheck = {
    ...BASE,
    checker: {
      kind: 'http',
      host: 'hc.example',
      path: '/healthz?full=1',
      expectedStatuses: [[200, 201], [204, 205]],
      requestHeadersToAdd: [
        { key: 'x-check', value: 'one', append: true },
        { key: 'User-Agent', value: 'custom', append: false },
      ],
      requestHeadersToRemove: [],
      serviceNameMatcher: { kind: 'prefix', value: 'backend', ignoreCase: false },
    },
  };
  const hc = start(staticCluster('c', [{ port }], { healthChecks: [check] }));
  try {
    await hc.initialized;
    assert.equal(hc.flags(port), 0);
    const [first] = requests;
    assert.equal(first!.method, 'GET');
    assert.equal(first!.url, '/healthz?full=1');
    assert.equal(first!.headers.host, 'hc.example');
    assert.equal(first!.headers['user-agent'], 'custom');
    assert.equal(first!.headers['x-check'], 'one');
    assert.equal(hc.stat('verify_cluster'), 1);

    answer = { status: 204, headers: { 'x-proxy-upstream-healthchecked-cluster': 'backend-west', 'x-proxy-degraded': '1' } };
    hc.clock.advance(60_000);
    await until('degraded', () => hc.flags(port) === HealthFlag.DEGRADED_ACTIVE_HC);
    assert.equal(hc.stat('degraded'), 1);

    // The wrong cluster is an active failure: out at once, despite unhealthy_threshold 2.
    answer = { status: 200, headers: { 'x-proxy-upstream-healthchecked-cluster': 'frontend' } };
    hc.clock.advance(60_000);
    await until('ejected', () => (hc.flags(port) & FAILED) !== 0);
    answer = { status: 200, headers: { 'x-proxy-upstream-healthchecked-cluster': 'backend' } };
    hc.clock.advance(60_000);
    await until('one success', () => hc.stat('success') === 3);
    hc.clock.advance(60_000);
    await until('healthy', () => hc.flags(port) === 0);
    answer = { status: 503 };
    hc.clock.advance(60_000);
    await until('ejected by status', () => hc.flags(port) === FAILED);
    assert.equal(hc.stat('network_failure'), 0);
    // One connection served every check (reuse_connection).
    assert.equal(new Set(requests.map((r) => r.socket)).size, 1);
  } finally {
    hc.clusters.close();
    server.close();
  }
});

test('a check that hangs times out as a network failure; the cluster waits for it; ignore_new_hosts_until_first_hc marks hosts pending', async () => {
  const sockets: Socket[] = [];
  const server = createServer((socket) => sockets.push(socket));
  const port = await listen(server);
  const check: HealthCheck = { ...BASE, checker: { kind: 'tcp', send: '00', receive: ['01'] } };
  const cluster = staticCluster('c', [{ port }], { healthChecks: [check] });
  const hc = start({ ...cluster, commonLbConfig: { ...cluster.commonLbConfig, ignoreNewHostsUntilFirstHc: true } });
  try {
    let initialized = false;
    void hc.initialized.then(() => (initialized = true));
    await until('the connection', () => sockets.length === 1);
    assert.equal(hc.flags(port), FAILED | HealthFlag.PENDING_ACTIVE_HC);
    assert.equal(hc.store.snapshot().get('cluster.c.membership_excluded'), 1);
    assert.equal(initialized, false);
    hc.clock.advance(500);
    await hc.initialized;
    assert.equal(hc.flags(port), FAILED);
    assert.equal(hc.store.snapshot().get('cluster.c.membership_excluded'), 0);
    assert.equal(hc.stat('network_failure'), 1);
  } finally {
    hc.clusters.close();
    for (const s of sockets) s.destroy();
    server.close();
  }
});

test('event_log_path: HealthCheckEvent JSON lines as Envoy writes them', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'proxy-hc-'));
  try {
    const path = join(dir, 'hc.log');
    const good = { value: true };
    const server = createHttpServer((_req, res) => {
      res.writeHead(good.value ? 200 : 500);
      res.end();
    });
    const port = await listen(server);
    const check: HealthCheck = {
      ...BASE,
      eventLogPath: path,
      checker: { kind: 'http', host: '', path: '/', expectedStatuses: [[200, 201]], requestHeadersToAdd: [], requestHeadersToRemove: [], serviceNameMatcher: null },
    };
    const hc = start(staticCluster('web', [{ port }], { healthChecks: [check] }), () => Date.UTC(2020, 0, 2, 3, 4, 5, 60));
    try {
      await hc.initialized;
      good.value = false;
      hc.clock.advance(60_000);
      await until('ejected', () => hc.flags(port) === FAILED);
    } finally {
      hc.clusters.close();
      server.close();
    }
    const host = { socketAddress: { protocol: 'TCP', address: '127.0.0.1', portValue: port, resolverName: '', ipv4Compat: false } };
    await until('both lines', () => readFileSync(path, 'utf8').split('\n').length === 3);
    const lines = readFileSync(path, 'utf8').trimEnd().split('\n');
    assert.deepEqual(lines, [
      JSON.stringify({ healthCheckerType: 'HTTP', host, clusterName: 'web', addHealthyEvent: { firstCheck: true }, timestamp: '2020-01-02T03:04:05.060Z' }),
      JSON.stringify({ healthCheckerType: 'HTTP', host, clusterName: 'web', ejectUnhealthyEvent: { failureType: 'ACTIVE' }, timestamp: '2020-01-02T03:04:05.060Z' }),
    ]);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

/** A cluster type whose results the test hands in. */
function scriptedType() {
  let onHosts: (hosts: readonly DiscoveredHost[]) => void = () => undefined;
  const discovery: ClusterDiscovery = { start: (on) => (onHosts = on), initialized: Promise.resolve(), close: () => undefined };
  const type: ClusterType = { name: 'STRICT_DNS', create: () => discovery };
  return { types: new Map([['STRICT_DNS', type]]), emit: (hosts: DiscoveredHost[]) => onHosts(hosts) };
}

const host = (port: number): DiscoveredHost => ({ ...destinationHost('', { address: '127.0.0.1', port }), hostname: '' });

for (const ignoreHealth of [false, true]) {
  test(`host removal ${ignoreHealth ? 'with' : 'without'} ignore_health_on_host_removal`, async () => {
    const a = await pingServer();
    const b = await pingServer();
    const scripted = scriptedType();
    const check: HealthCheck = { ...BASE, unhealthyThreshold: 1, checker: { kind: 'tcp', send: Buffer.from('ping').toString('hex'), receive: [Buffer.from('pong').toString('hex')] } };
    const store = createHeapStatsStore();
    const clock = new ManualClock();
    const config = staticCluster('c', [], { type: 'STRICT_DNS', healthChecks: [check], drainConnectionsOnHostRemoval: ignoreHealth });
    const clusters = new SupervisorClusterManager([config], {
      subscriptions: subscriptionFactory(store, silentLogger),
      types: scripted.types,
      hosts: store.hosts,
      stats: store,
      log: () => silentLogger,
      clock,
      runtime: new LiveRuntime([]),
      healthSources: [new ActiveHealthChecking(healthCheckers(builtinExtensions()), () => 0)],
      onUpdate: () => undefined,
    });
    const ports = () => clusters.snapshot('c')!.hosts.map((h) => [h.address.port, h.healthFlags]);
    try {
      const initialized = clusters.initialize();
      scripted.emit([host(a.port), host(b.port)]);
      await initialized;
      assert.deepEqual(ports(), [[a.port, 0], [b.port, 0]]);
      scripted.emit([host(a.port)]);
      if (ignoreHealth) {
        assert.deepEqual(ports(), [[a.port, 0]]);
        return;
      }
      // Healthy: it stays, pending removal, and keeps being checked.
      assert.deepEqual(ports(), [[a.port, 0], [b.port, HealthFlag.PENDING_DYNAMIC_REMOVAL]]);
      // Back in discovery: no longer pending.
      scripted.emit([host(a.port), host(b.port)]);
      assert.deepEqual(ports(), [[a.port, 0], [b.port, 0]]);
      scripted.emit([host(a.port)]);
      b.good.value = false;
      clock.advance(60_000);
      await until('the failed host to go', () => clusters.snapshot('c')!.hosts.length === 1);
      assert.deepEqual(ports(), [[a.port, 0]]);
      assert.equal(store.snapshot().get('cluster.c.health_check.healthy'), 1);
    } finally {
      clusters.close();
      a.server.close();
      b.server.close();
    }
  });
}

test('a host answering garbage to an HTTP check has its connection closed and the check counted as a network failure', async () => {
  let connections = 0;
  const server = createServer((socket) => {
    connections++;
    socket.on('error', () => undefined);
    socket.on('data', () => socket.write('SSH-2.0-OpenSSH\r\n\r\n'));
  });
  const port = await listen(server);
  const check: HealthCheck = {
    ...BASE,
    unhealthyThreshold: 1,
    checker: { kind: 'http', host: '', path: '/', expectedStatuses: [[200, 201]], requestHeadersToAdd: [], requestHeadersToRemove: [], serviceNameMatcher: null },
  };
  const hc = start(staticCluster('c', [{ port }], { healthChecks: [check] }));
  try {
    await hc.initialized;
    assert.equal(hc.flags(port), FAILED);
    assert.equal(hc.stat('network_failure'), 1);
    hc.clock.advance(60_000);
    await until('the second check', () => hc.stat('network_failure') === 2);
    // The first connection was closed: the second check needed a new one.
    assert.equal(connections, 2);
  } finally {
    hc.clusters.close();
    server.close();
  }
});

test('reuse_connection false: a connection per HTTP check', async () => {
  const sockets = new Set<unknown>();
  const server = createHttpServer((req, res) => {
    sockets.add(req.socket);
    res.end();
  });
  const port = await listen(server);
  const check: HealthCheck = {
    ...BASE,
    reuseConnection: false,
    checker: { kind: 'http', host: '', path: '/', expectedStatuses: [[200, 201]], requestHeadersToAdd: [], requestHeadersToRemove: [], serviceNameMatcher: null },
  };
  const hc = start(staticCluster('c', [{ port }], { healthChecks: [check] }));
  try {
    await hc.initialized;
    hc.clock.advance(60_000);
    await until('the second check', () => hc.stat('success') === 2);
    assert.equal(sockets.size, 2);
  } finally {
    hc.clusters.close();
    server.close();
  }
});
