// The HTTP/1 pool's admission under circuit breakers (Envoy's ConnPoolImplBase): requests wait
// only within max_pending_requests, connections open only within max_connections and are reused,
// requests are given connections only within max_requests, and every count goes back to 0
// whatever way the requests end. Real sockets to a real upstream on 127.0.0.1.

import assert from 'node:assert/strict';
import * as net from 'node:net';
import { test, type TestContext } from 'node:test';
import type { JsonObject } from '../../src/config/json';
import { circuitBreakersConfig } from '../../src/config/model_builder';
import type { ConnectionPool, PoolCallbacks, RequestEncoder, ResponseDecoder, StreamResetReason } from '../../src/http/codec';
import { RequestHead, type ResponseHead } from '../../src/http/message';
import { LiveRuntime } from '../../src/runtime/live_runtime';
import { createHeapStatsStore, type SharedStatsStore } from '../../src/stats/store';
import { Cluster } from '../../src/upstream/worker/cluster';
import type { ResourceManager } from '../../src/upstream/shared/resource_manager';
import { silentConnectionLogs, silentLogger, staticCluster } from '../helpers/data_plane';
import { tcpUpstream } from '../helpers/http_peers';
import { refusedPort } from '../helpers/refused_port';
import { ManualClock } from '../helpers/manual_clock';
import { staticSnapshots } from '../helpers/membership';
import { SecretStore } from '../../src/tls/secret_store';

const NO_DOWNSTREAM = {};
const RESPONSE = 'HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nok';

/** An upstream that holds every request until `answer()`; it counts connections and requests. */
async function heldUpstream(t: TestContext): Promise<{ port: number; connections: () => number; held: () => number; answer: () => void; resetAll: () => void }> {
  const waiting: net.Socket[] = [];
  const open = new Set<net.Socket>();
  let connections = 0;
  const port = await tcpUpstream(t, (socket) => {
    connections++;
    open.add(socket);
    socket.on('close', () => open.delete(socket));
    socket.on('data', (chunk) => {
      // One GET per request, no body: each blank line ends one.
      for (let i = chunk.indexOf('\r\n\r\n'); i >= 0; i = chunk.indexOf('\r\n\r\n', i + 4)) waiting.push(socket);
    });
  });
  return {
    port,
    connections: () => connections,
    held: () => waiting.length,
    answer: () => {
      for (const socket of waiting.splice(0)) socket.write(RESPONSE);
    },
    resetAll: () => {
      waiting.length = 0;
      for (const socket of open) socket.destroy();
    },
  };
}

type Outcome = 'complete' | `failure: ${StreamResetReason}` | `reset: ${StreamResetReason}`;

/** A request as the router makes one: a GET sent as soon as the pool gives a connection. */
class Request implements PoolCallbacks, ResponseDecoder {
  readonly done: Promise<Outcome>;
  private settle!: (outcome: Outcome) => void;

  constructor() {
    this.done = new Promise((resolve) => (this.settle = resolve));
  }

  onPoolReady(encoder: RequestEncoder): void {
    const head = new RequestHead('GET', '/', false);
    head.authority = 'test';
    encoder.encodeHeaders(head, true);
  }
  onPoolFailure(reason: StreamResetReason): void {
    this.settle(`failure: ${reason}`);
  }
  onUpstreamHead(_head: ResponseHead): void {}
  onUpstreamBody(): void {}
  onUpstreamComplete(): void {
    this.settle('complete');
  }
  onUpstreamReset(reason: StreamResetReason): void {
    this.settle(`reset: ${reason}`);
  }
  onUpstreamDrained(): void {}
  onUpstreamReadEnd(): void {}
}

function cluster(t: TestContext, ports: readonly number[], thresholds: JsonObject): { cluster: Cluster; store: SharedStatsStore; pool: () => ConnectionPool; resources: ResourceManager } {
  const store = createHeapStatsStore();
  const config = staticCluster('c', ports.map((port) => ({ port })), { circuitBreakers: circuitBreakersConfig({ thresholds: [thresholds] }) });
  const c = new Cluster(config, staticSnapshots([config], store.hosts)[0]!, { store, runtime: new LiveRuntime([]), random: () => 0, readBuffer: Buffer.alloc(65536), localLocality: null, log: silentLogger, connectionLogs: silentConnectionLogs, secrets: new SecretStore([]), reportsTables: true, onConsecutiveFailure: () => undefined, onHostsPicked: () => undefined, clock: new ManualClock() });
  t.after(() => c.close());
  const host = c.chooseHost(null)!;
  return { cluster: c, store, pool: () => c.httpPool(host, NO_DOWNSTREAM, 'DEFAULT', 'http1')!, resources: c.info.resourceManager('DEFAULT') };
}

async function until(what: string, condition: () => boolean, ms = 5000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!condition()) {
    if (Date.now() > deadline) assert.fail(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

function counts(resources: ResourceManager): Record<string, number> {
  return {
    connections: resources.connections.count(),
    pending: resources.pendingRequests.count(),
    requests: resources.requests.count(),
  };
}

test('max_pending_requests bounds the queue, max_connections caps connections, which are reused', { timeout: 10_000 }, async (t) => {
  const upstream = await heldUpstream(t);
  const { cluster: c, store, pool, resources } = cluster(t, [upstream.port], { max_connections: 2, max_pending_requests: 3 });
  const requests = Array.from({ length: 6 }, () => new Request());
  for (const r of requests) pool().newStream(r, r, NO_DOWNSTREAM);
  // Three wait (two with a connection coming, one for a connection to free up); three overflow.
  const overflowed = await Promise.all(requests.slice(3).map((r) => r.done));
  assert.deepEqual(overflowed, ['failure: overflow', 'failure: overflow', 'failure: overflow']);
  assert.deepEqual(counts(resources), { connections: 2, pending: 3, requests: 0 });
  await until('two requests upstream', () => upstream.held() === 2);
  assert.equal(upstream.connections(), 2);
  assert.deepEqual(counts(resources), { connections: 2, pending: 1, requests: 2 });

  upstream.answer();
  await until('the third request upstream', () => upstream.held() === 1);
  upstream.answer();
  assert.deepEqual(await Promise.all(requests.slice(0, 3).map((r) => r.done)), ['complete', 'complete', 'complete']);
  // The waiting request reused a connection: no third one was opened.
  assert.equal(upstream.connections(), 2);
  const stats = store.snapshot();
  assert.equal(stats.get('cluster.c.upstream_rq_pending_overflow'), 3);
  assert.equal(stats.get('cluster.c.upstream_cx_overflow'), 1);
  assert.equal(stats.get('cluster.c.upstream_rq_total'), 3);
  assert.deepEqual(counts(resources), { connections: 2, pending: 0, requests: 0 });
  c.close();
  await until('connections closed', () => resources.connections.count() === 0);
});

test('a cancelled request gives back its pending unit; a closed connection lets a waiting request connect', { timeout: 10_000 }, async (t) => {
  const upstream = await heldUpstream(t);
  const { pool, resources } = cluster(t, [upstream.port], { max_connections: 1 });
  const [a, b, cancelled] = [new Request(), new Request(), new Request()];
  pool().newStream(a, a, NO_DOWNSTREAM);
  pool().newStream(b, b, NO_DOWNSTREAM);
  pool().newStream(cancelled, cancelled, NO_DOWNSTREAM);
  pool().cancel(cancelled);
  assert.deepEqual(counts(resources), { connections: 1, pending: 2, requests: 0 });
  await until('a upstream', () => upstream.held() === 1);
  // The upstream drops the connection: a is reset, b gets a new connection.
  upstream.resetAll();
  assert.equal(await a.done, 'reset: connection termination');
  await until('b upstream', () => upstream.held() === 1);
  assert.equal(upstream.connections(), 2);
  upstream.answer();
  assert.equal(await b.done, 'complete');
  assert.deepEqual(counts(resources), { connections: 1, pending: 0, requests: 0 });
});

test('a refused connection fails every waiting request and gives everything back', { timeout: 10_000 }, async (t) => {
  const port = await refusedPort();
  const { pool, resources } = cluster(t, [port], { max_connections: 1 });
  const requests = [new Request(), new Request(), new Request()];
  for (const r of requests) pool().newStream(r, r, NO_DOWNSTREAM);
  assert.deepEqual(await Promise.all(requests.map((r) => r.done)), Array(3).fill('failure: connection failure'));
  assert.deepEqual(counts(resources), { connections: 0, pending: 0, requests: 0 });
});

test('max_requests refuses a request a connection is free for; the connection stays for the next', { timeout: 10_000 }, async (t) => {
  const upstream = await heldUpstream(t);
  const { store, pool, resources } = cluster(t, [upstream.port], { max_requests: 1 });
  const [a, b] = [new Request(), new Request()];
  pool().newStream(a, a, NO_DOWNSTREAM);
  pool().newStream(b, b, NO_DOWNSTREAM);
  // Both wait, each with a connection coming; the second to connect finds the request limit reached.
  assert.equal(await b.done, 'failure: overflow');
  await until('a upstream', () => upstream.held() === 1);
  upstream.answer();
  assert.equal(await a.done, 'complete');
  const c = new Request();
  pool().newStream(c, c, NO_DOWNSTREAM);
  await until('c upstream', () => upstream.held() === 1);
  upstream.answer();
  assert.equal(await c.done, 'complete');
  assert.equal(upstream.connections(), 2);
  assert.equal(store.snapshot().get('cluster.c.upstream_rq_pending_overflow'), 1);
  assert.deepEqual(counts(resources), { connections: 2, pending: 0, requests: 0 });
});

test('max_connection_pools: a host beyond the limit gets no pool; a pool given up returns its unit', { timeout: 10_000 }, async (t) => {
  const { cluster: c, store, resources } = cluster(t, [1, 2], { max_connection_pools: 1 });
  const first = c.chooseHost(null)!;
  const second = c.chooseHost(null)!;
  assert.notEqual(first, second);
  assert.ok(c.httpPool(first, NO_DOWNSTREAM, 'DEFAULT', 'http1'));
  assert.equal(c.httpPool(second, NO_DOWNSTREAM, 'DEFAULT', 'http1'), null);
  assert.equal(store.snapshot().get('cluster.c.upstream_cx_pool_overflow'), 1);
  // HIGH has circuit breakers of its own.
  assert.ok(c.httpPool(second, NO_DOWNSTREAM, 'HIGH', 'http1'));
  assert.equal(resources.connectionPools.count(), 1);
  c.close();
  assert.equal(resources.connectionPools.count(), 0);
  assert.equal(c.info.resourceManager('HIGH').connectionPools.count(), 0);
});
