// A cluster's common_http_protocol_options and http_protocol_options on its upstream connections,
// through the in-process data plane against real upstreams on 127.0.0.1: idle_timeout and
// max_connection_duration close pooled connections (HTTP/1 and HTTP/2), max_headers_count and a
// malformed response reset the stream as Envoy 1.16 does (503, connection termination, also for
// a malformed chunked body that came with its head, before any byte reached the client),
// max_stream_duration ends a try with 408, and proper_case_words spells request header names.

import assert from 'node:assert/strict';
import * as http from 'node:http';
import * as http2 from 'node:http2';
import * as net from 'node:net';
import { test, type TestContext } from 'node:test';
import { clusterRoute, httpConnectionManager, listener, startDataPlane, staticCluster, virtualHost, type DataPlane } from '../helpers/data_plane';
import { listen, request, startUpstream, tcpUpstream, type Handler } from '../helpers/http_peers';
import { waitFor } from '../helpers/proxy_process';
import type { ClusterConfig } from '../../src/config/model';
import type { JsonObject } from '../../src/config/json';
import { commonHttpProtocolOptionsOf, http1ProtocolOptionsOf, http2ProtocolOptionsOf } from '../../src/config/model_builder';

const TIMEOUT = { timeout: 20_000 };
const RESET_PREFIX = 'upstream connect error or disconnect/reset before headers. reset reason: ';

/** A proxy sending everything to cluster `backend` at `port`, with the cluster `overrides`. */
async function proxy(t: TestContext, port: number, overrides: Partial<ClusterConfig>): Promise<{ dp: DataPlane; port: number }> {
  const routes = [virtualHost('all', ['*'], [clusterRoute({ prefix: '/' }, 'backend', { timeoutMs: 15_000 })])];
  const dp = await startDataPlane([listener('http', httpConnectionManager(routes))], [staticCluster('backend', [{ port }], overrides)]);
  t.after(() => dp.close());
  return { dp, port: dp.port('http') };
}

async function httpUpstream(t: TestContext, handler?: Handler): Promise<{ port: number; closed: () => number }> {
  const u = await startUpstream('backend', handler);
  let closed = 0;
  u.server.on('connection', (socket: net.Socket) => socket.on('close', () => closed++));
  t.after(() => u.close());
  return { port: u.port, closed: () => closed };
}

async function h2Upstream(t: TestContext, onStream: (stream: http2.ServerHttp2Stream, headers: http2.IncomingHttpHeaders) => void): Promise<number> {
  const server = http2.createServer();
  const sessions = new Set<http2.ServerHttp2Session>();
  server.on('session', (session) => {
    sessions.add(session);
    session.on('close', () => sessions.delete(session));
  });
  server.on('stream', onStream);
  await listen(server);
  t.after(async () => {
    for (const session of sessions) session.destroy();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });
  return (server.address() as net.AddressInfo).port;
}

const common = (fields: JsonObject): Partial<ClusterConfig> => ({ commonHttpProtocolOptions: commonHttpProtocolOptionsOf(fields) });

test('HTTP/1 idle_timeout: an idle upstream connection is closed and counted; the next request opens another', TIMEOUT, async (t) => {
  const upstream = await httpUpstream(t);
  const { dp, port } = await proxy(t, upstream.port, common({ idle_timeout: '0.15s' }));
  assert.equal((await request(port)).status, 200);
  await waitFor('the idle timeout', () => (dp.stat('cluster.backend.upstream_cx_idle_timeout') === 1 ? true : undefined));
  await waitFor('the upstream to see the close', () => (upstream.closed() === 1 && dp.stat('cluster.backend.upstream_cx_active') === 0 ? true : undefined));
  assert.equal(dp.stat('cluster.backend.upstream_cx_destroy_local'), 1);
  assert.equal((await request(port)).status, 200);
  assert.equal(dp.stat('cluster.backend.upstream_cx_total'), 2);
});

test('HTTP/1 idle_timeout 0 disables it: the connection stays for reuse', TIMEOUT, async (t) => {
  const upstream = await httpUpstream(t);
  const { dp, port } = await proxy(t, upstream.port, common({ idle_timeout: '0s' }));
  for (let i = 0; i < 3; i++) assert.equal((await request(port)).status, 200);
  assert.equal(dp.stat('cluster.backend.upstream_cx_total'), 1);
  assert.equal(dp.stat('cluster.backend.upstream_cx_idle_timeout'), 0);
  assert.equal(dp.stat('cluster.backend.upstream_cx_active'), 1);
});

test('HTTP/1 max_connection_duration: an idle connection closes at once, a busy one after its response', TIMEOUT, async (t) => {
  const upstream = await httpUpstream(t, (req, res) => {
    // Outlives the connection's duration: the response still completes.
    const delay = req.url === '/slow' ? 500 : 0;
    setTimeout(() => res.end('done'), delay);
  });
  const { dp, port } = await proxy(t, upstream.port, common({ max_connection_duration: '0.25s' }));
  assert.equal((await request(port)).status, 200);
  await waitFor('the idle connection to reach its duration', () =>
    dp.stat('cluster.backend.upstream_cx_max_duration_reached') === 1 && dp.stat('cluster.backend.upstream_cx_active') === 0 ? true : undefined,
  );

  const slow = await request(port, { path: '/slow' });
  assert.equal(slow.status, 200);
  assert.equal(slow.body, 'done');
  assert.equal(dp.stat('cluster.backend.upstream_cx_max_duration_reached'), 2);
  await waitFor('the drained connection to close', () => (dp.stat('cluster.backend.upstream_cx_active') === 0 ? true : undefined));
  // The next request gets a new connection.
  assert.equal((await request(port)).status, 200);
  assert.equal(dp.stat('cluster.backend.upstream_cx_total'), 3);
});

/** A raw upstream answering each request with `headers` header lines (plus content-length). */
async function manyHeadersUpstream(t: TestContext, headers: number): Promise<number> {
  const lines = Array.from({ length: headers - 1 }, (_, i) => `x-h${i}: v\r\n`).join('');
  return tcpUpstream(t, (socket) => {
    socket.on('data', () => socket.write(`HTTP/1.1 200 OK\r\n${lines}content-length: 2\r\n\r\nok`));
  });
}

test('HTTP/1 max_headers_count: a response with more headers is a protocol error, answered 503 as a connection termination', TIMEOUT, async (t) => {
  const upstreamPort = await manyHeadersUpstream(t, 10);
  const over = await proxy(t, upstreamPort, common({ max_headers_count: 9 }));
  const reply = await request(over.port);
  assert.equal(reply.status, 503);
  assert.equal(reply.body, `${RESET_PREFIX}connection termination`);
  assert.equal(over.dp.stat('cluster.backend.upstream_cx_protocol_error'), 1);
  assert.equal(over.dp.stat('cluster.backend.upstream_rq_rx_reset'), 1);
  assert.equal(over.dp.stat('cluster.backend.upstream_rq_503'), 1);
  await waitFor('the connection to close', () => (over.dp.stat('cluster.backend.upstream_cx_active') === 0 ? true : undefined));

  // Exactly the limit is fine.
  const at = await proxy(t, upstreamPort, common({ max_headers_count: 10 }));
  const ok = await request(at.port);
  assert.equal(ok.status, 200);
  assert.equal(ok.body, 'ok');
  assert.equal(at.dp.stat('cluster.backend.upstream_cx_protocol_error'), 0);
});

test('HTTP/1 default max_headers_count is 100', TIMEOUT, async (t) => {
  const over = await proxy(t, await manyHeadersUpstream(t, 101), {});
  assert.equal((await request(over.port)).status, 503);
  const at = await proxy(t, await manyHeadersUpstream(t, 100), {});
  assert.equal((await request(at.port)).status, 200);
});

test('a malformed HTTP/1 response: 503 naming a connection termination, counted as a protocol error', TIMEOUT, async (t) => {
  const upstreamPort = await tcpUpstream(t, (socket) => socket.on('data', () => socket.write('HTTP/1.1 2x0 OK\r\n\r\n')));
  const { dp, port } = await proxy(t, upstreamPort, {});
  const reply = await request(port);
  assert.equal(reply.status, 503);
  assert.equal(reply.body, `${RESET_PREFIX}connection termination`);
  assert.equal(dp.stat('cluster.backend.upstream_cx_protocol_error'), 1);
  assert.equal(dp.stat('cluster.backend.upstream_rq_rx_reset'), 1);
});

const CHUNKED_HEAD = 'HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n';

/** Bodies the chunked coding cannot read: a size that is no number, data without its CRLF, and a good chunk over 1 KiB before a bad one. */
const MALFORMED_CHUNKED_BODIES = ['zz\r\nhello\r\n0\r\n\r\n', '5\r\nhelloXX0\r\n\r\n', `800\r\n${'a'.repeat(0x800)}\r\nzz\r\n`];

/** One GET over a new HTTP/2 session with prior knowledge; its status. */
function h2Status(port: number): Promise<number> {
  return new Promise((resolve, reject) => {
    const session = http2.connect(`http://127.0.0.1:${port}`);
    session.on('error', reject);
    const stream = session.request({ ':path': '/' });
    stream.on('response', (headers) => {
      session.close();
      resolve(Number(headers[':status']));
    });
    stream.on('error', reject);
    stream.resume();
  });
}

test('a malformed chunked response, sent whole: 503 before any byte reached the client, counted as a protocol error', TIMEOUT, async (t) => {
  let next = 0;
  const upstreamPort = await tcpUpstream(t, (socket) => {
    socket.on('data', () => socket.write(CHUNKED_HEAD + MALFORMED_CHUNKED_BODIES[next++ % MALFORMED_CHUNKED_BODIES.length]));
  });
  const { dp, port } = await proxy(t, upstreamPort, {});
  for (const body of MALFORMED_CHUNKED_BODIES) {
    const reply = await request(port);
    assert.deepEqual([reply.status, reply.body], [503, `${RESET_PREFIX}connection termination`], JSON.stringify(body.slice(0, 20)));
  }
  // An HTTP/2 client gets the same answer.
  for (let i = 0; i < MALFORMED_CHUNKED_BODIES.length; i++) assert.equal(await h2Status(port), 503);
  const n = 2 * MALFORMED_CHUNKED_BODIES.length;
  assert.equal(dp.stat('cluster.backend.upstream_cx_protocol_error'), n);
  assert.equal(dp.stat('cluster.backend.upstream_rq_rx_reset'), n);
  assert.equal(dp.stat('cluster.backend.upstream_rq_503'), n);
  assert.equal(dp.stat('cluster.backend.upstream_rq_200'), 0);
  assert.equal(dp.stat('http.ingress_http.downstream_rq_5xx'), n);
  assert.equal(dp.stat('http.ingress_http.downstream_rq_2xx'), 0);
});

test('a malformed chunk after the response head went out: the client\'s response is cut short', TIMEOUT, async (t) => {
  const upstreamPort = await tcpUpstream(t, (socket) => {
    socket.on('data', () => {
      socket.write(`${CHUNKED_HEAD}5\r\nhello\r\n`);
      setTimeout(() => socket.write('zz\r\n'), 100);
    });
  });
  const { dp, port } = await proxy(t, upstreamPort, {});
  const received = await new Promise<string>((resolve) => {
    const socket = net.connect(port, '127.0.0.1', () => socket.write('GET / HTTP/1.1\r\nhost: h\r\n\r\n'));
    let text = '';
    socket.on('data', (c: Buffer) => (text += c.toString('latin1')));
    socket.on('error', () => undefined);
    socket.on('close', () => resolve(text));
  });
  assert.match(received, /^HTTP\/1\.1 200 OK\r\n/);
  assert.ok(received.endsWith('5\r\nhello\r\n'), 'no last chunk: the client sees the response was cut short');
  assert.equal(dp.stat('cluster.backend.upstream_cx_protocol_error'), 1);
  assert.equal(dp.stat('http.ingress_http.rq_reset_after_downstream_response_started'), 1);
});

test('max_stream_duration: a try with no response in time is reset and answered 408', TIMEOUT, async (t) => {
  const upstream = await httpUpstream(t, (req, res) => {
    if (req.url === '/hang') return;
    res.end('quick');
  });
  const { dp, port } = await proxy(t, upstream.port, common({ max_stream_duration: '0.2s' }));
  const quick = await request(port);
  assert.equal(quick.status, 200);
  assert.equal(dp.stat('cluster.backend.upstream_rq_max_duration_reached'), 0);

  const reply = await request(port, { path: '/hang' });
  assert.equal(reply.status, 408);
  assert.equal(reply.body, 'upstream max stream duration reached');
  assert.equal(dp.stat('cluster.backend.upstream_rq_max_duration_reached'), 1);
  assert.equal(dp.stat('cluster.backend.upstream_rq_tx_reset'), 1);
  // The HTTP/1 connection of the reset try is closed.
  await waitFor('the upstream to see the close', () => (upstream.closed() === 1 ? true : undefined));
});

test('max_stream_duration after the response started: the downstream stream is reset', TIMEOUT, async (t) => {
  const upstream = await httpUpstream(t, (_req, res) => {
    res.writeHead(200, { 'content-length': '10' });
    res.write('part');
  });
  const { dp, port } = await proxy(t, upstream.port, common({ max_stream_duration: '0.2s' }));
  const outcome = await new Promise<{ status: number; complete: boolean }>((resolve, reject) => {
    const req = http.get({ host: '127.0.0.1', port, path: '/', agent: false }, (res) => {
      res.resume();
      res.on('close', () => resolve({ status: res.statusCode!, complete: res.complete }));
    });
    req.on('error', reject);
  });
  assert.deepEqual(outcome, { status: 200, complete: false });
  assert.equal(dp.stat('cluster.backend.upstream_rq_max_duration_reached'), 1);
});

test('http_protocol_options.header_key_format proper_case_words: request header names go upstream Proper-Cased', TIMEOUT, async (t) => {
  const heads: string[] = [];
  const upstreamPort = await tcpUpstream(t, (socket) => {
    let text = '';
    socket.on('data', (chunk: Buffer) => {
      text += chunk.toString('latin1');
      const end = text.indexOf('\r\n\r\n');
      if (end < 0) return;
      heads.push(text.slice(0, end));
      text = '';
      socket.write('HTTP/1.1 200 OK\r\ncontent-length: 0\r\n\r\n');
    });
  });
  const proper = await proxy(t, upstreamPort, { httpProtocolOptions: http1ProtocolOptionsOf({ header_key_format: { proper_case_words: {} } }) });
  const reply = await request(proper.port, { method: 'POST', headers: { 'x-custom-header': 'v', host: 'example.com' }, body: 'abc' });
  assert.equal(reply.status, 200);
  const lines = heads[0]!.split('\r\n');
  assert.equal(lines[0], 'POST / HTTP/1.1');
  assert.ok(lines.includes('Host: example.com'), heads[0]);
  assert.ok(lines.includes('X-Custom-Header: v'), heads[0]);
  assert.ok(lines.includes('Content-Length: 3'), heads[0]);
  assert.ok(lines.some((l) => l.startsWith('X-Request-Id: ')), heads[0]);
  // Values are left as they are.
  assert.ok(lines.includes('X-Forwarded-Proto: http'), heads[0]);

  // The default: lower case, as Envoy writes them.
  const plain = await proxy(t, upstreamPort, {});
  assert.equal((await request(plain.port, { headers: { 'x-custom-header': 'v', host: 'example.com' } })).status, 200);
  const defaultLines = heads[1]!.split('\r\n');
  assert.ok(defaultLines.includes('host: example.com'), heads[1]);
  assert.ok(defaultLines.includes('x-custom-header: v'), heads[1]);
});

const h2 = (fields: JsonObject): Partial<ClusterConfig> => ({ ...common(fields), http2ProtocolOptions: http2ProtocolOptionsOf({}) });

test('HTTP/2 idle_timeout: a connection without streams is closed and counted', TIMEOUT, async (t) => {
  const upstreamPort = await h2Upstream(t, (stream) => stream.respond({ ':status': 200 }, { endStream: true }));
  const { dp, port } = await proxy(t, upstreamPort, h2({ idle_timeout: '0.15s' }));
  assert.equal((await request(port)).status, 200);
  await waitFor('the idle timeout', () =>
    dp.stat('cluster.backend.upstream_cx_idle_timeout') === 1 && dp.stat('cluster.backend.upstream_cx_active') === 0 ? true : undefined,
  );
  assert.equal((await request(port)).status, 200);
  assert.equal(dp.stat('cluster.backend.upstream_cx_total'), 2);
});

test('HTTP/2 max_connection_duration: the connection drains, its open stream completes, the next request opens another', TIMEOUT, async (t) => {
  const upstreamPort = await h2Upstream(t, (stream, headers) => {
    const delay = headers[':path'] === '/slow' ? 500 : 0;
    setTimeout(() => {
      if (!stream.destroyed) stream.respond({ ':status': 200 }, { endStream: true });
    }, delay);
  });
  const { dp, port } = await proxy(t, upstreamPort, h2({ max_connection_duration: '0.25s' }));
  assert.equal((await request(port, { path: '/slow' })).status, 200);
  assert.equal(dp.stat('cluster.backend.upstream_cx_max_duration_reached'), 1);
  await waitFor('the drained connection to close', () => (dp.stat('cluster.backend.upstream_cx_active') === 0 ? true : undefined));
  assert.equal((await request(port)).status, 200);
  assert.equal(dp.stat('cluster.backend.upstream_cx_total'), 2);
});

test('HTTP/2 max_headers_count: a response with more header fields is reset and answered 503', TIMEOUT, async (t) => {
  const upstreamPort = await h2Upstream(t, (stream) => {
    const headers: http2.OutgoingHttpHeaders = { ':status': 200 };
    // With :status and the date node adds: 12 fields.
    for (let i = 0; i < 10; i++) headers[`x-h${i}`] = 'v';
    stream.on('error', () => undefined);
    stream.respond(headers, { endStream: true });
  });
  const over = await proxy(t, upstreamPort, h2({ max_headers_count: 11 }));
  const reply = await request(over.port);
  assert.equal(reply.status, 503);
  assert.ok(reply.body.startsWith(RESET_PREFIX), reply.body);
  assert.equal(over.dp.stat('cluster.backend.upstream_rq_rx_reset'), 1);

  const at = await proxy(t, upstreamPort, h2({ max_headers_count: 12 }));
  assert.equal((await request(at.port)).status, 200);
});
