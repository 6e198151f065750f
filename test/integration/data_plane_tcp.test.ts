import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import * as net from 'node:net';
import { test, type TestContext } from 'node:test';
import { listener, startDataPlane, staticCluster, tcpProxy, type DataPlane } from '../helpers/data_plane';
import { closeServer, listen } from '../helpers/http_peers';
import type { ClusterConfig, ListenerConfig, TcpProxyConfig } from '../../src/config/model';

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

test('echo through tcp_proxy, with byte and connection stats', TIMEOUT, async (t) => {
  const upstreamPort = await tcpServer(t, (s) => s.pipe(s));
  const { dp, port } = await proxy(t, upstreamPort);
  const socket = connect(t, port);
  const echoed = new Promise<string>((resolve) => socket.once('data', (c: Buffer) => resolve(c.toString())));
  socket.write('hello proxy');
  assert.equal(await echoed, 'hello proxy');
  socket.end();
  await closedByPeer(socket);
  await until('the upstream side to close', () => dp.stat('cluster.backend.upstream_cx_active') === 0);
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
  const refusing = net.createServer();
  await listen(refusing);
  const upstreamPort = (refusing.address() as net.AddressInfo).port;
  await closeServer(refusing);
  const { dp, port } = await proxy(t, upstreamPort);
  const socket = connect(t, port);
  socket.on('error', () => undefined);
  await closedByPeer(socket);
  assert.equal(dp.stat('cluster.backend.upstream_cx_connect_fail'), 1);
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

test('backpressure: a slow reader pauses the writer instead of buffering without bound', TIMEOUT, async (t) => {
  let upstreamSocket: net.Socket | null = null;
  const upstreamPort = await tcpServer(t, (s) => {
    upstreamSocket = s;
    s.pause();
  });
  const limit = 64 * 1024;
  const { dp, port } = await proxy(t, upstreamPort, {}, { perConnectionBufferLimitBytes: limit }, { perConnectionBufferLimitBytes: limit });
  const socket = connect(t, port);
  const payload = Buffer.alloc(32 * 1024 * 1024, 7);
  for (let i = 0; i < payload.length; i += 4096) payload[i] = i & 0xff;
  socket.write(payload);
  await until('the proxy to stop reading', () => dp.stat('tcp.tcp_stats.downstream_flow_control_paused_reading_total') > 0);
  // The proxy holds at most about the limit (plus one read) while the upstream does not read.
  await new Promise((resolve) => setTimeout(resolve, 200));
  const forwarded = dp.stat('cluster.backend.upstream_cx_tx_bytes_total');
  assert.ok(forwarded < payload.length / 2, `forwarded ${forwarded} of ${payload.length} bytes to a reader that reads nothing`);

  const hash = createHash('sha256');
  let received = 0;
  const done = new Promise<void>((resolve) => {
    upstreamSocket!.on('data', (c: Buffer) => {
      hash.update(c);
      received += c.length;
      if (received === payload.length) resolve();
    });
  });
  upstreamSocket!.resume();
  await done;
  assert.equal(hash.digest('hex'), createHash('sha256').update(payload).digest('hex'));
  assert.ok(dp.stat('tcp.tcp_stats.downstream_flow_control_resumed_reading_total') > 0);
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
