// HTTP/2 through the real proxy: downstream with prior knowledge (h2load, node:http2), upstream
// over h2c with multiplexing and the circuit breakers, protocol_selection proven by what the
// upstream sees, stream resets mapped to 503 and counted, and GOAWAY on drain.

import assert from 'node:assert/strict';
import { execFile, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import * as http from 'node:http';
import * as http2 from 'node:http2';
import * as net from 'node:net';
import { test, type TestContext } from 'node:test';
import { bodyAfterHead, payload, push, stalled } from '../helpers/backpressure';
import { httpListener } from '../helpers/config_fixtures';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { HotRestarterRun, uniqueBaseId, writeStartScript } from '../helpers/hot_restart_run';
import { closeServer, listen, startUpstream, tcpUpstream } from '../helpers/http_peers';
import { CLIENT_PREFACE, FLAG, type Frame, framesOf, getRequest, settings, TYPE } from '../helpers/http2_frames';
import { makeTempDir, request, type RunningProxy, startProxy, waitFor } from '../helpers/proxy_process';

const TIMEOUT = { timeout: 90_000 };
/** scripts/install-test-deps.sh installs h2load (Debian nghttp2-client); without it those tests are skipped. */
const WITH_H2LOAD = { ...TIMEOUT, skip: spawnSync('h2load', ['--version']).status === 0 ? false : 'h2load (Debian nghttp2-client) is not installed' };
const PREFACE = 'PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n';

interface H2loadResult {
  readonly total: number;
  readonly succeeded: number;
  readonly failed: number;
}

/** Runs h2load (Debian nghttp2-client) and reads its "requests:" line. */
function h2load(args: readonly string[]): Promise<H2loadResult> {
  return new Promise((resolve, reject) => {
    execFile('h2load', [...args], { timeout: 60_000 }, (error, stdout) => {
      const line = /requests: (\d+) total, \d+ started, \d+ done, (\d+) succeeded, (\d+) failed/.exec(stdout);
      if (line === null) {
        reject(new Error(`h2load: ${error?.message ?? ''}\n${stdout}`));
        return;
      }
      resolve({ total: Number(line[1]), succeeded: Number(line[2]), failed: Number(line[3]) });
    });
  });
}

/** What an upstream saw: each request's HTTP version, its sessions (HTTP/2), and the most streams at once. */
interface Recorder {
  versions: string[];
  sessions: number;
  active: number;
  maxActive: number;
  /** Responses held until release(), when holding. */
  held: (() => void)[];
  holding: boolean;
}

function recorder(): Recorder {
  return { versions: [], sessions: 0, active: 0, maxActive: 0, held: [], holding: false };
}

function release(r: Recorder): void {
  r.holding = false;
  for (const answer of r.held.splice(0)) answer();
}

/** Answers `req` (HTTP/1 or HTTP/2 compatibility API) with its version, unless it is held or reset. */
function answer(r: Recorder, req: http.IncomingMessage | http2.Http2ServerRequest, res: http.ServerResponse | http2.Http2ServerResponse): void {
  r.versions.push(req.httpVersion);
  r.active++;
  r.maxActive = Math.max(r.maxActive, r.active);
  res.on('close', () => r.active--);
  if (req.url === '/reset' && 'stream' in req) {
    req.stream.close(http2.constants.NGHTTP2_INTERNAL_ERROR);
    return;
  }
  const send = (): void => {
    res.setHeader('content-type', 'text/plain');
    res.end(`version ${req.httpVersion}`);
  };
  req.resume();
  if (r.holding) r.held.push(send);
  else send();
}

/**
 * An upstream on one port that speaks HTTP/1.1 and h2c with prior knowledge, telling them apart
 * by the connection preface as the proxy does, so protocol_selection shows in what it records.
 */
async function dualUpstream(t: TestContext): Promise<{ port: number; seen: Recorder }> {
  const seen = recorder();
  const h1 = http.createServer((req, res) => answer(seen, req, res));
  const h2 = http2.createServer((req, res) => answer(seen, req, res));
  h2.on('session', () => seen.sessions++);
  const sockets = new Set<net.Socket>();
  const server = net.createServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.once('data', (first) => {
      socket.pause();
      socket.unshift(first);
      if (first.toString('latin1').startsWith(PREFACE.slice(0, first.length))) {
        h2.emit('connection', socket);
        return;
      }
      h1.emit('connection', socket);
      socket.resume();
    });
  });
  await listen(server);
  t.after(async () => {
    release(seen);
    // The proxy may still hold connections: the server closes only once they are gone.
    for (const socket of sockets) socket.destroy();
    await closeServer(server);
  });
  return { port: (server.address() as net.AddressInfo).port, seen };
}

function cluster(name: string, port: number, fields: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    name,
    connect_timeout: '1s',
    load_assignment: { cluster_name: name, endpoints: [{ lb_endpoints: [{ endpoint: { address: { socket_address: { address: '127.0.0.1', port_value: port } } } }] }] },
    ...fields,
  };
}

async function proxyWith(t: TestContext, clusterConfig: Record<string, unknown>, listenerOptions: Record<string, unknown> = {}, args: string[] = []): Promise<{ proxy: RunningProxy; port: number }> {
  const proxy = await startProxy(
    { static_resources: { listeners: [httpListener('in', 0, [{ match: { prefix: '/' }, route: { cluster: 'backend' } }], listenerOptions)], clusters: [clusterConfig] } },
    args,
  );
  t.after(() => proxy.cleanup());
  return { proxy, port: await proxy.listenerPort('in') };
}

/** One request over a fresh HTTP/2 client session; the status, headers and body. */
function h2Request(port: number, path = '/'): Promise<{ status: number; headers: http2.IncomingHttpHeaders; body: string }> {
  return new Promise((resolve, reject) => {
    const session = http2.connect(`http://127.0.0.1:${port}`);
    session.on('error', reject);
    const stream = session.request({ ':path': path });
    let body = '';
    let headers: http2.IncomingHttpHeaders = {};
    stream.on('response', (h) => (headers = h));
    stream.setEncoding('utf8');
    stream.on('data', (c: string) => (body += c));
    stream.on('end', () => {
      session.close();
      resolve({ status: Number(headers[':status']), headers, body });
    });
    stream.on('error', reject);
  });
}

test('downstream HTTP/2 with prior knowledge: h2load through the proxy to an HTTP/1 upstream, every request succeeds', WITH_H2LOAD, async (t) => {
  const upstream = await startUpstream('u');
  t.after(() => upstream.close());
  const { proxy, port } = await proxyWith(t, cluster('backend', upstream.port));
  const result = await h2load(['-n', '2000', '-c', '4', '-m', '10', `http://127.0.0.1:${port}/`]);
  assert.deepEqual(result, { total: 2000, succeeded: 2000, failed: 0 });
  assert.equal(await proxy.stat('http.ingress_http.downstream_rq_http2_total'), 2000);
  assert.equal(await proxy.stat('http.ingress_http.downstream_cx_http2_total'), 4);
  // What went upstream was HTTP/1.1 with the proxy's headers.
  const seen = upstream.seen[upstream.seen.length - 1]!;
  assert.ok(seen.headers['x-request-id']);
  assert.equal(seen.headers['x-forwarded-proto'], 'http');
  // The same listener (codec_type AUTO) still speaks HTTP/1.
  const h1 = await request(`http://127.0.0.1:${port}/`);
  assert.equal(h1.status, 200);
  assert.equal(await proxy.stat('http.ingress_http.downstream_cx_http1_total'), 1);
});

test('an HTTP/2 :method outside the HTTP/1 table is forwarded as it came, as Envoy 1.16 does', TIMEOUT, async (t) => {
  // nghttp2 holds :method to the token grammar; Envoy 1.16 checks nothing more on HTTP/2.
  const requestLines: string[] = [];
  const upstreamPort = await tcpUpstream(t, (socket) => {
    socket.on('data', (c: Buffer) => {
      requestLines.push(c.toString('latin1').split('\r\n')[0]);
      socket.write('HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nok');
    });
  });
  const { port } = await proxyWith(t, cluster('backend', upstreamPort));
  const statuses: number[] = [];
  for (const method of ['FOOBAR', 'get']) {
    statuses.push(
      await new Promise<number>((resolve, reject) => {
        const session = http2.connect(`http://127.0.0.1:${port}`);
        session.on('error', reject);
        const stream = session.request({ ':method': method, ':path': '/m' });
        stream.on('response', (h) => {
          session.close();
          resolve(Number(h[':status']));
        });
        stream.on('error', reject);
        stream.resume();
      }),
    );
  }
  assert.deepEqual(statuses, [200, 200]);
  assert.deepEqual(requestLines, ['FOOBAR /m HTTP/1.1', 'get /m HTTP/1.1']);
});

test('codec_type HTTP1 refuses HTTP/2; codec_type HTTP2 serves it, with its stream limit', TIMEOUT, async (t) => {
  const upstream = await startUpstream('u');
  t.after(() => upstream.close());
  const { port } = await proxyWith(t, cluster('backend', upstream.port), { codec_type: 'HTTP1' });
  const reply = await new Promise<string>((resolve) => {
    const socket = net.connect(port, '127.0.0.1', () => socket.write(PREFACE));
    let text = '';
    socket.on('data', (c) => (text += c.toString('latin1')));
    socket.on('close', () => resolve(text));
    socket.on('error', () => undefined);
  });
  assert.match(reply, /^HTTP\/1\.1 400 /);

  const h2 = await proxyWith(t, cluster('backend', upstream.port), { codec_type: 'HTTP2', http2_protocol_options: { max_concurrent_streams: 3 } });
  const settings = await new Promise<http2.Settings>((resolve, reject) => {
    const session = http2.connect(`http://127.0.0.1:${h2.port}`);
    session.on('error', reject);
    session.once('remoteSettings', (s) => {
      session.close();
      resolve(s);
    });
  });
  assert.equal(settings.maxConcurrentStreams, 3);
  assert.equal((await h2Request(h2.port)).status, 200);
});

test('upstream HTTP/2: requests are multiplexed on few connections within max_concurrent_streams', WITH_H2LOAD, async (t) => {
  const { port: upstreamPort, seen } = await dualUpstream(t);
  const { proxy, port } = await proxyWith(t, cluster('backend', upstreamPort, { http2_protocol_options: { max_concurrent_streams: 5 } }));

  // 20 HTTP/1 clients at once, held upstream until all have arrived.
  seen.holding = true;
  const replies = Array.from({ length: 20 }, () => request(`http://127.0.0.1:${port}/`, { headers: { connection: 'close' } }));
  await waitFor('20 requests upstream', () => (seen.held.length === 20 ? true : undefined));
  release(seen);
  for (const reply of await Promise.all(replies)) {
    assert.equal(reply.status, 200);
    assert.equal(reply.body, 'version 2.0');
  }
  assert.ok(seen.versions.every((v) => v === '2.0'));
  assert.equal(seen.maxActive, 20);
  assert.equal(seen.sessions, 4, 'at most 5 streams per connection: 4 connections for 20 requests');
  assert.equal(await proxy.stat('cluster.backend.upstream_cx_http2_total'), 4);
  // HTTP/2 downstream to HTTP/2 upstream, many streams on few connections.
  const result = await h2load(['-n', '1000', '-c', '2', '-m', '10', `http://127.0.0.1:${port}/`]);
  assert.deepEqual(result, { total: 1000, succeeded: 1000, failed: 0 });
  assert.equal(await proxy.stat('cluster.backend.upstream_rq_total'), 1020);
  assert.ok(seen.sessions <= 8, `${seen.sessions} upstream sessions`);
});

test('protocol_selection: USE_DOWNSTREAM_PROTOCOL follows the client, USE_CONFIGURED_PROTOCOL does not', TIMEOUT, async (t) => {
  const { port: upstreamPort, seen } = await dualUpstream(t);
  const downstream = await proxyWith(t, cluster('backend', upstreamPort, { http2_protocol_options: {}, protocol_selection: 'USE_DOWNSTREAM_PROTOCOL' }));
  assert.equal((await h2Request(downstream.port)).body, 'version 2.0');
  assert.equal((await request(`http://127.0.0.1:${downstream.port}/`)).body, 'version 1.1');
  const configured = await proxyWith(t, cluster('backend', upstreamPort, { http2_protocol_options: {} }));
  assert.equal((await h2Request(configured.port)).body, 'version 2.0');
  assert.equal((await request(`http://127.0.0.1:${configured.port}/`)).body, 'version 2.0');
  const plain = await proxyWith(t, cluster('backend', upstreamPort));
  assert.equal((await h2Request(plain.port)).body, 'version 1.1');
  assert.deepEqual(seen.versions, ['2.0', '1.1', '2.0', '2.0', '1.1']);
});

test('the HTTP/2 pool keeps to max_requests: exactly 10 of 50 reach the upstream, the rest are 503 overloaded', TIMEOUT, async (t) => {
  const { port: upstreamPort, seen } = await dualUpstream(t);
  const { proxy, port } = await proxyWith(
    t,
    cluster('backend', upstreamPort, { http2_protocol_options: {}, circuit_breakers: { thresholds: [{ max_requests: 10, max_pending_requests: 100 }] } }),
  );
  seen.holding = true;
  const replies = Array.from({ length: 50 }, () => request(`http://127.0.0.1:${port}/`, { headers: { connection: 'close' } }));
  // The 40 refusals can be counted before the 10 admitted streams reach the upstream.
  await waitFor('40 overflows and 10 streams held', async () =>
    (await proxy.stat('cluster.backend.upstream_rq_pending_overflow')) === 40 && seen.held.length >= 10 ? true : undefined,
  );
  assert.equal(seen.held.length, 10);
  release(seen);
  const done = await Promise.all(replies);
  const overloaded = done.filter((r) => r.status === 503 && r.headers['x-proxy-overloaded'] === 'true');
  assert.equal(overloaded.length, 40);
  assert.equal(done.filter((r) => r.status === 200).length, 10);
  assert.equal(seen.maxActive, 10);
});

test('a stream the HTTP/2 upstream resets is a 503 and counted as upstream_rq_rx_reset', TIMEOUT, async (t) => {
  const { port: upstreamPort } = await dualUpstream(t);
  const { proxy, port } = await proxyWith(t, cluster('backend', upstreamPort, { http2_protocol_options: {} }));
  const reply = await request(`http://127.0.0.1:${port}/reset`);
  assert.equal(reply.status, 503);
  assert.equal(reply.body, 'upstream connect error or disconnect/reset before headers. reset reason: remote reset');
  assert.equal(await proxy.stat('cluster.backend.upstream_rq_rx_reset'), 1);
  assert.equal(await proxy.stat('cluster.backend.http2.rx_reset'), 1);
  // The connection is still good for the next stream.
  assert.equal((await request(`http://127.0.0.1:${port}/`)).status, 200);
  assert.equal(await proxy.stat('cluster.backend.upstream_cx_http2_total'), 1);
});

test('max_requests_per_connection drains an HTTP/2 connection after that many streams', TIMEOUT, async (t) => {
  const { port: upstreamPort, seen } = await dualUpstream(t);
  const { proxy, port } = await proxyWith(t, cluster('backend', upstreamPort, { http2_protocol_options: {}, max_requests_per_connection: 3 }));
  for (let i = 0; i < 9; i++) assert.equal((await request(`http://127.0.0.1:${port}/`)).status, 200);
  assert.equal(seen.sessions, 3);
  assert.equal(await proxy.stat('cluster.backend.upstream_cx_max_requests'), 3);
  await waitFor('the drained connections closed', async () => ((await proxy.stat('cluster.backend.upstream_cx_destroy')) === 3 ? true : undefined));
});

test('a client that resets its HTTP/2 stream is counted, and its upstream request is reset', TIMEOUT, async (t) => {
  const { port: upstreamPort, seen } = await dualUpstream(t);
  const { proxy, port } = await proxyWith(t, cluster('backend', upstreamPort, { http2_protocol_options: {} }));
  seen.holding = true;
  const session = http2.connect(`http://127.0.0.1:${port}`);
  t.after(() => session.destroy());
  session.on('error', () => undefined);
  const stream = session.request({ ':path': '/' });
  stream.on('error', () => undefined);
  await waitFor('the request upstream', () => (seen.held.length === 1 ? true : undefined));
  stream.close(http2.constants.NGHTTP2_CANCEL);
  await waitFor('the upstream stream reset', async () => ((await proxy.stat('cluster.backend.upstream_rq_tx_reset')) === 1 ? true : undefined));
  assert.equal(await proxy.stat('http.ingress_http.downstream_rq_rx_reset'), 1);
  assert.equal(await proxy.stat('http2.rx_reset'), 1);
  assert.equal(await proxy.stat('cluster.backend.http2.tx_reset'), 1);
  await waitFor('the upstream saw the reset', () => (seen.active === 0 ? true : undefined));
});

test('a client that drops its connection with a stream in flight: counted as a remote close with an active request', TIMEOUT, async (t) => {
  const { port: upstreamPort, seen } = await dualUpstream(t);
  const { proxy, port } = await proxyWith(t, cluster('backend', upstreamPort));
  seen.holding = true;
  const session = http2.connect(`http://127.0.0.1:${port}`);
  session.on('error', () => undefined);
  const stream = session.request({ ':path': '/' });
  stream.on('error', () => undefined);
  await waitFor('the request upstream', () => (seen.held.length === 1 ? true : undefined));
  session.destroy();
  await waitFor('the connection closed', async () => ((await proxy.stat('http.ingress_http.downstream_cx_destroy')) === 1 ? true : undefined));
  assert.equal(await proxy.stat('http.ingress_http.downstream_cx_destroy_remote'), 1);
  assert.equal(await proxy.stat('http.ingress_http.downstream_cx_destroy_active_rq'), 1);
  assert.equal(await proxy.stat('http.ingress_http.downstream_rq_rx_reset'), 1);
  assert.equal(await proxy.stat('http.ingress_http.downstream_cx_protocol_error'), 0);
});

test('a request answered before its end gets the whole response, then RST_STREAM NO_ERROR (RFC 9113 section 8.1)', TIMEOUT, async (t) => {
  const { port: upstreamPort } = await dualUpstream(t);
  for (const upstreamProtocol of [{}, { http2_protocol_options: {} }]) {
    const { proxy, port } = await proxyWith(t, cluster('backend', upstreamPort, upstreamProtocol));
    const session = http2.connect(`http://127.0.0.1:${port}`);
    t.after(() => session.destroy());
    // The upstream answers at once; the client never ends its body.
    const stream = session.request({ ':method': 'POST', ':path': '/' }, { endStream: false });
    stream.write('the start of a body that never ends');
    let body = '';
    stream.setEncoding('utf8');
    stream.on('data', (c: string) => (body += c));
    const ended = new Promise<void>((resolve) => stream.on('end', resolve));
    const rstCode = await new Promise<number | undefined>((resolve) => stream.on('close', () => resolve(stream.rstCode)));
    await ended;
    assert.match(body, /^version /);
    assert.equal(rstCode, http2.constants.NGHTTP2_NO_ERROR);
    assert.equal(await proxy.stat('http.ingress_http.downstream_rq_2xx'), 1);
    session.destroy();
  }
});

test('a response from an HTTP/1 upstream with a content-length ends with its last DATA frame, as Envoy\'s does', TIMEOUT, async (t) => {
  const { port: upstreamPort } = await dualUpstream(t);
  const { port } = await proxyWith(t, cluster('backend', upstreamPort));
  const socket = net.connect(port, '127.0.0.1');
  t.after(() => socket.destroy());
  const chunks: Buffer[] = [];
  const stream1 = (): Frame[] => framesOf(Buffer.concat(chunks)).filter((f) => f.streamId === 1);
  const ended = new Promise<void>((resolve) => {
    socket.on('data', (c: Buffer) => {
      chunks.push(c);
      if (stream1().some((f) => (f.flags & FLAG.END_STREAM) !== 0)) resolve();
    });
  });
  socket.write(Buffer.concat([CLIENT_PREFACE, settings(), getRequest(1)]));
  await ended;
  const data = stream1().filter((f) => f.type === TYPE.DATA);
  // No trailers can follow a body of known length: no empty DATA frame to end the stream.
  assert.deepEqual(
    data.map((f) => [f.payload.toString(), (f.flags & FLAG.END_STREAM) !== 0]),
    [['version 1.1', true]],
  );
});

test('an HTTP/2 upload to an upstream that does not read is held back by the stream\'s window, then arrives whole', TIMEOUT, async (t) => {
  const limit = 64 * 1024;
  const size = 16 * 1024 * 1024;
  let upstreamSocket: net.Socket | null = null;
  const upstreamPort = await tcpUpstream(t, (s) => {
    upstreamSocket = s;
    s.pause();
  });
  const windows = { http2_protocol_options: { initial_stream_window_size: 65536, initial_connection_window_size: 65536 } };
  const listener = httpListener('in', 0, [{ match: { prefix: '/' }, route: { cluster: 'backend' } }], windows);
  listener.per_connection_buffer_limit_bytes = limit;
  const proxy = await startProxy({ static_resources: { listeners: [listener], clusters: [cluster('backend', upstreamPort, { per_connection_buffer_limit_bytes: limit })] } });
  t.after(() => proxy.cleanup());
  const session = http2.connect(`http://127.0.0.1:${await proxy.listenerPort('in')}`);
  t.after(() => session.destroy());
  const stream = session.request({ ':method': 'PUT', ':path': '/', 'content-length': size });
  const status = new Promise<number>((resolve) => stream.on('response', (h) => resolve(Number(h[':status']))));
  stream.resume();
  const { data, sha256 } = payload(size);
  const pusher = push(stream, data, limit, true);
  await stalled(pusher, () => upstreamSocket !== null);
  assert.ok(pusher.accepted() < size / 2, `the client sent ${pusher.accepted()} of ${size} bytes to an upstream that reads nothing`);
  assert.ok(((await proxy.stat('http.ingress_http.downstream_flow_control_paused_reading_total')) ?? 0) > 0);

  // The upstream reads it all, then answers: the request's end reached it with its last byte.
  const upstream = upstreamSocket!;
  const body = bodyAfterHead(upstream, size);
  upstream.resume();
  const received = await body;
  assert.equal(received.length, size);
  assert.equal(createHash('sha256').update(received).digest('hex'), sha256);
  upstream.write('HTTP/1.1 200 OK\r\ncontent-length: 0\r\n\r\n');
  assert.equal(await status, 200);
  const paused = await proxy.stat('http.ingress_http.downstream_flow_control_paused_reading_total');
  assert.equal(await proxy.stat('http.ingress_http.downstream_flow_control_resumed_reading_total'), paused);
});

test('draining sends GOAWAY to HTTP/2 clients; the stream in flight completes', TIMEOUT, async (t) => {
  const upstream = await startUpstream('u');
  t.after(() => upstream.close());
  const { proxy, port } = await proxyWith(t, cluster('backend', upstream.port), {}, ['--drain-time-s', '5', '--drain-strategy', 'immediate']);
  const session = http2.connect(`http://127.0.0.1:${port}`);
  t.after(() => session.destroy());
  session.on('error', () => undefined);
  const goaway = new Promise<number>((resolve) => session.once('goaway', (code) => resolve(code)));
  const first = await new Promise<number>((resolve) => {
    const s = session.request({ ':path': '/' });
    s.on('response', (h) => resolve(Number(h[':status'])));
    s.resume();
  });
  assert.equal(first, 200);
  assert.equal((await proxy.admin('/drain_listeners?graceful', 'POST')).status, 200);
  // The next response is the one the drain decider closes the connection after: GOAWAY.
  const second = await new Promise<number>((resolve) => {
    const s = session.request({ ':path': '/' });
    s.on('response', (h) => resolve(Number(h[':status'])));
    s.resume();
  });
  assert.equal(second, 200);
  assert.equal(await goaway, http2.constants.NGHTTP2_NO_ERROR);
  assert.equal(await proxy.stat('http.ingress_http.downstream_cx_drain_close'), 1);
});

test('a hot restart drains the old epoch\'s HTTP/2 connections with GOAWAY', { timeout: 60_000 }, async (t) => {
  const upstream = await startUpstream('u');
  t.after(() => upstream.close());
  // The listener's port stays the same across epochs: take a free one.
  const probe = net.createServer();
  await listen(probe);
  const port = (probe.address() as net.AddressInfo).port;
  await closeServer(probe);
  const dir = makeTempDir();
  const config = {
    admin: { access_log_path: path.join(dir, 'admin.log'), address: { socket_address: { address: '127.0.0.1', port_value: 0 } } },
    static_resources: { listeners: [httpListener('in', port, [{ match: { prefix: '/' }, route: { cluster: 'backend' } }])], clusters: [cluster('backend', upstream.port)] },
  };
  const configPath = path.join(dir, 'bootstrap.json');
  fs.writeFileSync(configPath, JSON.stringify(config));
  const baseId = uniqueBaseId();
  const script = writeStartScript(dir, configPath, baseId, ['--concurrency', '1', '--drain-time-s', '1', '--parent-shutdown-time-s', '5']);
  const run = HotRestarterRun.start(dir, script, baseId);
  t.after(() => run.cleanup());
  await run.adminOf(0);
  const session = http2.connect(`http://127.0.0.1:${port}`);
  t.after(() => session.destroy());
  session.on('error', () => undefined);
  const goaway = new Promise<number>((resolve) => session.once('goaway', (code) => resolve(code)));
  const status = await new Promise<number>((resolve) => {
    const s = session.request({ ':path': '/' });
    s.on('response', (h) => resolve(Number(h[':status'])));
    s.resume();
  });
  assert.equal(status, 200);
  run.signal('SIGHUP');
  await run.adminOf(1);
  // The idle connection of epoch 0 is told to go at the end of its drain time.
  assert.equal(await goaway, http2.constants.NGHTTP2_NO_ERROR);
  // A new session reaches epoch 1.
  assert.equal((await h2Request(port)).status, 200);
});
