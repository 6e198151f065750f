// The connection manager's protocol options on real sockets, over HTTP/1.1 and HTTP/2:
// max_stream_duration, max_connection_duration, max_headers_count,
// headers_with_underscores_action and header_key_format, with the statistics Envoy keeps.

import assert from 'node:assert/strict';
import type * as http from 'node:http';
import * as http2 from 'node:http2';
import * as net from 'node:net';
import { test, type TestContext } from 'node:test';
import type { HttpConnectionManagerConfig } from '../../src/config/model';
import type { JsonObject } from '../../src/config/json';
import { commonHttpProtocolOptionsOf, http1ProtocolOptionsOf } from '../../src/config/model_builder';
import { clusterRoute, type DataPlane, directRoute, httpConnectionManager, listener, startDataPlane, staticCluster, virtualHost } from '../helpers/data_plane';
import { request, startUpstream, type Upstream } from '../helpers/http_peers';

const TIMEOUT = { timeout: 20_000 };
const { NGHTTP2_INTERNAL_ERROR } = http2.constants;

/** An upstream whose `.../hold` responses wait for release(); `/partial` sends a head and part of a body, then waits. */
interface HoldingUpstream {
  readonly upstream: Upstream;
  /** How many requests are being held. */
  held(): number;
  release(): void;
}

async function holdingUpstream(t: TestContext): Promise<HoldingUpstream> {
  const waiting: http.ServerResponse[] = [];
  const upstream = await startUpstream('held', (req, res) => {
    if (req.url === '/partial') {
      res.writeHead(200, { 'content-length': '10' });
      res.write('abc');
      waiting.push(res);
      return;
    }
    if (req.url!.endsWith('/hold')) {
      waiting.push(res);
      return;
    }
    res.setHeader('content-type', 'application/json');
    res.end(JSON.stringify({ headers: req.headers }));
  });
  const release = (): void => {
    for (const res of waiting.splice(0)) {
      if (res.headersSent) res.destroy();
      else res.end('released');
    }
  };
  t.after(async () => {
    release();
    await upstream.close();
  });
  return { upstream, held: () => waiting.length, release };
}

/** A data plane with one listener whose connection manager sends everything to `port`. */
async function proxyTo(t: TestContext, port: number, hcm: Partial<HttpConnectionManagerConfig>): Promise<{ dp: DataPlane; port: number }> {
  const routes = [virtualHost('all', ['*'], [directRoute({ path: '/direct' }, 200, 'direct'), clusterRoute({ prefix: '/' }, 'backend')])];
  const dp = await startDataPlane([listener('http', httpConnectionManager(routes, { statPrefix: 'opts', ...hcm }))], [staticCluster('backend', [{ port }])]);
  t.after(() => dp.close());
  return { dp, port: dp.port('http') };
}

function common(options: JsonObject): Partial<HttpConnectionManagerConfig> {
  return { commonHttpProtocolOptions: commonHttpProtocolOptionsOf(options) };
}

/** Writes `wire` on a new connection and resolves with all it reads until the proxy ends it. */
function exchange(t: TestContext, port: number, wire: string): Promise<string> {
  const socket = net.connect(port, '127.0.0.1');
  t.after(() => socket.destroy());
  socket.write(wire);
  return readUntilEnd(socket);
}

function readUntilEnd(socket: net.Socket): Promise<string> {
  return new Promise((resolve) => {
    let data = '';
    socket.on('data', (c: Buffer) => (data += c.toString('latin1')));
    socket.on('end', () => resolve(data));
    socket.on('error', () => resolve(data));
  });
}

async function until(what: string, probe: () => boolean): Promise<void> {
  for (let i = 0; i < 500; i++) {
    if (probe()) return;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  assert.fail(`timed out waiting for ${what}`);
}

function h2connect(t: TestContext, port: number): http2.ClientHttp2Session {
  const session = http2.connect(`http://127.0.0.1:${port}`);
  session.on('error', () => undefined);
  t.after(() => session.destroy());
  return session;
}

interface H2Reply {
  readonly status: number | null;
  readonly headers: http2.IncomingHttpHeaders;
  readonly body: string;
  readonly rstCode: number | undefined;
}

/** One request on `session`; resolves when the stream closes, however it closes. */
function h2request(session: http2.ClientHttp2Session, headers: http2.OutgoingHttpHeaders): Promise<H2Reply> {
  return new Promise((resolve) => {
    const stream = session.request(headers);
    let status: number | null = null;
    let received: http2.IncomingHttpHeaders = {};
    let body = '';
    stream.on('response', (h) => {
      status = Number(h[':status']);
      received = h;
    });
    stream.on('data', (c: Buffer) => (body += c.toString()));
    stream.on('error', () => undefined);
    stream.on('close', () => resolve({ status, headers: received, body, rstCode: stream.rstCode }));
    stream.end();
  });
}

test('max_stream_duration: 408 before the response starts, a reset after; HTTP/1 and HTTP/2', TIMEOUT, async (t) => {
  const u = await holdingUpstream(t);
  const { dp, port } = await proxyTo(t, u.upstream.port, common({ max_stream_duration: '0.2s' }));

  // The request was whole: the connection could go on, so the client ends it.
  const h1 = await exchange(t, port, 'GET /hold HTTP/1.1\r\nHost: h\r\nConnection: close\r\n\r\n');
  assert.match(h1, /^HTTP\/1\.1 408 Request Timeout\r\n/);
  assert.ok(h1.endsWith('\r\n\r\ndownstream duration timeout'), h1);
  // The response began: the stream can only be cut, so the body stays short of its length.
  const partial = await exchange(t, port, 'GET /partial HTTP/1.1\r\nHost: h\r\n\r\n');
  assert.match(partial, /^HTTP\/1\.1 200 OK\r\n(?:[^\r]*\r\n)*content-length: 10\r\n(?:[^\r]*\r\n)*\r\nabc$/);
  assert.equal(dp.stat('http.opts.downstream_rq_max_duration_reached'), 2);

  const session = h2connect(t, port);
  const timedOut = await h2request(session, { ':path': '/hold' });
  assert.equal(timedOut.status, 408);
  assert.equal(timedOut.body, 'downstream duration timeout');
  const cut = await h2request(session, { ':path': '/partial' });
  assert.equal(cut.status, 200);
  assert.equal(cut.body, 'abc');
  assert.equal(cut.rstCode, NGHTTP2_INTERNAL_ERROR);
  assert.equal(dp.stat('http.opts.downstream_rq_max_duration_reached'), 4);
  // A stream quicker than the limit is not touched, and the connection goes on.
  assert.equal((await h2request(session, { ':path': '/direct' })).status, 200);
  assert.equal((await request(port, { path: '/direct' })).status, 200);
  assert.equal(dp.stat('http.opts.downstream_rq_max_duration_reached'), 4);
});

test('request_timeout and stream_idle_timeout on HTTP/2: 408 for a request whose body never ends', TIMEOUT, async (t) => {
  const u = await holdingUpstream(t);
  for (const [hcm, body, stat] of [
    [{ requestTimeoutMs: 150 }, 'request timeout', 'downstream_rq_timeout'],
    [{ streamIdleTimeoutMs: 150 }, 'stream timeout', 'downstream_rq_idle_timeout'],
  ] as const) {
    const { dp, port } = await proxyTo(t, u.upstream.port, hcm);
    const session = h2connect(t, port);
    const reply = await new Promise<H2Reply>((resolve) => {
      const stream = session.request({ ':path': '/', ':method': 'POST' });
      let status: number | null = null;
      let text = '';
      stream.on('response', (h) => (status = Number(h[':status'])));
      stream.on('data', (c: Buffer) => (text += c.toString()));
      stream.on('error', () => undefined);
      // The response ends while the request is still open: the client ends its stream itself.
      stream.on('end', () => {
        resolve({ status, headers: {}, body: text, rstCode: stream.rstCode });
        stream.close();
      });
      // Part of a body, and never its end.
      stream.write('x');
    });
    assert.equal(reply.status, 408);
    assert.equal(reply.body, body);
    assert.equal(dp.stat(`http.opts.${stat}`), 1);
  }
});

test("a route's idle_timeout replaces stream_idle_timeout for its streams, and 0 disables it", TIMEOUT, async (t) => {
  const u = await holdingUpstream(t);
  const routes = [
    virtualHost('all', ['*'], [
      clusterRoute({ prefix: '/short' }, 'backend', { idleTimeoutMs: 150 }),
      clusterRoute({ prefix: '/never' }, 'backend', { idleTimeoutMs: 0 }),
      clusterRoute({ prefix: '/' }, 'backend'),
    ]),
  ];
  // The connection manager's own idle timeout is long: only the route's can fire here.
  const dp = await startDataPlane([listener('http', httpConnectionManager(routes, { statPrefix: 'opts', streamIdleTimeoutMs: 60_000 }))], [staticCluster('backend', [{ port: u.upstream.port }])]);
  t.after(() => dp.close());
  const timedOut = await request(dp.port('http'), { path: '/short/hold' });
  assert.equal(timedOut.status, 408);
  assert.equal(timedOut.body, 'stream timeout');
  assert.equal(dp.stat('http.opts.downstream_rq_idle_timeout'), 1);

  // With the connection manager's at 150 ms, a route's 0 keeps a slow response alive.
  const quick = await startDataPlane([listener('http', httpConnectionManager(routes, { statPrefix: 'quick', streamIdleTimeoutMs: 150 }))], [staticCluster('backend', [{ port: u.upstream.port }])]);
  t.after(() => quick.close());
  const held = request(quick.port('http'), { path: '/never/hold' });
  await new Promise((resolve) => setTimeout(resolve, 500));
  u.release();
  assert.equal((await held).status, 200);
  assert.equal(quick.stat('http.quick.downstream_rq_idle_timeout'), 0);
});

test('max_connection_duration: HTTP/1 closes an idle connection, a busy one after its response', TIMEOUT, async (t) => {
  const u = await holdingUpstream(t);
  const { dp, port } = await proxyTo(t, u.upstream.port, common({ max_connection_duration: '0.2s' }));

  const idle = net.connect(port, '127.0.0.1');
  t.after(() => idle.destroy());
  assert.equal(await readUntilEnd(idle), '');
  assert.equal(dp.stat('http.opts.downstream_cx_max_duration_reached'), 1);

  const busy = net.connect(port, '127.0.0.1');
  t.after(() => busy.destroy());
  const reply = readUntilEnd(busy);
  busy.write('GET /hold HTTP/1.1\r\nHost: h\r\n\r\n');
  await until('the connection to reach its duration', () => dp.stat('http.opts.downstream_cx_max_duration_reached') === 2);
  assert.equal(u.held(), 1);
  u.release();
  const text = await reply;
  assert.match(text, /^HTTP\/1\.1 200 OK\r\n/);
  assert.match(text, /\r\nconnection: close\r\n/);
  assert.ok(text.endsWith('\r\n\r\nreleased'), text);
  assert.equal(dp.stat('http.opts.downstream_cx_drain_close'), 0);
});

test('max_connection_duration: HTTP/2 sends GOAWAY and closes once its streams end', TIMEOUT, async (t) => {
  const u = await holdingUpstream(t);
  const { dp, port } = await proxyTo(t, u.upstream.port, common({ max_connection_duration: '0.2s' }));
  const session = h2connect(t, port);
  const goaway = new Promise<void>((resolve) => session.once('goaway', () => resolve()));
  const closed = new Promise<void>((resolve) => session.once('close', () => resolve()));
  const held = h2request(session, { ':path': '/hold' });
  await goaway;
  assert.equal(dp.stat('http.opts.downstream_cx_max_duration_reached'), 1);
  await until('the upstream to hold the request', () => u.held() === 1);
  u.release();
  const reply = await held;
  assert.equal(reply.status, 200);
  assert.equal(reply.body, 'released');
  await closed;
  assert.equal(dp.stat('http.opts.downstream_cx_drain_close'), 0);
  await until('the connection to be closed', () => dp.stat('http.opts.downstream_cx_active') === 0);
});

test('max_headers_count: HTTP/1 answers 431 and closes; HTTP/2 resets the stream, pseudo-headers counted', TIMEOUT, async (t) => {
  const u = await holdingUpstream(t);
  const { dp, port } = await proxyTo(t, u.upstream.port, common({ max_headers_count: 10 }));

  // Host and nine more: ten lines, the limit.
  const fits = await exchange(t, port, `GET / HTTP/1.1\r\nHost: h\r\n${'x-a: 1\r\n'.repeat(8)}Connection: close\r\n\r\n`);
  assert.match(fits, /^HTTP\/1\.1 200 OK\r\n/);
  const over = await exchange(t, port, `GET / HTTP/1.1\r\nHost: h\r\n${'x-a: 1\r\n'.repeat(10)}\r\n`);
  assert.match(over, /^HTTP\/1\.1 431 Request Header Fields Too Large\r\n/);
  assert.match(over, /\r\nconnection: close\r\n/);
  assert.equal(dp.stat('http.opts.downstream_cx_protocol_error'), 1);

  const session = h2connect(t, port);
  // :method, :path, :scheme and :authority, and six more: ten.
  const six: http2.OutgoingHttpHeaders = Object.fromEntries(Array.from({ length: 6 }, (_, i) => [`x-h${i}`, 'v']));
  assert.equal((await h2request(session, { ':path': '/', ...six })).status, 200);
  const reset = await h2request(session, { ':path': '/', ...six, 'x-one-more': 'v' });
  assert.equal(reset.status, null);
  assert.equal(reset.rstCode, NGHTTP2_INTERNAL_ERROR);
  assert.equal(dp.stat('http2.header_overflow'), 1);
  assert.equal(dp.stat('http2.tx_reset'), 1);
  // The connection serves on.
  assert.equal((await h2request(session, { ':path': '/direct' })).status, 200);
  assert.equal(u.upstream.seen.length, 2);
});

test('headers_with_underscores_action REJECT_REQUEST: HTTP/1 answers 400, HTTP/2 resets the stream', TIMEOUT, async (t) => {
  const u = await holdingUpstream(t);
  const { dp, port } = await proxyTo(t, u.upstream.port, common({ headers_with_underscores_action: 'REJECT_REQUEST' }));

  const rejected = await exchange(t, port, 'GET / HTTP/1.1\r\nHost: h\r\nX_Under: 1\r\n\r\n');
  assert.match(rejected, /^HTTP\/1\.1 400 Bad Request\r\n/);
  assert.match(rejected, /\r\nconnection: close\r\n/);
  assert.equal(dp.stat('http1.requests_rejected_with_underscores_in_headers'), 1);
  assert.equal(dp.stat('http.opts.downstream_cx_protocol_error'), 1);
  assert.equal((await request(port, { headers: { 'x-dash': '1' } })).status, 200);

  const session = h2connect(t, port);
  const reset = await h2request(session, { ':path': '/', x_under: '1' });
  assert.equal(reset.status, null);
  assert.equal(reset.rstCode, NGHTTP2_INTERNAL_ERROR);
  assert.equal(dp.stat('http2.requests_rejected_with_underscores_in_headers'), 1);
  assert.equal((await h2request(session, { ':path': '/', 'x-dash': '1' })).status, 200);
  assert.equal(u.upstream.seen.length, 2);
});

test('headers_with_underscores_action DROP_HEADER: the header never reaches the upstream, HTTP/1 and HTTP/2', TIMEOUT, async (t) => {
  const u = await holdingUpstream(t);
  const { dp, port } = await proxyTo(t, u.upstream.port, common({ headers_with_underscores_action: 'DROP_HEADER' }));

  const h1 = await request(port, { headers: { x_under: '1', 'x-dash': '2' } });
  assert.equal(h1.status, 200);
  assert.equal(dp.stat('http1.dropped_headers_with_underscores'), 1);

  const session = h2connect(t, port);
  const h2 = await h2request(session, { ':path': '/', x_under: '1', 'x-dash': '2' });
  assert.equal(h2.status, 200);
  assert.equal(dp.stat('http2.dropped_headers_with_underscores'), 1);

  for (const seen of u.upstream.seen) {
    assert.equal(seen.headers['x_under'], undefined);
    assert.equal(seen.headers['x-dash'], '2');
  }
  assert.equal(u.upstream.seen.length, 2);
});

test('headers_with_underscores_action ALLOW (the default) forwards the header', TIMEOUT, async (t) => {
  const u = await holdingUpstream(t);
  const { port } = await proxyTo(t, u.upstream.port, {});
  assert.equal((await request(port, { headers: { x_under: '1' } })).status, 200);
  assert.equal(u.upstream.seen[0].headers['x_under'], '1');
});

test('header_key_format proper_case_words: HTTP/1 response header names are written Proper-Case', TIMEOUT, async (t) => {
  const u = await holdingUpstream(t);
  const { port } = await proxyTo(t, u.upstream.port, { httpProtocolOptions: http1ProtocolOptionsOf({ header_key_format: { proper_case_words: {} } }) });

  const proxied = await exchange(t, port, 'GET / HTTP/1.1\r\nHost: h\r\nConnection: close\r\n\r\n');
  const head = proxied.slice(0, proxied.indexOf('\r\n\r\n'));
  const names = head.split('\r\n').slice(1).map((line) => line.slice(0, line.indexOf(':')));
  assert.deepEqual(names.sort(), ['Connection', 'Content-Length', 'Content-Type', 'Date', 'Server', 'X-Proxy-Upstream-Service-Time']);
  assert.match(head, /\r\nContent-Type: application\/json\r\n/);

  const local = await exchange(t, port, 'GET /direct HTTP/1.1\r\nHost: h\r\nConnection: close\r\n\r\n');
  assert.match(local, /^HTTP\/1\.1 200 OK\r\nContent-Type: text\/plain\r\nDate: [^\r]+\r\nServer: proxy\r\nContent-Length: 6\r\nConnection: close\r\n\r\ndirect$/);
});
