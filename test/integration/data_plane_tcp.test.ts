import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as net from 'node:net';
import { test, type TestContext } from 'node:test';
import { listener, startDataPlane, staticCluster, tcpProxy, type DataPlane } from '../helpers/data_plane';
import { kernelQueuedBytes, payload, push, receive, stalled, type Pusher } from '../helpers/backpressure';
import { closeServer, listen } from '../helpers/http_peers';
import { refusedPort } from '../helpers/refused_port';
import type { ClusterConfig, ListenerConfig, TcpProxyConfig } from '../../src/config/model';
import { HealthFlag } from '../../src/upstream/shared/health_flags';

const TIMEOUT = { timeout: 20000 };

/** A TCP server on 127.0.0.1 running `onConnection` for each connection, closed after the test. */
async function tcpServer(t: TestContext, onConnection: (socket: net.Socket) => void): Promise<number> {
  const server = net.createServer({ allowHalfOpen: true }, onConnection);
  await listen(server);
  t.after(async () => {
    for (const s of sockets) s.destroy();
    await closeServer(server);
  });
  const sockets = new Set<net.Socket>();
  server.on('connection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  return (server.address() as net.AddressInfo).port;
}

async function proxy(
  t: TestContext,
  upstreamPort: number,
  filter: Partial<TcpProxyConfig> = {},
  listenerOverrides: Partial<ListenerConfig> = {},
  cluster: Partial<ClusterConfig> = {},
): Promise<{ dp: DataPlane; port: number }> {
  const dp = await startDataPlane([listener('tcp', tcpProxy('backend', filter), listenerOverrides)], [staticCluster('backend', [{ port: upstreamPort }], cluster)]);
  t.after(() => dp.close());
  return { dp, port: dp.port('tcp') };
}

function connect(t: TestContext, port: number): net.Socket {
  const socket = net.connect({ port, host: '127.0.0.1', allowHalfOpen: true });
  t.after(() => socket.destroy());
  return socket;
}

/** Everything the socket receives until the peer ends it. */
function readAll(socket: net.Socket): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    socket.on('data', (c: Buffer) => chunks.push(c));
    socket.on('end', () => resolve(Buffer.concat(chunks)));
    socket.on('error', reject);
  });
}

/** Resolves once the peer has closed (or reset) the connection; discards what it sends. */
function closedByPeer(socket: net.Socket): Promise<void> {
  return new Promise((resolve) => {
    if (socket.destroyed) return resolve();
    socket.once('end', () => resolve());
    socket.once('close', () => resolve());
    socket.resume();
  });
}

async function until(what: string, probe: () => boolean): Promise<void> {
  for (let i = 0; i < 200; i++) {
    if (probe()) return;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  assert.fail(`timed out waiting for ${what}`);
}

/** Sockets this process holds under more than one descriptor: the duplicates a relay polls. */
function duplicatedSockets(): number {
  const descriptors = new Map<string, number>();
  for (const fd of fs.readdirSync('/proc/self/fd')) {
    let target: string;
    try {
      target = fs.readlinkSync(`/proc/self/fd/${fd}`);
    } catch {
      continue; // closed meanwhile (the directory's own descriptor)
    }
    if (target.startsWith('socket:')) descriptors.set(target, (descriptors.get(target) ?? 0) + 1);
  }
  return [...descriptors.values()].filter((n) => n > 1).length;
}

test('echo through tcp_proxy, with byte and connection stats', TIMEOUT, async (t) => {
  const upstreamPort = await tcpServer(t, (s) => s.pipe(s));
  const { dp, port } = await proxy(t, upstreamPort);
  const duplicated = duplicatedSockets();
  const socket = connect(t, port);
  const echoed = new Promise<string>((resolve) => socket.once('data', (c: Buffer) => resolve(c.toString())));
  socket.write('hello proxy');
  assert.equal(await echoed, 'hello proxy');
  // Both connections up, the addon's relay moves the bytes: it polls a duplicate of each socket.
  assert.equal(duplicatedSockets() - duplicated, 2);
  // As in Envoy's TCP pool, a connection is a request of its host while it is up (least request reads it).
  assert.equal(dp.hostStat('backend', `127.0.0.1:${upstreamPort}`, 'rq_active'), 1);
  assert.equal(dp.stat('cluster.backend.upstream_rq_active'), 1);
  socket.end();
  await closedByPeer(socket);
  await until('the upstream side to close', () => dp.stat('cluster.backend.upstream_cx_active') === 0);
  assert.equal(duplicatedSockets(), duplicated, 'the relay let its duplicates go');
  const host = `127.0.0.1:${upstreamPort}`;
  assert.equal(dp.stat('tcp.tcp_stats.downstream_cx_total'), 1);
  assert.equal(dp.stat('tcp.tcp_stats.downstream_cx_rx_bytes_total'), 11);
  assert.equal(dp.stat('tcp.tcp_stats.downstream_cx_tx_bytes_total'), 11);
  assert.equal(dp.stat('cluster.backend.upstream_cx_total'), 1);
  assert.equal(dp.stat('cluster.backend.upstream_cx_rx_bytes_total'), 11);
  assert.equal(dp.stat('cluster.backend.upstream_cx_tx_bytes_total'), 11);
  assert.equal(dp.stat('cluster.backend.upstream_cx_destroy'), 1);
  assert.equal(dp.hostStat('backend', host, 'cx_total'), 1);
  assert.equal(dp.hostStat('backend', host, 'cx_active'), 0);
  assert.equal(dp.hostStat('backend', host, 'rq_total'), 1);
  assert.equal(dp.hostStat('backend', host, 'rq_active'), 0);
  assert.equal(dp.stat('cluster.backend.upstream_rq_total'), 1);
  assert.equal(dp.stat('cluster.backend.upstream_rq_active'), 0);
  assert.equal(dp.stat('cluster.backend.upstream_rq_pending_total'), 1);
  assert.equal(dp.stat('cluster.backend.upstream_rq_pending_active'), 0);
  await until('the downstream side to close', () => dp.stat(`listener.127.0.0.1_${port}.downstream_cx_active`) === 0);
  assert.equal(dp.stat(`listener.127.0.0.1_${port}.downstream_cx_total`), 1);
  assert.equal(dp.stat('server.total_connections'), 0);
  assert.equal(dp.listeners.connectionCount(), 0);
});

test('half-close: the client ends its side and still reads the reply', TIMEOUT, async (t) => {
  const upstreamPort = await tcpServer(t, (s) => {
    let received = 0;
    s.on('data', (c: Buffer) => (received += c.length));
    // The upstream answers only after it saw the client's FIN.
    s.on('end', () => s.end(`got ${received} bytes`));
  });
  const { port } = await proxy(t, upstreamPort);
  const socket = connect(t, port);
  const reply = readAll(socket);
  socket.end('0123456789');
  assert.equal((await reply).toString(), 'got 10 bytes');
});

test('a refused upstream closes the downstream connection and counts the failure', TIMEOUT, async (t) => {
  const upstreamPort = await refusedPort();
  const { dp, port } = await proxy(t, upstreamPort);
  const socket = connect(t, port);
  socket.on('error', () => undefined);
  await closedByPeer(socket);
  assert.equal(dp.stat('cluster.backend.upstream_cx_connect_fail'), 1);
  assert.equal(dp.stat('cluster.backend.upstream_rq_pending_active'), 0);
  assert.equal(dp.stat('cluster.backend.upstream_rq_total'), 0);
  assert.equal(dp.hostStat('backend', `127.0.0.1:${upstreamPort}`, 'cx_connect_fail'), 1);
  assert.equal(dp.stat('tcp.tcp_stats.downstream_cx_total'), 1);
});

test('a missing cluster or no host closes the connection', TIMEOUT, async (t) => {
  const dp = await startDataPlane(
    [listener('nocluster', tcpProxy('absent')), listener('nohost', tcpProxy('empty', { statPrefix: 'empty' }))],
    [staticCluster('empty', [])],
  );
  t.after(() => dp.close());
  for (const name of ['nocluster', 'nohost']) {
    const socket = connect(t, dp.port(name));
    socket.on('error', () => undefined);
    await closedByPeer(socket);
  }
  assert.equal(dp.stat('tcp.tcp_stats.downstream_cx_no_route'), 1);
  assert.equal(dp.stat('cluster.empty.upstream_cx_none_healthy'), 1);
});

const LIMIT = 64 * 1024;
// Several times what the four socket buffers between writer and reader take on loopback once
// autotuned (up to 9 MiB seen; 16 MiB was too little), so that stalling before half of it is the
// proxy's doing, not the kernel's.
const PUSHED = 64 * 1024 * 1024;
/** Beyond the two buffer limits: a read the proxy was doing when it paused, and Node's read buffer. */
const SLACK = 128 * 1024;

test('watermarks: an upstream that does not read holds the client back within the buffer limits', TIMEOUT, async (t) => {
  let upstreamSocket: net.Socket | null = null;
  const upstreamPort = await tcpServer(t, (s) => {
    upstreamSocket = s;
    s.pause();
  });
  const { dp, port } = await proxy(t, upstreamPort, {}, { perConnectionBufferLimitBytes: LIMIT }, { perConnectionBufferLimitBytes: LIMIT });
  const socket = connect(t, port);
  await new Promise((resolve) => socket.once('connect', resolve));
  const { data, sha256 } = payload(PUSHED);
  const pusher = push(socket, data);
  await stalled(pusher, () => upstreamSocket !== null && dp.stat('tcp.tcp_stats.downstream_flow_control_paused_reading_total') > 0);

  const inKernel = kernelQueuedBytes([socket.localPort!, upstreamSocket!.remotePort!]);
  const heldByProxy = pusher.accepted() - inKernel;
  assert.ok(pusher.accepted() < PUSHED / 2, `the client wrote ${pusher.accepted()} of ${PUSHED} bytes to an upstream that reads nothing`);
  assert.ok(heldByProxy <= 2 * LIMIT + SLACK, `the proxy holds ${heldByProxy} bytes (sent ${pusher.accepted()}, ${inKernel} in kernel queues)`);
  const buffered = dp.stat('cluster.backend.upstream_cx_tx_bytes_buffered');
  assert.ok(buffered > LIMIT / 2 && buffered <= LIMIT + SLACK, `upstream_cx_tx_bytes_buffered ${buffered} while backed up`);
  assert.equal(dp.stat('tcp.tcp_stats.downstream_flow_control_resumed_reading_total'), 0);

  const received = receive(upstreamSocket!, PUSHED);
  upstreamSocket!.resume();
  assert.equal(await received, sha256);
  await until('the buffer to drain', () => dp.stat('cluster.backend.upstream_cx_tx_bytes_buffered') === 0);
  const paused = dp.stat('tcp.tcp_stats.downstream_flow_control_paused_reading_total');
  assert.ok(paused >= 1);
  assert.equal(dp.stat('tcp.tcp_stats.downstream_flow_control_resumed_reading_total'), paused);
});

test('watermarks: a client that does not read holds the upstream back within the buffer limits', TIMEOUT, async (t) => {
  const { data, sha256 } = payload(PUSHED);
  let pusher: Pusher | null = null;
  let upstreamSocket: net.Socket | null = null;
  const upstreamPort = await tcpServer(t, (s) => {
    upstreamSocket = s;
    pusher = push(s, data);
  });
  const { dp, port } = await proxy(t, upstreamPort, {}, { perConnectionBufferLimitBytes: LIMIT }, { perConnectionBufferLimitBytes: LIMIT });
  const socket = connect(t, port);
  socket.pause();
  await until('the upstream connection', () => pusher !== null);
  await stalled(pusher!, () => dp.stat('cluster.backend.upstream_flow_control_paused_reading_total') > 0);

  const sent = pusher!.accepted();
  const heldByProxy = sent - kernelQueuedBytes([socket.localPort!, upstreamSocket!.remotePort!]);
  assert.ok(sent < PUSHED / 2, `the upstream wrote ${sent} of ${PUSHED} bytes to a client that reads nothing`);
  assert.ok(heldByProxy <= 2 * LIMIT + SLACK, `the proxy holds ${heldByProxy} of ${sent} bytes sent`);
  const buffered = dp.stat('tcp.tcp_stats.downstream_cx_tx_bytes_buffered');
  assert.ok(buffered > LIMIT / 2 && buffered <= LIMIT + SLACK, `downstream_cx_tx_bytes_buffered ${buffered} while backed up`);

  const received = receive(socket, PUSHED);
  socket.resume();
  assert.equal(await received, sha256);
  await until('the buffer to drain', () => dp.stat('tcp.tcp_stats.downstream_cx_tx_bytes_buffered') === 0);
  const paused = dp.stat('cluster.backend.upstream_flow_control_paused_reading_total');
  assert.equal(dp.stat('cluster.backend.upstream_flow_control_resumed_reading_total'), paused);
});

test('idle_timeout closes a silent connection', TIMEOUT, async (t) => {
  const upstreamPort = await tcpServer(t, () => undefined);
  const { dp, port } = await proxy(t, upstreamPort, { idleTimeoutMs: 200 });
  const socket = connect(t, port);
  socket.write('x');
  socket.on('error', () => undefined);
  await closedByPeer(socket);
  assert.equal(dp.stat('tcp.tcp_stats.idle_timeout'), 1);
});

test('close_connections_on_host_health_failure: a failed health check or an ejection closes tcp_proxy connections at once', TIMEOUT, async (t) => {
  for (const flag of [HealthFlag.FAILED_ACTIVE_HC, HealthFlag.FAILED_OUTLIER_CHECK]) {
    const upstreamPort = await tcpServer(t, (s) => s.pipe(s));
    const { dp, port } = await proxy(t, upstreamPort, {}, {}, { closeConnectionsOnHostHealthFailure: true });
    const socket = connect(t, port);
    const echoed = new Promise<string>((resolve) => socket.once('data', (c: Buffer) => resolve(c.toString())));
    socket.write('ping');
    assert.equal(await echoed, 'ping');
    dp.setHealthFlags('backend', `127.0.0.1:${upstreamPort}`, flag, true);
    await closedByPeer(socket);
    await until('the upstream connection to close', () => dp.stat('cluster.backend.upstream_cx_active') === 0);
    assert.equal(dp.stat('cluster.backend.upstream_cx_destroy_local'), 1);
  }
});

test('without close_connections_on_host_health_failure, a host turning unhealthy keeps its tcp_proxy connections', TIMEOUT, async (t) => {
  const upstreamPort = await tcpServer(t, (s) => s.pipe(s));
  const { dp, port } = await proxy(t, upstreamPort);
  const socket = connect(t, port);
  const first = new Promise<string>((resolve) => socket.once('data', (c: Buffer) => resolve(c.toString())));
  socket.write('one');
  assert.equal(await first, 'one');
  dp.setHealthFlags('backend', `127.0.0.1:${upstreamPort}`, HealthFlag.FAILED_ACTIVE_HC, true);
  // The connection still carries data after the update was applied.
  const second = new Promise<string>((resolve) => socket.once('data', (c: Buffer) => resolve(c.toString())));
  socket.write('two');
  assert.equal(await second, 'two');
  assert.equal(dp.stat('cluster.backend.upstream_cx_active'), 1);
});
