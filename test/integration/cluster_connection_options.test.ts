// The connection-level Cluster fields on real traffic: source address, TCP keepalive,
// max_requests_per_connection, close_connections_on_host_set_change, the upstream PROXY protocol
// transport socket (over plaintext and TLS) and track_timeout_budgets (per_connection_buffer_limit_bytes: data_plane_{tcp,http}.test.ts).

import assert from 'node:assert/strict';
import * as http from 'node:http';
import * as net from 'node:net';
import { Duplex } from 'node:stream';
import { test, type TestContext } from 'node:test';
import * as tls from 'node:tls';
import type { ClusterConfig, ListenerConfig, LocalityLbEndpoints, TransportSocketConfig } from '../../src/config/model';
import { getTcpKeepalive } from '../../src/native/addon';
import { clusterRoute, httpConnectionManager, listener, startDataPlane, staticCluster, tcpProxy, virtualHost, type DataPlane } from '../helpers/data_plane';
import { closeServer, listen, request, startUpstream, tcpUpstream, type Upstream } from '../helpers/http_peers';
import { localCluster, httpListener, tcpProxyListener } from '../helpers/config_fixtures';
import { startProxy, waitFor } from '../helpers/proxy_process';
import { ownSocketFd } from '../helpers/socket_owner';
import { TestPki } from '../helpers/test_pki';

const TIMEOUT = { timeout: 20000 };

async function upstream(t: TestContext, name: string): Promise<Upstream> {
  const u = await startUpstream(name);
  t.after(() => u.close());
  return u;
}


async function httpProxy(t: TestContext, port: number, cluster: Partial<ClusterConfig>, listenerOverrides: Partial<ListenerConfig> = {}): Promise<DataPlane> {
  const routes = [virtualHost('all', ['*'], [clusterRoute({ prefix: '/' }, 'backend')])];
  const dp = await startDataPlane([listener('http', httpConnectionManager(routes), listenerOverrides)], [staticCluster('backend', [{ port }], cluster)]);
  t.after(() => dp.close());
  return dp;
}

async function tcpProxyPlane(t: TestContext, port: number, cluster: Partial<ClusterConfig>, listenerOverrides: Partial<ListenerConfig> = {}): Promise<DataPlane> {
  const dp = await startDataPlane([listener('tcp', tcpProxy('backend'), listenerOverrides)], [staticCluster('backend', [{ port }], cluster)]);
  t.after(() => dp.close());
  return dp;
}

function connect(t: TestContext, port: number): net.Socket {
  const socket = net.connect(port, '127.0.0.1');
  t.after(() => socket.destroy());
  socket.on('error', () => undefined);
  return socket;
}

function assignment(ports: readonly number[]): LocalityLbEndpoints[] {
  return [
    {
      locality: { region: '', zone: '', subZone: '' },
      priority: 0,
      loadBalancingWeight: 0,
      lbEndpoints: ports.map((port) => ({ address: { address: '127.0.0.1', port }, hostname: '', healthStatus: 'HEALTHY', loadBalancingWeight: 1, metadata: {} })),
    },
  ];
}

// ---- upstream_bind_config ---------------------------------------------------------------------

test('upstream_bind_config: HTTP and tcp_proxy connections come from the source address (and port)', TIMEOUT, async (t) => {
  const peers: { address: string; port: number }[] = [];
  const server = http.createServer((req, res) => {
    peers.push({ address: req.socket.remoteAddress!, port: req.socket.remotePort! });
    res.end('ok');
  });
  await listen(server);
  t.after(() => closeServer(server));
  const port = (server.address() as net.AddressInfo).port;
  const dp = await httpProxy(t, port, { upstreamBindConfig: { address: '127.0.0.2', port: 0 } });
  assert.equal((await request(dp.port('http'))).status, 200);
  assert.equal(peers[0]!.address, '127.0.0.2');

  // A fixed source port: tcp_proxy's connection comes from exactly 127.0.0.2:<port>.
  const free = net.createServer();
  await new Promise<void>((resolve) => free.listen(0, '127.0.0.2', resolve));
  const sourcePort = (free.address() as net.AddressInfo).port;
  await closeServer(free);
  const seen = new Promise<string>((resolve) => void tcpUpstream(t, (s) => resolve(`${s.remoteAddress}:${s.remotePort}`)).then((p) => (tcpPort = p)));
  let tcpPort = 0;
  await waitFor('the tcp upstream', () => (tcpPort !== 0 ? true : undefined));
  const tcp = await tcpProxyPlane(t, tcpPort, { upstreamBindConfig: { address: '127.0.0.2', port: sourcePort } });
  connect(t, tcp.port('tcp'));
  assert.equal(await seen, `127.0.0.2:${sourcePort}`);
});

// ---- tcp_keepalive ----------------------------------------------------------------------------

test('tcp_keepalive: the upstream socket carries SO_KEEPALIVE and the configured knobs; unset ones keep the system default', TIMEOUT, async (t) => {
  const peerPorts: number[] = [];
  const upstreamPort = await tcpUpstream(t, (s) => peerPorts.push(s.remotePort!));
  const dp = await tcpProxyPlane(t, upstreamPort, { tcpKeepalive: { probes: 4, timeS: 77, intervalS: null } });
  const client = connect(t, dp.port('tcp'));
  await waitFor('the upstream connection', () => (peerPorts.length === 1 && dp.stat('cluster.backend.upstream_cx_active') === 1 ? true : undefined));
  const fd = ownSocketFd(peerPorts[0]!);
  assert.ok(fd !== undefined, 'the proxy end of the upstream connection');
  // The system default interval, read from a socket keepalive was never configured on.
  const defaults = getTcpKeepalive(ownSocketFd(client.localPort!)!);
  assert.equal(defaults.enabled, false);
  assert.deepEqual(getTcpKeepalive(fd), { enabled: true, probes: 4, timeS: 77, intervalS: defaults.intervalS });
});

test('without tcp_keepalive the upstream socket has no keepalive', TIMEOUT, async (t) => {
  const peerPorts: number[] = [];
  const upstreamPort = await tcpUpstream(t, (s) => peerPorts.push(s.remotePort!));
  const dp = await tcpProxyPlane(t, upstreamPort, {});
  connect(t, dp.port('tcp'));
  await waitFor('the upstream connection', () => (peerPorts.length === 1 && dp.stat('cluster.backend.upstream_cx_active') === 1 ? true : undefined));
  assert.equal(getTcpKeepalive(ownSocketFd(peerPorts[0]!)!).enabled, false);
});

// ---- max_requests_per_connection --------------------------------------------------------------

test('max_requests_per_connection 2: five sequential requests on one client connection use three upstream connections', TIMEOUT, async (t) => {
  const u = await upstream(t, 'max2');
  const connections = new Set<number>();
  u.server.on('connection', (s: net.Socket) => connections.add(s.remotePort!));
  const dp = await httpProxy(t, u.port, { maxRequestsPerConnection: 2 });
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  t.after(() => agent.destroy());
  for (let i = 0; i < 5; i++) assert.equal((await request(dp.port('http'), { agent })).status, 200);
  assert.equal(connections.size, 3);
  assert.equal(dp.stat('cluster.backend.upstream_cx_total'), 3);
  assert.equal(dp.stat('cluster.backend.upstream_cx_max_requests'), 2);
});

// ---- close_connections_on_host_set_change -----------------------------------------------------

for (const enabled of [true, false]) {
  test(`close_connections_on_host_set_change ${enabled}: a host removed ${enabled ? 'drains' : 'keeps'} the pooled connections of the others`, TIMEOUT, async (t) => {
    const a = await upstream(t, 'a');
    const b = await upstream(t, 'b');
    const routes = [virtualHost('all', ['*'], [clusterRoute({ prefix: '/' }, 'backend')])];
    const dp = await startDataPlane([listener('http', httpConnectionManager(routes))], [staticCluster('backend', [{ port: a.port }, { port: b.port }], { closeConnectionsOnHostSetChange: enabled })]);
    t.after(() => dp.close());
    const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
    t.after(() => agent.destroy());
    // Round robin: one request to each host, each leaving an idle pooled connection.
    for (let i = 0; i < 2; i++) assert.equal((await request(dp.port('http'), { agent })).status, 200);
    assert.equal(dp.stat('cluster.backend.upstream_cx_active'), 2);
    // The same set again is no change.
    dp.setMembership('backend', assignment([a.port, b.port]));
    assert.equal(dp.stat('cluster.backend.upstream_cx_active'), 2);
    // b leaves: its own connection goes either way; a's only with the option.
    dp.setMembership('backend', assignment([a.port]));
    await waitFor('the drained connections to close', () => (dp.stat('cluster.backend.upstream_cx_active') === (enabled ? 0 : 1) ? true : undefined));
    assert.equal((await request(dp.port('http'), { agent })).status, 200);
    assert.equal(a.seen.length, 2);
    assert.equal(dp.hostStat('backend', `127.0.0.1:${a.port}`, 'cx_total'), enabled ? 2 : 1);
  });
}

test('close_connections_on_host_set_change: a connection busy with a request finishes it, then closes', TIMEOUT, async (t) => {
  let respond: () => void = () => undefined;
  const held = new Promise<void>((resolve) => (respond = resolve));
  const server = http.createServer((_req, res) => void held.then(() => res.end('late')));
  await listen(server);
  t.after(() => closeServer(server));
  const port = (server.address() as net.AddressInfo).port;
  const dp = await httpProxy(t, port, { closeConnectionsOnHostSetChange: true });
  const reply = request(dp.port('http'));
  await waitFor('the request upstream', () => (dp.stat('cluster.backend.upstream_rq_active') === 1 ? true : undefined));
  dp.setMembership('backend', assignment([port, 1]));
  assert.equal(dp.stat('cluster.backend.upstream_cx_active'), 1);
  respond();
  assert.equal((await reply).body, 'late');
  await waitFor('the drained connection to close', () => (dp.stat('cluster.backend.upstream_cx_active') === 0 ? true : undefined));
});

// ---- transport_socket: upstream PROXY protocol --------------------------------------------

/** Reads a v1 header line, or a v2 binary header, off the front of `data`; null until complete. */
function parseProxyHeader(data: Buffer): { text: string; length: number } | null {
  if (data.subarray(0, 6).toString('latin1') === 'PROXY ') {
    const end = data.indexOf('\r\n');
    return end < 0 ? null : { text: data.toString('latin1', 0, end), length: end + 2 };
  }
  if (data.length < 16) return null;
  const length = 16 + data.readUInt16BE(14);
  if (data.length < length) return null;
  assert.equal(data.subarray(0, 12).toString('hex'), '0d0a0d0a000d0a515549540a');
  assert.equal(data[12], 0x21);
  assert.equal(data[13], 0x11, 'TCP over IPv4');
  const ip = (at: number) => [...data.subarray(at, at + 4)].join('.');
  return { text: `V2 ${ip(16)} ${ip(20)} ${data.readUInt16BE(24)} ${data.readUInt16BE(26)}`, length };
}

/** The upstream's TLS server context (none verifies the proxy's certificate), or null for plaintext. */
type UpstreamTls = tls.SecureContext | null;

function upstreamTlsContext(t: TestContext): tls.SecureContext {
  const pki = new TestPki();
  t.after(() => pki.cleanup());
  const ca = pki.ca('ca');
  const leaf = pki.leaf('backend', ca, ['DNS:backend.test']);
  return tls.createSecureContext({ cert: leaf.cert, key: leaf.key });
}

/**
 * An upstream that takes a PROXY header first, then speaks plaintext or (with `secure`) TLS
 * after it: `onStream` gets the header's text and the stream of what follows.
 */
async function proxyProtocolUpstream(t: TestContext, secure: UpstreamTls, onStream: (header: string, stream: Duplex) => void): Promise<number> {
  return tcpUpstream(t, (socket) => {
    let buffered = Buffer.alloc(0);
    const onData = (chunk: Buffer): void => {
      buffered = Buffer.concat([buffered, chunk]);
      const parsed = parseProxyHeader(buffered);
      if (parsed === null) return;
      socket.off('data', onData);
      // What came after the header, then the rest of the connection, as one stream.
      const rest = new Duplex({
        read: () => undefined,
        write: (data: Buffer, _encoding, done) => socket.write(data, done),
        final: (done) => {
          socket.end();
          done();
        },
      });
      rest.push(buffered.subarray(parsed.length));
      socket.on('data', (data: Buffer) => rest.push(data));
      socket.on('end', () => rest.push(null));
      socket.on('close', () => rest.destroy());
      if (secure === null) return onStream(parsed.text, rest);
      const tlsSocket = new tls.TLSSocket(rest, { isServer: true, secureContext: secure });
      tlsSocket.on('error', () => socket.destroy());
      tlsSocket.once('secure', () => onStream(parsed.text, tlsSocket));
    };
    socket.on('data', onData);
  });
}

/** Answers each HTTP request on `stream` with the PROXY header its connection started with. */
function answerWithHeader(header: string, stream: Duplex): void {
  let buffered = Buffer.alloc(0);
  stream.on('data', (chunk: Buffer) => {
    buffered = Buffer.concat([buffered, chunk]);
    for (let end = buffered.indexOf('\r\n\r\n'); end >= 0; end = buffered.indexOf('\r\n\r\n')) {
      buffered = buffered.subarray(end + 4);
      stream.write(`HTTP/1.1 200 OK\r\ncontent-length: ${header.length}\r\n\r\n${header}`);
    }
  });
}

/** proxy.transport_sockets.upstream_proxy_protocol around raw_buffer, or around tls (no verification, as without trusted_ca). */
function proxyProtocolSocket(version: 'V1' | 'V2', secure: UpstreamTls): TransportSocketConfig {
  const inner: TransportSocketConfig =
    secure === null
      ? { kind: 'raw_buffer' }
      : {
          kind: 'tls',
          context: {
            common: { tlsParams: { minimumProtocolVersion: 'TLS_AUTO', maximumProtocolVersion: 'TLS_AUTO', cipherSuites: [], ecdhCurves: [] }, tlsCertificates: [], tlsCertificateSdsSecretConfigs: [], validationContext: null, validationContextSdsSecretConfig: null, alpnProtocols: [] },
            sni: 'backend.test',
            allowRenegotiation: false,
            maxSessionKeys: 1,
          },
        };
  return { kind: 'upstream_proxy_protocol', version, transportSocket: inner };
}

for (const over of ['raw_buffer', 'tls'] as const) {
  test(`PROXY protocol V1 over ${over}, tcp_proxy: the header names the client before any of its bytes`, TIMEOUT, async (t) => {
    const secure = over === 'tls' ? upstreamTlsContext(t) : null;
    const received: string[] = [];
    const upstreamPort = await proxyProtocolUpstream(t, secure, (header, stream) => {
      received.push(header);
      stream.on('data', (c: Buffer) => received.push(c.toString('latin1')));
    });
    const dp = await tcpProxyPlane(t, upstreamPort, { transportSocket: proxyProtocolSocket('V1', secure) });
    const client = connect(t, dp.port('tcp'));
    await new Promise((resolve) => client.once('connect', resolve));
    client.write('hello');
    const expected = [`PROXY TCP4 127.0.0.1 127.0.0.1 ${client.localPort} ${dp.port('tcp')}`, 'hello'];
    await waitFor('the header and the data', () => (received.join('').length >= expected.join('').length ? true : undefined));
    assert.deepEqual([received[0], received.slice(1).join('')], expected);
    assert.equal(dp.stat('cluster.backend.ssl.handshake'), over === 'tls' ? 1 : 0);
  });

  test(`PROXY protocol V2 over ${over}, HTTP: each client connection gets its own upstream connections, which close with it`, TIMEOUT, async (t) => {
    const secure = over === 'tls' ? upstreamTlsContext(t) : null;
    const headers: string[] = [];
    const upstreamPort = await proxyProtocolUpstream(t, secure, (header, stream) => {
      headers.push(header);
      answerWithHeader(header, stream);
    });
    const dp = await httpProxy(t, upstreamPort, { transportSocket: proxyProtocolSocket('V2', secure) });
    const port = dp.port('http');
    const agents = [new http.Agent({ keepAlive: true, maxSockets: 1 }), new http.Agent({ keepAlive: true, maxSockets: 1 })];
    t.after(() => agents.forEach((a) => a.destroy()));
    const clientPorts: number[] = [];
    for (const agent of agents) {
      for (let i = 0; i < 2; i++) {
        const reply = await new Promise<{ body: string; localPort: number }>((resolve, reject) => {
          const req = http.get({ host: '127.0.0.1', port, agent }, (res) => {
            let body = '';
            res.on('data', (c: Buffer) => (body += c.toString()));
            res.on('end', () => resolve({ body, localPort: req.socket!.localPort! }));
          });
          req.on('error', reject);
        });
        clientPorts.push(reply.localPort);
        assert.equal(reply.body, `V2 127.0.0.1 127.0.0.1 ${reply.localPort} ${port}`);
      }
    }
    assert.equal(clientPorts[0], clientPorts[1]);
    assert.notEqual(clientPorts[1], clientPorts[2]);
    // Reused per client: one upstream connection (one header) per client connection.
    assert.equal(headers.length, 2);
    assert.equal(dp.stat('cluster.backend.upstream_cx_active'), 2);
    assert.equal(dp.stat('cluster.backend.ssl.handshake'), over === 'tls' ? 2 : 0);
    agents[0]!.destroy();
    await waitFor("the first client's upstream connection to close", () => (dp.stat('cluster.backend.upstream_cx_active') === 1 ? true : undefined));
  });
}

test("PROXY protocol in Envoy's own form, real proxy: V2 around tls for tcp_proxy, V1 around raw_buffer for HTTP", { timeout: 40000 }, async (t) => {
  const secure = upstreamTlsContext(t);
  const seen: string[] = [];
  const tlsPort = await proxyProtocolUpstream(t, secure, (header, stream) => {
    seen.push(header);
    stream.on('data', (c: Buffer) => seen.push(c.toString('latin1')));
  });
  const rawPort = await proxyProtocolUpstream(t, null, answerWithHeader);
  const envoySocket = (version: string, inner: Record<string, unknown>) => ({
    name: 'envoy.transport_sockets.upstream_proxy_protocol',
    typed_config: {
      '@type': 'type.googleapis.com/envoy.extensions.transport_sockets.proxy_protocol.v3.ProxyProtocolUpstreamTransport',
      config: { version },
      transport_socket: inner,
    },
  });
  const tlsInner = { name: 'envoy.transport_sockets.tls', typed_config: { '@type': 'type.googleapis.com/envoy.extensions.transport_sockets.tls.v3.UpstreamTlsContext', sni: 'backend.test' } };
  const proxy = await startProxy({
    static_resources: {
      listeners: [tcpProxyListener('tcp', 0, 'tls'), httpListener('http', 0, [{ match: { prefix: '/' }, route: { cluster: 'raw' } }])],
      clusters: [
        { ...localCluster('tls', tlsPort), transport_socket: envoySocket('V2', tlsInner) },
        { ...localCluster('raw', rawPort), transport_socket: envoySocket('V1', { name: 'envoy.transport_sockets.raw_buffer' }) },
      ],
    },
  });
  t.after(() => proxy.cleanup());
  const tcpPort = await proxy.listenerPort('tcp');
  const client = connect(t, tcpPort);
  await new Promise((resolve) => client.once('connect', resolve));
  client.write('hello');
  await waitFor('the header and the data over TLS', () => (seen.join('').includes('hello') ? true : undefined));
  assert.deepEqual(seen, [`V2 127.0.0.1 127.0.0.1 ${client.localPort} ${tcpPort}`, 'hello']);
  assert.equal(await proxy.stat('cluster.tls.ssl.handshake'), 1);
  const httpPort = await proxy.listenerPort('http');
  const reply = await new Promise<{ body: string; localPort: number }>((resolve, reject) => {
    const req = http.get({ host: '127.0.0.1', port: httpPort, agent: false }, (res) => {
      let body = '';
      res.on('data', (c: Buffer) => (body += c.toString()));
      res.on('end', () => resolve({ body, localPort: req.socket!.localPort! }));
    });
    req.on('error', reject);
  });
  assert.equal(reply.body, `PROXY TCP4 127.0.0.1 127.0.0.1 ${reply.localPort} ${httpPort}`);
});

// ---- track_timeout_budgets --------------------------------------------------------------------

test('track_timeout_budgets: /stats of a running proxy shows the budget histograms with the share of the route timeout used', { timeout: 40000 }, async (t) => {
  const slow = await startUpstream('slow', (_req, res) => setTimeout(() => res.end('done'), 400));
  t.after(() => slow.close());
  const tracked = { ...localCluster('tracked', slow.port), track_timeout_budgets: true };
  const untracked = localCluster('untracked', slow.port);
  const routes = [
    { match: { prefix: '/untracked' }, route: { cluster: 'untracked', timeout: '1s' } },
    { match: { prefix: '/' }, route: { cluster: 'tracked', timeout: '1s' } },
  ];
  const proxy = await startProxy({ stats_flush_interval: '0.2s', static_resources: { listeners: [httpListener('http', 0, routes)], clusters: [tracked, untracked] } });
  t.after(() => proxy.cleanup());
  const port = await proxy.listenerPort('http');
  assert.equal((await request(port, { path: '/' })).status, 200);
  assert.equal((await request(port, { path: '/untracked' })).status, 200);
  const body = await waitFor('the flushed histograms', async () => {
    const text = (await proxy.admin('/stats?filter=timeout_budget')).body;
    return /tracked\.upstream_rq_timeout_budget_percent_used: P0\([^,]*,\d/.test(text) ? text : undefined;
  });
  // 400 ms of a 1 s timeout: about 40%; no per-try timeout (infinite): 0%.
  const p50 = (name: string) => Number(new RegExp(`cluster\\.tracked\\.${name}: .*P50\\([^,]*,([\\d.]+)\\)`).exec(body)?.[1]);
  const used = p50('upstream_rq_timeout_budget_percent_used');
  assert.ok(used >= 40 && used < 60, `percent used ${used} in\n${body}`);
  assert.equal(p50('upstream_rq_timeout_budget_per_try_percent_used'), 0);
  assert.ok(!body.includes('cluster.untracked.'), body);
});
