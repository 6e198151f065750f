import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import * as http from 'node:http';
import * as net from 'node:net';
import { test, type TestContext } from 'node:test';
import {
  clusterRoute,
  directRoute,
  httpConnectionManager,
  listener,
  startDataPlane,
  staticCluster,
  virtualHost,
  type DataPlane,
} from '../helpers/data_plane';
import { bodyAfterHead, kernelQueuedBytes, payload, push, stalled, type Pusher } from '../helpers/backpressure';
import { closeServer, listen, request, startUpstream, tcpUpstream, type Handler, type Upstream } from '../helpers/http_peers';
import { refusedPort } from '../helpers/refused_port';
import type { ClusterConfig, HttpConnectionManagerConfig, ListenerConfig } from '../../src/config/model';
import type { DrainDecider } from '../../src/server/drain_decider';
import { commonHttpProtocolOptionsOf } from '../../src/config/model_builder';
import { waitFor } from '../helpers/proxy_process';

const TIMEOUT = { timeout: 20000 };
const CONNECT_ERROR = 'upstream connect error or disconnect/reset before headers. reset reason: connection failure';

async function upstream(t: TestContext, name: string, handler?: Handler): Promise<Upstream> {
  const u = await startUpstream(name, handler);
  t.after(() => u.close());
  return u;
}

async function dataPlane(
  t: TestContext,
  listeners: ListenerConfig[],
  clusters: ClusterConfig[],
  options: { drain?: DrainDecider; random?: () => number; localAddress?: string } = {},
): Promise<DataPlane> {
  const dp = await startDataPlane(listeners, clusters, options);
  t.after(() => dp.close());
  return dp;
}

/** A proxy whose only virtual host sends everything to cluster `backend` at `port`. */
async function simpleProxy(t: TestContext, port: number, hcm: Partial<HttpConnectionManagerConfig> = {}, cluster: Partial<ClusterConfig> = {}, timeoutMs = 15000) {
  const routes = [virtualHost('all', ['*'], [clusterRoute({ prefix: '/' }, 'backend', { timeoutMs })])];
  const dp = await dataPlane(t, [listener('http', httpConnectionManager(routes, hcm))], [staticCluster('backend', [{ port }], cluster)]);
  return { dp, port: dp.port('http') };
}

test('routes by host, prefix and path; direct responses; unknown paths get 404', TIMEOUT, async (t) => {
  const api = await upstream(t, 'api');
  const web = await upstream(t, 'web');
  const exact = await upstream(t, 'exact');
  const routes = [
    virtualHost('api', ['api.example.com'], [clusterRoute({ prefix: '/' }, 'api')]),
    virtualHost('web', ['*.example.com', 'example.com'], [
      clusterRoute({ path: '/exact' }, 'exact'),
      directRoute({ prefix: '/health' }, 200, 'ok\n'),
      clusterRoute({ prefix: '/static/' }, 'web'),
    ]),
  ];
  const dp = await dataPlane(t, [listener('http', httpConnectionManager(routes))], [
    staticCluster('api', [{ port: api.port }]),
    staticCluster('web', [{ port: web.port }]),
    staticCluster('exact', [{ port: exact.port }]),
  ]);
  const port = dp.port('http');

  const viaHost = await request(port, { path: '/anything', headers: { host: 'api.example.com' } });
  assert.equal(JSON.parse(viaHost.body).upstream, 'api');
  const viaPrefix = await request(port, { path: '/static/app.js', headers: { host: 'www.example.com:8443' } });
  assert.equal(JSON.parse(viaPrefix.body).upstream, 'web');
  const viaPath = await request(port, { path: '/exact?x=1', headers: { host: 'example.com' } });
  assert.equal(JSON.parse(viaPath.body).upstream, 'exact');
  assert.equal(JSON.parse(viaPath.body).url, '/exact?x=1');

  const direct = await request(port, { path: '/health', headers: { host: 'example.com' } });
  assert.equal(direct.status, 200);
  assert.equal(direct.body, 'ok\n');
  assert.equal(direct.headers['content-type'], 'text/plain');
  assert.equal(direct.headers.server, 'proxy');

  const missing = await request(port, { path: '/nowhere', headers: { host: 'example.com' } });
  assert.equal(missing.status, 404);
  assert.equal(missing.body, '');
  const unknownHost = await request(port, { headers: { host: 'other.org' } });
  assert.equal(unknownHost.status, 404);

  assert.equal(dp.stat('http.ingress_http.downstream_rq_total'), 6);
  assert.equal(dp.stat('http.ingress_http.downstream_rq_2xx'), 4);
  assert.equal(dp.stat('http.ingress_http.downstream_rq_4xx'), 2);
  assert.equal(dp.stat('http.ingress_http.downstream_rq_completed'), 6);
  assert.equal(dp.stat('http.ingress_http.no_route'), 2);
  assert.equal(dp.stat('http.ingress_http.rq_direct_response'), 1);
  assert.equal(dp.stat('http.ingress_http.rq_total'), 3);
  assert.equal(dp.stat('cluster.api.upstream_rq_200'), 1);
  assert.equal(dp.stat('cluster.web.upstream_rq_2xx'), 1);
  assert.equal(dp.stat('cluster.exact.upstream_rq_completed'), 1);
  assert.equal(dp.hostStat('api', `127.0.0.1:${api.port}`, 'rq_success'), 1);
  assert.equal(dp.stat(`listener.127.0.0.1_${port}.downstream_cx_total`), 6);
});

test('responses count again as external or internal, and a canary\'s under canary.', TIMEOUT, async (t) => {
  const stable = await upstream(t, 'stable', (req, res) => {
    // The upstream's own word that it is a canary.
    if (req.url === '/flagged') res.setHeader('x-proxy-upstream-canary', 'true');
    res.end('ok');
  });
  const canary = await upstream(t, 'canary', (_req, res) => res.end('ok'));
  const routes = [virtualHost('all', ['*'], [clusterRoute({ prefix: '/canary' }, 'canaries'), clusterRoute({ prefix: '/' }, 'stable')])];
  const dp = await dataPlane(
    t,
    // use_remote_address: a loopback peer is internal, as Envoy marks it x-envoy-internal.
    [listener('edge', httpConnectionManager(routes, { useRemoteAddress: true })), listener('plain', httpConnectionManager(routes))],
    [staticCluster('stable', [{ port: stable.port }]), staticCluster('canaries', [{ port: canary.port, metadata: { 'proxy.lb': { canary: true } } }])],
  );
  for (const [listenerName, path] of [['plain', '/a'], ['plain', '/flagged'], ['edge', '/a'], ['plain', '/canary']] as const) {
    assert.equal((await request(dp.port(listenerName), { path })).status, 200);
  }
  assert.equal(dp.stat('cluster.stable.upstream_rq_200'), 3);
  assert.equal(dp.stat('cluster.stable.external.upstream_rq_200'), 2);
  assert.equal(dp.stat('cluster.stable.external.upstream_rq_2xx'), 2);
  assert.equal(dp.stat('cluster.stable.external.upstream_rq_completed'), 2);
  assert.equal(dp.stat('cluster.stable.internal.upstream_rq_200'), 1);
  assert.equal(dp.stat('cluster.stable.canary.upstream_rq_200'), 1);
  assert.equal(dp.stat('cluster.canaries.canary.upstream_rq_200'), 1);
  assert.equal(dp.stat('cluster.canaries.external.upstream_rq_200'), 1);
  assert.equal(dp.stat('cluster.canaries.internal.upstream_rq_200'), 0);
});

test('a response streams: its first chunk arrives before the upstream ends it', TIMEOUT, async (t) => {
  let finish: () => void = () => undefined;
  const u = await upstream(t, 'stream', (_req, res) => {
    res.writeHead(200, { 'content-type': 'text/plain' });
    res.write('first;');
    finish = () => res.end('last');
  });
  const { port } = await simpleProxy(t, u.port);
  const body = await new Promise<string>((resolve, reject) => {
    http
      .get({ host: '127.0.0.1', port, path: '/', agent: false }, (res) => {
        assert.equal(res.headers['transfer-encoding'], 'chunked');
        let text = '';
        res.on('data', (c: Buffer) => {
          text += c.toString();
          // Only now, with the first chunk received, does the upstream finish.
          if (text === 'first;') finish();
        });
        res.on('end', () => resolve(text));
      })
      .on('error', reject);
  });
  assert.equal(body, 'first;last');
});

test('a large upload streams to the upstream before the client has sent it all', TIMEOUT, async (t) => {
  let received = 0;
  let onFirstBytes: () => void = () => undefined;
  const firstBytes = new Promise<void>((resolve) => (onFirstBytes = resolve));
  const server = http.createServer((req, res) => {
    req.on('data', (c: Buffer) => {
      received += c.length;
      onFirstBytes();
    });
    req.on('end', () => res.end(String(received)));
  });
  await listen(server);
  t.after(() => closeServer(server));
  const { dp, port } = await simpleProxy(t, (server.address() as net.AddressInfo).port);

  const piece = Buffer.alloc(1024 * 1024, 0x61);
  const reply = new Promise<string>((resolve, reject) => {
    const req = http.request({ host: '127.0.0.1', port, method: 'POST', path: '/upload', agent: false }, (res) => {
      let text = '';
      res.on('data', (c: Buffer) => (text += c.toString()));
      res.on('end', () => resolve(text));
    });
    req.on('error', reject);
    req.write(piece);
    // The rest goes only once the upstream has seen the start: nothing waits for the whole body.
    void firstBytes.then(() => {
      for (let i = 0; i < 7; i++) req.write(piece);
      req.end();
    });
  });
  assert.equal(await reply, String(8 * piece.length));
  assert.ok(dp.stat('cluster.backend.upstream_cx_tx_bytes_total') > 8 * piece.length);
});

test('keep-alive: sequential requests reuse one upstream connection', TIMEOUT, async (t) => {
  const u = await upstream(t, 'ka');
  const { dp, port } = await simpleProxy(t, u.port);
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  t.after(() => agent.destroy());
  for (let i = 0; i < 5; i++) assert.equal((await request(port, { agent, path: `/${i}` })).status, 200);
  assert.equal(dp.stat('cluster.backend.upstream_cx_total'), 1);
  assert.equal(dp.stat('cluster.backend.upstream_cx_http1_total'), 1);
  assert.equal(dp.stat('cluster.backend.upstream_rq_total'), 5);
  assert.equal(dp.hostStat('backend', `127.0.0.1:${u.port}`, 'rq_total'), 5);
  assert.equal(dp.hostStat('backend', `127.0.0.1:${u.port}`, 'cx_total'), 1);
  assert.equal(dp.stat('http.ingress_http.downstream_cx_total'), 1);
  assert.equal(dp.stat('http.ingress_http.downstream_rq_active'), 0);
  assert.equal(dp.stat('cluster.backend.upstream_rq_active'), 0);
});

test('max_requests_per_connection 1 opens a connection per request', TIMEOUT, async (t) => {
  const u = await upstream(t, 'once');
  const { dp, port } = await simpleProxy(t, u.port, {}, { maxRequestsPerConnection: 1 });
  for (let i = 0; i < 3; i++) assert.equal((await request(port)).status, 200);
  assert.equal(dp.stat('cluster.backend.upstream_cx_total'), 3);
  assert.equal(dp.stat('cluster.backend.upstream_cx_max_requests'), 3);
});

test('hop-by-hop headers are removed both ways; proxy headers are set', TIMEOUT, async (t) => {
  const u = await upstream(t, 'hop', (req, res) => {
    res.setHeader('connection', 'x-upstream-private');
    res.setHeader('x-upstream-private', 'secret');
    res.setHeader('keep-alive', 'timeout=5');
    res.setHeader('server', 'upstream/1.0');
    res.setHeader('x-end-to-end', 'yes');
    res.end(JSON.stringify(req.headers));
  });
  const { port } = await simpleProxy(t, u.port, {}, {}, 2500);
  const reply = await request(port, {
    path: '/h',
    headers: {
      connection: 'keep-alive, x-private',
      'keep-alive': 'timeout=5',
      'x-private': 'hidden',
      'proxy-connection': 'keep-alive',
      te: 'trailers',
      upgrade: 'websocket',
      'x-forwarded-for': '10.1.2.3',
      'x-visible': 'shown',
    },
  });
  const seen = JSON.parse(reply.body) as Record<string, string>;
  for (const hop of ['x-private', 'keep-alive', 'proxy-connection', 'te', 'upgrade']) assert.equal(seen[hop], undefined, hop);
  // node:http adds its own connection header to what it sends; ours is not passed on.
  assert.notEqual(seen.connection, 'keep-alive, x-private');
  assert.equal(seen['x-visible'], 'shown');
  assert.equal(seen['x-forwarded-for'], '10.1.2.3');
  assert.equal(seen['x-forwarded-proto'], 'http');
  assert.match(seen['x-request-id'], /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
  assert.equal(seen['x-proxy-expected-rq-timeout-ms'], '2500');
  assert.equal(seen.host, `127.0.0.1:${port}`);

  assert.equal(reply.headers['x-upstream-private'], undefined);
  assert.equal(reply.headers['keep-alive'], undefined);
  assert.equal(reply.headers['x-end-to-end'], 'yes');
  assert.equal(reply.headers.server, 'proxy');
  assert.match(String(reply.headers['x-proxy-upstream-service-time']), /^\d+$/);
  assert.ok(reply.headers.date);
});

test('use_remote_address appends the peer (or for loopback the local address) to x-forwarded-for', TIMEOUT, async (t) => {
  const u = await upstream(t, 'xff');
  const { port } = await simpleProxy(t, u.port, { useRemoteAddress: true, serverName: 'edge' });
  const appended = await request(port, { headers: { 'x-forwarded-for': '10.1.2.3', 'x-forwarded-proto': 'https', 'x-request-id': 'given' } });
  const seen = JSON.parse(appended.body).headers;
  assert.equal(seen['x-forwarded-for'], '10.1.2.3, 127.0.0.1');
  // The proxy's own scheme replaces the client's claim when it trusts only the peer address.
  assert.equal(seen['x-forwarded-proto'], 'http');
  // An edge request from outside: its own x-request-id is replaced (preserve_external_request_id is off).
  assert.match(seen['x-request-id'], /^[0-9a-f-]{36}$/);
  assert.equal(appended.headers.server, 'edge');
  const fresh = JSON.parse((await request(port)).body).headers;
  assert.equal(fresh['x-forwarded-for'], '127.0.0.1');

  // With the server's local address known, a loopback peer is replaced by it (Envoy's rule).
  const routes = [virtualHost('all', ['*'], [clusterRoute({ prefix: '/' }, 'backend')])];
  const local = await dataPlane(t, [listener('http', httpConnectionManager(routes, { useRemoteAddress: true }))], [staticCluster('backend', [{ port: u.port }])], {
    localAddress: '10.9.8.7',
  });
  const viaLocal = JSON.parse((await request(local.port('http'), { headers: { 'x-forwarded-for': '10.1.2.3' } })).body).headers;
  assert.equal(viaLocal['x-forwarded-for'], '10.1.2.3, 10.9.8.7');
});

test('a cluster without hosts answers 503 no healthy upstream', TIMEOUT, async (t) => {
  const routes = [virtualHost('all', ['*'], [clusterRoute({ prefix: '/' }, 'empty')])];
  const dp = await dataPlane(t, [listener('http', httpConnectionManager(routes))], [staticCluster('empty', [])]);
  const reply = await request(dp.port('http'));
  assert.equal(reply.status, 503);
  assert.equal(reply.body, 'no healthy upstream');
  assert.equal(reply.headers['content-type'], 'text/plain');
  assert.equal(dp.stat('cluster.empty.upstream_cx_none_healthy'), 1);
  assert.equal(dp.stat('cluster.empty.upstream_rq_503'), 1);
  assert.equal(dp.stat('http.ingress_http.downstream_rq_5xx'), 1);
});

test('all hosts unhealthy: panic mode still sends traffic to them', TIMEOUT, async (t) => {
  const u = await upstream(t, 'sick');
  const routes = [virtualHost('all', ['*'], [clusterRoute({ prefix: '/' }, 'sick')])];
  const dp = await dataPlane(t, [listener('http', httpConnectionManager(routes))], [staticCluster('sick', [{ port: u.port, health: 'UNHEALTHY' }])]);
  assert.equal((await request(dp.port('http'))).status, 200);
  assert.equal(dp.stat('cluster.sick.lb_healthy_panic'), 1);
});

test('a refused connection answers 503 with the connect error', TIMEOUT, async (t) => {
  const port = await refusedPort();
  const { dp, port: proxyPort } = await simpleProxy(t, port);
  const reply = await request(proxyPort);
  assert.equal(reply.status, 503);
  assert.equal(reply.body, CONNECT_ERROR);
  assert.equal(dp.stat('cluster.backend.upstream_cx_connect_fail'), 1);
  assert.equal(dp.hostStat('backend', `127.0.0.1:${port}`, 'cx_connect_fail'), 1);
  assert.equal(dp.hostStat('backend', `127.0.0.1:${port}`, 'rq_error'), 1);
  assert.equal(dp.stat('cluster.backend.upstream_rq_pending_failure_eject'), 1);
  assert.equal(dp.stat('cluster.backend.upstream_rq_503'), 1);
  assert.equal(dp.stat('cluster.backend.upstream_cx_active'), 0);
});

test('a slow upstream answers 504 after the route timeout', TIMEOUT, async (t) => {
  const u = await upstream(t, 'slow', () => undefined);
  const { dp, port } = await simpleProxy(t, u.port, {}, {}, 200);
  const reply = await request(port);
  assert.equal(reply.status, 504);
  assert.equal(reply.body, 'upstream request timeout');
  assert.equal(dp.stat('cluster.backend.upstream_rq_timeout'), 1);
  assert.equal(dp.stat('cluster.backend.upstream_rq_504'), 1);
  assert.equal(dp.hostStat('backend', `127.0.0.1:${u.port}`, 'rq_timeout'), 1);
  assert.equal(dp.stat('cluster.backend.upstream_rq_tx_reset'), 1);
});

test('connect_timeout: an upstream whose accept queue is full times out', TIMEOUT, async (t) => {
  // A listener that never accepts (its process is stopped) with a backlog of 1: once two
  // connections fill the accept queue, the kernel drops further SYNs.
  const child = spawn(
    process.execPath,
    ['-e', "const s = require('net').createServer().listen({ port: 0, host: '127.0.0.1', backlog: 1 }, () => { console.log(s.address().port); process.kill(process.pid, 'SIGSTOP'); });"],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  );
  t.after(() => child.kill('SIGKILL'));
  const port = await new Promise<number>((resolve) => child.stdout!.once('data', (d: Buffer) => resolve(Number(d.toString().trim()))));
  const fillers: net.Socket[] = [];
  t.after(() => fillers.forEach((s) => s.destroy()));
  for (let i = 0; i < 3; i++) fillers.push(net.connect(port, '127.0.0.1').on('error', () => undefined));
  await new Promise((resolve) => setTimeout(resolve, 300));
  assert.ok(fillers.some((s) => s.connecting), 'the accept queue is full');

  const { dp, port: proxyPort } = await simpleProxy(t, port, {}, { connectTimeoutMs: 250 });
  const reply = await request(proxyPort);
  assert.equal(reply.status, 503);
  assert.equal(reply.body, CONNECT_ERROR);
  assert.equal(dp.stat('cluster.backend.upstream_cx_connect_timeout'), 1);
  assert.equal(dp.stat('cluster.backend.upstream_cx_connect_fail'), 1);
});

test('drainClose: the response says connection: close and the connection closes', TIMEOUT, async (t) => {
  const u = await upstream(t, 'drain');
  const routes = [virtualHost('all', ['*'], [clusterRoute({ prefix: '/' }, 'backend')])];
  const draining: DrainDecider = { drainClose: () => true };
  const dp = await dataPlane(t, [listener('http', httpConnectionManager(routes))], [staticCluster('backend', [{ port: u.port }])], { drain: draining });
  const socket = net.connect(dp.port('http'), '127.0.0.1');
  t.after(() => socket.destroy());
  socket.write('GET / HTTP/1.1\r\nHost: h\r\n\r\n');
  const text = await new Promise<string>((resolve) => {
    let data = '';
    socket.on('data', (c: Buffer) => (data += c.toString('latin1')));
    socket.on('end', () => resolve(data));
  });
  assert.match(text, /^HTTP\/1\.1 200 OK\r\n/);
  assert.match(text, /\r\nconnection: close\r\n/);
  assert.equal(dp.stat('http.ingress_http.downstream_cx_drain_close'), 1);
});

test('end of drain: idle connections close, a connection with a request in flight finishes it', TIMEOUT, async (t) => {
  let release: (() => void) | null = null;
  const u = await upstream(t, 'held', (req, res) => {
    if (req.url === '/slow') release = () => res.end('late');
    else res.end('ok');
  });
  const { dp, port } = await simpleProxy(t, u.port);
  const open = (): net.Socket => {
    const socket = net.connect(port, '127.0.0.1');
    t.after(() => socket.destroy());
    return socket;
  };
  const readAll = (socket: net.Socket) =>
    new Promise<string>((resolve) => {
      let data = '';
      socket.on('data', (c: Buffer) => (data += c.toString('latin1')));
      socket.on('close', () => resolve(data));
    });
  // One keep-alive connection that has finished its request (idle), one still waiting.
  const idle = open();
  const idleText = readAll(idle);
  idle.write('GET /fast HTTP/1.1\r\nHost: h\r\n\r\n');
  const busy = open();
  const busyText = readAll(busy);
  busy.write('GET /slow HTTP/1.1\r\nHost: h\r\n\r\n');
  await waitFor('one idle and one busy connection', () =>
    release !== null && dp.stat('http.ingress_http.downstream_rq_completed') === 1 ? true : undefined,
  );

  dp.listeners.closeIdleConnections();
  assert.match(await idleText, /^HTTP\/1\.1 200 OK\r\n[\s\S]*\r\n\r\nok$/);
  assert.equal(busy.destroyed, false);
  release!();
  busy.end();
  assert.match(await busyText, /\r\n\r\nlate$/);
  assert.equal(dp.stat('http.ingress_http.downstream_cx_drain_close'), 1);
});

test('weighted round robin spreads requests 1:2:3 across three upstreams', TIMEOUT, async (t) => {
  const ups = [await upstream(t, 'w1'), await upstream(t, 'w2'), await upstream(t, 'w3')];
  const routes = [virtualHost('all', ['*'], [clusterRoute({ prefix: '/' }, 'weighted')])];
  const cluster = staticCluster('weighted', ups.map((u, i) => ({ port: u.port, weight: i + 1 })));
  const dp = await dataPlane(t, [listener('http', httpConnectionManager(routes))], [cluster], { random: () => 0 });
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  t.after(() => agent.destroy());
  for (let i = 0; i < 60; i++) await request(dp.port('http'), { agent });
  assert.deepEqual(ups.map((u) => u.seen.length), [10, 20, 30]);
  assert.deepEqual(
    ups.map((u) => dp.hostStat('weighted', `127.0.0.1:${u.port}`, 'rq_total')),
    [10, 20, 30],
  );
});

test('pipelined requests on one connection are answered in order', TIMEOUT, async (t) => {
  const u = await upstream(t, 'pipe');
  const { port } = await simpleProxy(t, u.port);
  const socket = net.connect(port, '127.0.0.1');
  t.after(() => socket.destroy());
  socket.write('GET /1 HTTP/1.1\r\nHost: h\r\n\r\nGET /2 HTTP/1.1\r\nHost: h\r\n\r\nGET /3 HTTP/1.1\r\nHost: h\r\nConnection: close\r\n\r\n');
  const text = await new Promise<string>((resolve) => {
    let data = '';
    socket.on('data', (c: Buffer) => (data += c.toString('latin1')));
    socket.on('end', () => resolve(data));
  });
  const urls = [...text.matchAll(/"url":"([^"]+)"/g)].map((m) => m[1]);
  assert.deepEqual(urls, ['/1', '/2', '/3']);
});

test('malformed requests get 400, HTTP/1.0 gets 426, and the connection closes', TIMEOUT, async (t) => {
  const u = await upstream(t, 'bad');
  const { dp, port } = await simpleProxy(t, u.port);
  for (const [wire, status] of [
    ['GET / HTTP/1.1\r\nBad Header: x\r\n\r\n', 400],
    ['GET / HTTP/1.0\r\n\r\n', 426],
  ] as const) {
    const socket = net.connect(port, '127.0.0.1');
    t.after(() => socket.destroy());
    socket.write(wire);
    const text = await new Promise<string>((resolve) => {
      let data = '';
      socket.on('data', (c: Buffer) => (data += c.toString('latin1')));
      socket.on('end', () => resolve(data));
    });
    assert.match(text, new RegExp(`^HTTP/1\\.1 ${status} `));
    assert.match(text, /\r\nconnection: close\r\n/);
  }
  assert.equal(dp.stat('http.ingress_http.downstream_cx_protocol_error'), 2);
  assert.equal(u.seen.length, 0);
});

const LIMIT = 64 * 1024;
// Several times what the four socket buffers between writer and reader take on loopback once
// autotuned (up to 9 MiB seen; 16 MiB was too little), so that stalling before half of it is the
// proxy's doing, not the kernel's.
const PUSHED = 64 * 1024 * 1024;
/** Beyond the two buffer limits: a read the proxy was doing when it paused, and Node's read buffer. */
const SLACK = 128 * 1024;


async function limitedProxy(t: TestContext, upstreamPort: number): Promise<DataPlane> {
  const routes = [virtualHost('all', ['*'], [clusterRoute({ prefix: '/' }, 'backend')])];
  return dataPlane(
    t,
    [listener('http', httpConnectionManager(routes), { perConnectionBufferLimitBytes: LIMIT })],
    [staticCluster('backend', [{ port: upstreamPort }], { perConnectionBufferLimitBytes: LIMIT })],
  );
}

test('request watermarks: an upstream that does not read holds the client back within the buffer limits', TIMEOUT, async (t) => {
  let upstreamSocket: net.Socket | null = null;
  const upstreamPort = await tcpUpstream(t, (s) => {
    upstreamSocket = s;
    s.pause();
  });
  const dp = await limitedProxy(t, upstreamPort);
  const socket = net.connect(dp.port('http'), '127.0.0.1');
  t.after(() => socket.destroy());
  await new Promise((resolve) => socket.once('connect', resolve));
  const { data, sha256 } = payload(PUSHED);
  const head = `PUT / HTTP/1.1\r\nHost: h\r\ncontent-length: ${PUSHED}\r\n\r\n`;
  const pusher = push(socket, Buffer.concat([Buffer.from(head, 'latin1'), data]));
  await stalled(pusher, () => upstreamSocket !== null && dp.stat('cluster.backend.upstream_flow_control_backed_up_total') > 0);

  const sent = pusher.accepted();
  const heldByProxy = sent - kernelQueuedBytes([socket.localPort!, upstreamSocket!.remotePort!]);
  assert.ok(sent < PUSHED / 2, `the client wrote ${sent} of ${PUSHED} bytes to an upstream that reads nothing`);
  assert.ok(heldByProxy <= 2 * LIMIT + SLACK, `the proxy holds ${heldByProxy} of ${sent} bytes sent`);
  const buffered = dp.stat('cluster.backend.upstream_cx_tx_bytes_buffered');
  assert.ok(buffered > LIMIT / 2 && buffered <= LIMIT + SLACK, `upstream_cx_tx_bytes_buffered ${buffered} while backed up`);
  assert.ok(dp.stat('http.ingress_http.downstream_flow_control_paused_reading_total') > 0);
  assert.equal(dp.stat('cluster.backend.upstream_flow_control_drained_total'), 0);

  // The upstream reads the request (its head is what the proxy made of it), then answers.
  const upstream = upstreamSocket!;
  const body = bodyAfterHead(upstream, PUSHED);
  upstream.resume();
  const received = await body;
  upstream.write('HTTP/1.1 200 OK\r\ncontent-length: 0\r\n\r\n');
  assert.equal(createHash('sha256').update(received).digest('hex'), sha256);
  await until('the buffer to drain', () => dp.stat('cluster.backend.upstream_cx_tx_bytes_buffered') === 0);
  await until('the response', () => dp.stat('http.ingress_http.downstream_rq_2xx') === 1);
  const backedUp = dp.stat('cluster.backend.upstream_flow_control_backed_up_total');
  assert.equal(dp.stat('cluster.backend.upstream_flow_control_drained_total'), backedUp);
  const paused = dp.stat('http.ingress_http.downstream_flow_control_paused_reading_total');
  assert.equal(dp.stat('http.ingress_http.downstream_flow_control_resumed_reading_total'), paused);
});

test('response watermarks: a client that does not read holds the upstream back within the buffer limits', TIMEOUT, async (t) => {
  const { data, sha256 } = payload(PUSHED);
  let pusher: Pusher | null = null;
  let upstreamSocket: net.Socket | null = null;
  const upstreamPort = await tcpUpstream(t, (s) => {
    upstreamSocket = s;
    s.once('data', () => {
      pusher = push(s, Buffer.concat([Buffer.from(`HTTP/1.1 200 OK\r\ncontent-length: ${PUSHED}\r\n\r\n`, 'latin1'), data]));
    });
  });
  const dp = await limitedProxy(t, upstreamPort);
  const socket = net.connect(dp.port('http'), '127.0.0.1');
  t.after(() => socket.destroy());
  socket.pause();
  socket.write('GET / HTTP/1.1\r\nHost: h\r\n\r\n');
  await until('the response to start', () => pusher !== null);
  await stalled(pusher!, () => dp.stat('cluster.backend.upstream_flow_control_paused_reading_total') > 0);

  const sent = pusher!.accepted();
  const heldByProxy = sent - kernelQueuedBytes([socket.localPort!, upstreamSocket!.remotePort!]);
  assert.ok(sent < PUSHED / 2, `the upstream wrote ${sent} of ${PUSHED} bytes to a client that reads nothing`);
  assert.ok(heldByProxy <= 2 * LIMIT + SLACK, `the proxy holds ${heldByProxy} of ${sent} bytes sent`);
  const buffered = dp.stat('http.ingress_http.downstream_cx_tx_bytes_buffered');
  assert.ok(buffered > LIMIT / 2 && buffered <= LIMIT + SLACK, `downstream_cx_tx_bytes_buffered ${buffered} while backed up`);
  assert.equal(dp.stat('cluster.backend.upstream_flow_control_resumed_reading_total'), 0);

  const body = bodyAfterHead(socket, PUSHED);
  socket.resume();
  assert.equal(createHash('sha256').update(await body).digest('hex'), sha256);
  await until('the buffer to drain', () => dp.stat('http.ingress_http.downstream_cx_tx_bytes_buffered') === 0);
  const paused = dp.stat('cluster.backend.upstream_flow_control_paused_reading_total');
  assert.equal(dp.stat('cluster.backend.upstream_flow_control_resumed_reading_total'), paused);
  assert.equal(dp.stat('http.ingress_http.downstream_rq_2xx'), 1);
});

test('HEAD, 204 and 304 responses have no body and keep the connection usable', TIMEOUT, async (t) => {
  const u = await upstream(t, 'bodiless', (req, res) => {
    if (req.url === '/204') res.writeHead(204).end();
    else if (req.url === '/304') res.writeHead(304).end();
    else res.writeHead(200, { 'content-length': '5' }).end(req.method === 'HEAD' ? undefined : 'hello');
  });
  const { dp, port } = await simpleProxy(t, u.port);
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  t.after(() => agent.destroy());
  const head = await request(port, { agent, method: 'HEAD' });
  assert.equal(head.headers['content-length'], '5');
  assert.equal(head.body, '');
  assert.equal((await request(port, { agent, path: '/204' })).status, 204);
  assert.equal((await request(port, { agent, path: '/304' })).status, 304);
  assert.equal((await request(port, { agent })).body, 'hello');
  assert.equal(dp.stat('http.ingress_http.downstream_cx_total'), 1);
  assert.equal(dp.stat('cluster.backend.upstream_cx_total'), 1);
});

test('an upstream closing its idle keep-alive connection costs nothing but a new connection', TIMEOUT, async (t) => {
  const u = await upstream(t, 'short');
  u.server.keepAliveTimeout = 50;
  const { dp, port } = await simpleProxy(t, u.port);
  assert.equal((await request(port)).status, 200);
  await until('the upstream to close its idle connection', () => dp.stat('cluster.backend.upstream_cx_active') === 0);
  assert.equal((await request(port)).status, 200);
  assert.equal(dp.stat('cluster.backend.upstream_cx_total'), 2);
  assert.equal(dp.stat('cluster.backend.upstream_cx_destroy_remote'), 1);
});

test('an upstream reset before headers is a 503; after headers it resets the client', TIMEOUT, async (t) => {
  const u = await upstream(t, 'reset', (req, res) => {
    if (req.url === '/after') {
      res.writeHead(200, { 'content-length': '100' });
      res.write('partial', () => res.socket!.destroy());
    } else {
      res.socket!.destroy();
    }
  });
  const { dp, port } = await simpleProxy(t, u.port);
  const before = await request(port, { path: '/before' });
  assert.equal(before.status, 503);
  assert.equal(before.body, 'upstream connect error or disconnect/reset before headers. reset reason: connection termination');
  await assert.rejects(request(port, { path: '/after' }));
  assert.equal(dp.stat('cluster.backend.upstream_rq_rx_reset'), 2);
  assert.equal(dp.stat('http.ingress_http.rq_reset_after_downstream_response_started'), 1);
});

test('Expect: 100-continue is answered by the proxy', TIMEOUT, async (t) => {
  const u = await upstream(t, 'continue');
  const { port } = await simpleProxy(t, u.port);
  const reply = await new Promise<string>((resolve, reject) => {
    const req = http.request({ host: '127.0.0.1', port, method: 'POST', agent: false, headers: { expect: '100-continue', 'content-length': '4' } });
    req.on('continue', () => req.end('data'));
    req.on('response', (res) => {
      let text = '';
      res.on('data', (c: Buffer) => (text += c.toString()));
      res.on('end', () => resolve(text));
    });
    req.on('error', reject);
  });
  const seen = JSON.parse(reply);
  assert.equal(seen.bodyBytes, 4);
  assert.equal(seen.headers.expect, undefined);
});

test('downstream timeouts: request_timeout and stream_idle_timeout answer 408, idle connections close', TIMEOUT, async (t) => {
  const u = await upstream(t, 'timeouts');
  const routes = [virtualHost('all', ['*'], [clusterRoute({ prefix: '/' }, 'backend')])];
  const dp = await dataPlane(
    t,
    [
      listener('request', httpConnectionManager(routes, { statPrefix: 'request', requestTimeoutMs: 150 })),
      listener('stream', httpConnectionManager(routes, { statPrefix: 'stream', streamIdleTimeoutMs: 150 })),
      listener('idle', httpConnectionManager(routes, { statPrefix: 'idle', commonHttpProtocolOptions: commonHttpProtocolOptionsOf({ idle_timeout: '0.150s' }) })),
    ],
    [staticCluster('backend', [{ port: u.port }])],
  );
  for (const [name, body] of [
    ['request', 'request timeout'],
    ['stream', 'stream timeout'],
  ] as const) {
    const socket = net.connect(dp.port(name), '127.0.0.1');
    t.after(() => socket.destroy());
    // A body is announced and never sent.
    socket.write('POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 10\r\n\r\n');
    const text = await readUntilEnd(socket);
    assert.match(text, /^HTTP\/1\.1 408 Request Timeout\r\n/);
    assert.ok(text.endsWith(`\r\n\r\n${body}`), text);
  }
  assert.equal(dp.stat('http.request.downstream_rq_timeout'), 1);
  assert.equal(dp.stat('http.stream.downstream_rq_idle_timeout'), 1);

  const idle = net.connect(dp.port('idle'), '127.0.0.1');
  t.after(() => idle.destroy());
  await readUntilEnd(idle);
  assert.equal(dp.stat('http.idle.downstream_cx_idle_timeout'), 1);
});

function readUntilEnd(socket: net.Socket): Promise<string> {
  return new Promise((resolve) => {
    let data = '';
    socket.on('data', (c: Buffer) => (data += c.toString('latin1')));
    socket.on('end', () => resolve(data));
  });
}

async function until(what: string, probe: () => boolean): Promise<void> {
  for (let i = 0; i < 300; i++) {
    if (probe()) return;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  assert.fail(`timed out waiting for ${what}`);
}

