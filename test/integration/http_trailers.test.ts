// Trailers through the proxy binary, both ways: HTTP/2 carries them always; chunked HTTP/1.1
// carries them where http_protocol_options.enable_trailers asks (the connection manager for the
// downstream side, the cluster for the upstream side) and drops them otherwise, as Envoy 1.16.

import assert from 'node:assert/strict';
import * as http from 'node:http';
import * as http2 from 'node:http2';
import * as net from 'node:net';
import { type TestContext, test } from 'node:test';
import { httpListener, localCluster } from '../helpers/config_fixtures';
import { closeServer, listen } from '../helpers/http_peers';
import { startProxy } from '../helpers/proxy_process';

const TIMEOUT = { timeout: 30_000 };
const ENABLED = { http_protocol_options: { enable_trailers: true } };

/** An HTTP/1.1 upstream that answers chunked, with a trailer naming the request trailer it saw. */
async function trailerEcho(t: TestContext, http2Upstream = false): Promise<number> {
  if (http2Upstream) {
    const server = http2.createServer();
    const sessions = new Set<http2.ServerHttp2Session>();
    server.on('session', (session) => {
      sessions.add(session);
      session.on('close', () => sessions.delete(session));
    });
    server.on('stream', (stream) => {
      let seen = '-';
      stream.on('trailers', (trailers) => (seen = String(trailers['x-request-trailer'] ?? '-')));
      stream.resume();
      stream.on('end', () => {
        stream.respond({ ':status': 200 }, { waitForTrailers: true });
        stream.on('wantTrailers', () => stream.sendTrailers({ 'x-response-trailer': `saw ${seen}` }));
        stream.end('body');
      });
    });
    const port = await listen(server as unknown as net.Server);
    // The proxy keeps its upstream connection open: close would wait for it.
    t.after(() => {
      for (const session of sessions) session.destroy();
      return closeServer(server as unknown as net.Server);
    });
    return port;
  }
  const server = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      res.writeHead(200, { 'transfer-encoding': 'chunked', trailer: 'x-response-trailer' });
      res.write('body');
      res.addTrailers({ 'x-response-trailer': `saw ${req.trailers['x-request-trailer'] ?? '-'}` });
      res.end();
    });
  });
  const port = await listen(server);
  t.after(() => closeServer(server));
  return port;
}

async function proxyTo(t: TestContext, upstreamPort: number, listenerOptions: Record<string, unknown>, clusterOptions: Record<string, unknown>): Promise<number> {
  const proxy = await startProxy({
    static_resources: {
      listeners: [httpListener('in', 0, [{ match: { prefix: '/' }, route: { cluster: 'backend' } }], listenerOptions)],
      clusters: [{ ...localCluster('backend', upstreamPort), ...clusterOptions }],
    },
  });
  t.after(() => proxy.cleanup());
  return proxy.listenerPort('in');
}

/** A chunked HTTP/1.1 POST with a request trailer, over a raw socket; the whole response as text. */
function http1WithTrailer(port: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1', () =>
      socket.write('POST / HTTP/1.1\r\nhost: t\r\ntransfer-encoding: chunked\r\nconnection: close\r\n\r\n3\r\nabc\r\n0\r\nx-request-trailer: r1\r\n\r\n'),
    );
    let text = '';
    socket.setEncoding('latin1');
    socket.on('data', (chunk: string) => (text += chunk));
    socket.on('end', () => resolve(text));
    socket.on('error', reject);
    setTimeout(() => socket.destroy(new Error(`no end in 5 s: ${JSON.stringify(text)}`)), 5000).unref();
  });
}

/** An HTTP/2 POST with a request trailer; the response trailers. */
function http2WithTrailer(port: number): Promise<http2.IncomingHttpHeaders> {
  return new Promise((resolve, reject) => {
    const session = http2.connect(`http://127.0.0.1:${port}`);
    session.on('error', reject);
    const stream = session.request({ ':method': 'POST', ':path': '/' }, { waitForTrailers: true });
    stream.on('wantTrailers', () => stream.sendTrailers({ 'x-request-trailer': 'r2' }));
    let trailers: http2.IncomingHttpHeaders = {};
    stream.on('trailers', (t) => (trailers = t));
    stream.resume();
    stream.on('end', () => {
      session.close();
      resolve(trailers);
    });
    stream.on('error', reject);
    stream.end('abc');
  });
}

test('HTTP/1.1 with enable_trailers on both sides: the request and response trailers pass', TIMEOUT, async (t) => {
  const port = await proxyTo(t, await trailerEcho(t), ENABLED, ENABLED);
  const response = await http1WithTrailer(port);
  assert.match(response, /^HTTP\/1\.1 200 OK\r\n/);
  assert.match(response, /\r\n\r\n4\r\nbody\r\n0\r\nx-response-trailer: saw r1\r\n\r\n$/);
});

test('HTTP/1.1 without enable_trailers: trailers are dropped both ways, the bodies pass', TIMEOUT, async (t) => {
  const port = await proxyTo(t, await trailerEcho(t), {}, {});
  const response = await http1WithTrailer(port);
  assert.match(response, /\r\n\r\n4\r\nbody\r\n0\r\n\r\n$/);
});

test('HTTP/2 on both sides: the request and response trailers pass', TIMEOUT, async (t) => {
  const port = await proxyTo(t, await trailerEcho(t, true), {}, { http2_protocol_options: {} });
  const trailers = await http2WithTrailer(port);
  assert.equal(trailers['x-response-trailer'], 'saw r2');
});

test('HTTP/2 downstream, HTTP/1.1 upstream with enable_trailers: trailers cross the protocols', TIMEOUT, async (t) => {
  const port = await proxyTo(t, await trailerEcho(t), {}, ENABLED);
  const trailers = await http2WithTrailer(port);
  assert.equal(trailers['x-response-trailer'], 'saw r2');
});
