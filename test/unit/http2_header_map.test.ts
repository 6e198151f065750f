// The HTTP/2 side of the codec seam: node:http2 header lists to and from the header maps, and
// AUTO's preface sniffing over real sockets.

import assert from 'node:assert/strict';
import * as net from 'node:net';
import { test, type TestContext } from 'node:test';
import { BODY_CHUNKED } from '../../src/http/message';
import { MalformedHeaders, requestHeadOf, requestHeadersOf, responseHeadOf } from '../../src/http/http2/header_map';
import { SystemClock } from '../../src/common/clock';
import { sniffHttp2Preface } from '../../src/http/http2/preface';

test('a downstream HTTP/2 request becomes a header map: pseudo-headers as fields, cookies joined, framing from content-length and END_STREAM', () => {
  const raw = [':method', 'POST', ':path', '/a?b', ':scheme', 'https', ':authority', 'example.com', 'cookie', 'a=1', 'x-y', 'z', 'cookie', 'b=2', 'content-length', '3'];
  const head = requestHeadOf(raw, false, 'http');
  assert.deepEqual([head.method, head.path, head.authority, head.scheme, head.http10], ['POST', '/a?b', 'example.com', 'http', false]);
  assert.deepEqual(head.headers, ['x-y', 'z', 'cookie', 'a=1; b=2']);
  assert.deepEqual([head.contentLength, head.bodyLength], [3, 3]);
  // No content-length and more to come: an HTTP/1 upstream gets it chunked.
  assert.equal(requestHeadOf([':method', 'POST', ':path', '/'], false, 'http').bodyLength, BODY_CHUNKED);
  assert.equal(requestHeadOf([':method', 'GET', ':path', '/'], true, 'http').bodyLength, 0);
  // Host stands in for a missing :authority.
  assert.equal(requestHeadOf([':method', 'GET', ':path', '/', 'host', 'h:1'], true, 'http').authority, 'h:1');
});

test('a request without :method or :path, or with a bad content-length, is malformed', () => {
  assert.throws(() => requestHeadOf([':method', 'GET'], true, 'http'), MalformedHeaders);
  assert.throws(() => requestHeadOf([':path', '/'], true, 'http'), MalformedHeaders);
  assert.throws(() => requestHeadOf([':method', 'GET', ':path', '/', 'content-length', '1x'], true, 'http'), MalformedHeaders);
  assert.throws(() => requestHeadOf([':method', 'GET', ':path', '/', 'content-length', '1', 'content-length', '2'], true, 'http'), MalformedHeaders);
});

test('an upstream HTTP/2 response becomes a header map; one ended with its head has content-length 0 unless 204 or 304', () => {
  const head = responseHeadOf([':status', '200', 'set-cookie', 'a', 'set-cookie', 'b', 'content-length', '5'], false);
  assert.deepEqual([head.status, head.headers, head.contentLength, head.bodyLength], [200, ['set-cookie', 'a', 'set-cookie', 'b'], 5, 5]);
  assert.equal(responseHeadOf([':status', '200'], false).bodyLength, BODY_CHUNKED);
  assert.deepEqual([responseHeadOf([':status', '200'], true).contentLength, responseHeadOf([':status', '200'], true).bodyLength], [0, 0]);
  assert.equal(responseHeadOf([':status', '204'], true).contentLength, -1);
  assert.throws(() => responseHeadOf([':status', 'abc'], true), MalformedHeaders);
});

test('a header map sent upstream over HTTP/2: pseudo-headers, repeated names as lists, no connection-specific headers', () => {
  const head = requestHeadOf([':method', 'PUT', ':path', '/p', ':authority', 'a', 'x', '1', 'x', '2', 'content-length', '4'], false, 'http');
  head.headers.push('connection', 'close', 'transfer-encoding', 'chunked', 'te', 'gzip');
  assert.deepEqual(requestHeadersOf(head, 'https'), { ':method': 'PUT', ':path': '/p', ':authority': 'a', ':scheme': 'https', x: ['1', '2'], 'content-length': 4 });
  // te: trailers is the one te HTTP/2 allows (gRPC sends it).
  const grpc = requestHeadOf([':method', 'POST', ':path', '/s/m', ':authority', 'a'], false, 'http');
  grpc.headers.push('te', 'trailers');
  assert.deepEqual(requestHeadersOf(grpc, 'http'), { ':method': 'POST', ':path': '/s/m', ':authority': 'a', ':scheme': 'http', te: 'trailers' });
});

/** A connected pair of sockets on 127.0.0.1; the server side is sniffed. */
async function sniffed(t: TestContext, writes: readonly string[]): Promise<{ http2: boolean; idle: boolean; data: string }> {
  const server = net.createServer();
  t.after(() => server.close());
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const client = net.connect((server.address() as net.AddressInfo).port, '127.0.0.1');
  t.after(() => client.destroy());
  const [socket] = await Promise.all([new Promise<net.Socket>((resolve) => server.once('connection', resolve)), new Promise((resolve) => client.once('connect', resolve))]);
  t.after(() => socket.destroy());
  const decided = new Promise<{ http2: boolean; idle: boolean }>((resolve) => sniffHttp2Preface(socket, new SystemClock(), writes.length === 0 ? 50 : 0, (http2, idle) => resolve({ http2, idle })));
  for (const text of writes) {
    client.write(text);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  const verdict = await decided;
  // What the sniffer read is put back for the codec.
  const data = writes.length === 0 ? '' : await new Promise<string>((resolve) => socket.once('data', (c: Buffer) => resolve(c.toString('latin1'))).resume());
  return { ...verdict, data };
}

test('AUTO sniffing: the preface, even split, is HTTP/2; anything else HTTP/1; silence is handed over as idle', async (t) => {
  const preface = 'PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n';
  assert.deepEqual(await sniffed(t, ['PRI * HT', 'TP/2.0\r\n\r\nSM\r\n\r\nxyz']), { http2: true, idle: false, data: `${preface}xyz` });
  assert.deepEqual(await sniffed(t, ['PRO']), { http2: false, idle: false, data: 'PRO' });
  assert.deepEqual(await sniffed(t, ['GET / HTTP/1.1\r\n']), { http2: false, idle: false, data: 'GET / HTTP/1.1\r\n' });
  assert.deepEqual(await sniffed(t, []), { http2: false, idle: true, data: '' });
});
