// What a peer sends can close its own connection, never restart a worker: malformed and random
// HTTP/1, broken HTTP/2 (plaintext and over TLS) and garbage TLS handshakes through the real
// binary. Each connection is closed by the proxy and counted; server.worker_restarts stays 0.

import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as tls from 'node:tls';
import { after, before, describe, test } from 'node:test';
import { type CertificateFiles, makeCa, makeLeaf } from '../helpers/certificates';
import { httpListener, localCluster, withDownstreamTls } from '../helpers/config_fixtures';
import { startUpstream, type Upstream } from '../helpers/http_peers';
import { FLAG, frame, TYPE } from '../helpers/http2_frames';
import { makeTempDir, type RunningProxy, sleep, startProxy, waitFor } from '../helpers/proxy_process';
import { seededRandom } from '../helpers/seeded_random';

const TLS_INSPECTOR = 'type.googleapis.com/envoy.extensions.filters.listener.tls_inspector.v3.TlsInspector';
const PREFACE = Buffer.from('PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n', 'latin1');
/** An empty SETTINGS frame, then a HEADERS frame on stream 0: a connection error (RFC 9113 section 6.2). */
const HEADERS_ON_STREAM_0 = Buffer.from([0, 0, 0, 4, 0, 0, 0, 0, 0, 0, 0, 1, 1, 5, 0, 0, 0, 0, 0x82]);
const NOT_A_FRAME = Buffer.from('this is not an HTTP/2 frame, not at all', 'latin1');
const CLOSE_WITHIN_MS = 5000;

function randomBytes(seed: number, length: number): Buffer {
  const random = seededRandom(seed);
  return Buffer.from(Array.from({ length }, () => Math.floor(random() * 256)));
}

/**
 * Connects (`open`), sends `wire` once connected (and half-closes when `end`), and resolves with
 * what came back once the proxy closes.
 */
function untilClosed(open: (onReady: () => void) => net.Socket, wire: Buffer, end = false): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    const socket = open(() => (end ? socket.end(wire) : socket.write(wire)));
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error(`still open after ${CLOSE_WITHIN_MS} ms: ${JSON.stringify(wire.toString('latin1').slice(0, 60))}`));
    }, CLOSE_WITHIN_MS);
    socket.on('data', (c: Buffer) => chunks.push(c));
    socket.on('error', () => undefined);
    socket.on('close', () => {
      clearTimeout(timer);
      resolve(Buffer.concat(chunks));
    });
  });
}

describe('hostile peers through the proxy binary', { timeout: 60_000 }, () => {
  let dir: string;
  let ca: CertificateFiles;
  let upstream: Upstream;
  let proxy: RunningProxy;
  let plainPort: number;
  let tlsPort: number;

  /** The worker counts as its socket closes: the client can see the close a moment before the count. */
  async function assertStat(name: string, expected: number): Promise<void> {
    const reached = await waitFor(name, async () => ((await proxy.stat(name)) === expected ? true : undefined), 2000).catch(() => false);
    if (!reached) assert.equal(await proxy.stat(name), expected, name);
  }

  const plain = (onReady: () => void): net.Socket => net.connect(plainPort, '127.0.0.1', onReady);
  const h2OverTls = (onReady: () => void): net.Socket =>
    tls.connect({ host: '127.0.0.1', port: tlsPort, ca: fs.readFileSync(ca.cert), servername: 'hostile.example', ALPNProtocols: ['h2'] }, onReady);
  const rawToTls = (onReady: () => void): net.Socket => net.connect(tlsPort, '127.0.0.1', onReady);

  before(async () => {
    dir = makeTempDir();
    ca = makeCa(dir, 'ca', 2);
    const cert = makeLeaf(dir, ca, 'server', 'DNS:hostile.example', 2);
    upstream = await startUpstream('web', (_req, res) => res.end('ok'));
    const routes = [{ match: { prefix: '/' }, route: { cluster: 'web' } }];
    const tlsListener = withDownstreamTls(httpListener('tls_in', 0, routes), cert, ['h2', 'http/1.1']);
    tlsListener.listener_filters = [{ name: 'envoy.filters.listener.tls_inspector', typed_config: { '@type': TLS_INSPECTOR } }];
    proxy = await startProxy({ static_resources: { listeners: [httpListener('plain_in', 0, routes), tlsListener], clusters: [localCluster('web', upstream.port)] } });
    plainPort = await proxy.listenerPort('plain_in');
    tlsPort = await proxy.listenerPort('tls_in');
  });

  after(async () => {
    await proxy?.cleanup();
    await upstream?.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  test('malformed and random HTTP/1: an error status, the connection closed, a protocol error counted', async () => {
    const wires = [
      Buffer.concat([randomBytes(1, 512), Buffer.from('\r\n\r\n')]),
      Buffer.concat([Buffer.from('GET / HTTP/1.1\r\nHost: h\r\nX: '), randomBytes(2, 64), Buffer.from('\r\n\r\n')]),
      Buffer.from(`GET /${'a'.repeat(70 * 1024)} HTTP/1.1\r\nHost: h\r\n\r\n`),
      Buffer.from('POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\nfffffffffffffffffff\r\n'),
      Buffer.from('GET / HTTP/1.1\r\nHost: h\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n'),
      // Not quite the HTTP/2 preface: read as HTTP/1, whose method table has no PRI.
      Buffer.from('PRI * HTTP/2.0\r\n\r\nXX\r\n\r\n'),
    ];
    for (const wire of wires) assert.match((await untilClosed(plain, wire)).toString('latin1'), /^HTTP\/1\.1 4\d\d /);
    await assertStat('http.ingress_http.downstream_cx_protocol_error', wires.length);
    assert.equal(await proxy.stat('server.worker_restarts'), 0);
  });

  test('broken HTTP/2, plaintext and over TLS: GOAWAY with an error, the connection closed, a protocol error counted', async () => {
    const before = (await proxy.stat('http.ingress_http.downstream_cx_protocol_error')) ?? 0;
    const cases: [(onReady: () => void) => net.Socket, Buffer][] = [
      [plain, Buffer.concat([PREFACE, NOT_A_FRAME])],
      [plain, Buffer.concat([PREFACE, HEADERS_ON_STREAM_0])],
      [h2OverTls, Buffer.concat([PREFACE, NOT_A_FRAME])],
    ];
    for (const [i, [open, wire]] of cases.entries()) {
      const reply = await untilClosed(open, wire);
      // The last frame the proxy sent is GOAWAY (type 7) with an error code.
      const goaway = reply.subarray(reply.length - 17);
      assert.equal(goaway[3], 7);
      assert.notEqual(goaway.readUInt32BE(13), 0);
      await assertStat('http.ingress_http.downstream_cx_protocol_error', before + i + 1);
    }
    assert.equal(await proxy.stat('server.worker_restarts'), 0);
  });

  test("a client's GOAWAY, then a new stream and a frame of a bad size in the same read: the connection closed, no restart", async () => {
    const wire = Buffer.concat([
      PREFACE,
      frame(TYPE.SETTINGS, 0, 0),
      frame(TYPE.GOAWAY, 0, 0, Buffer.alloc(8)),
      // HEADERS (GET, http, /, :authority fuzz) opening stream 1, then a PING of 9 bytes.
      frame(TYPE.HEADERS, FLAG.END_HEADERS, 1, Buffer.from([0x82, 0x86, 0x84, 0x41, 0x04, ...Buffer.from('fuzz')])),
      frame(TYPE.PING, 0, 0, Buffer.alloc(9)),
    ]);
    // nghttp2 1.61 aborted the worker on this (found by the http2_frames fuzzer).
    await untilClosed(plain, wire);
    const reply = await untilClosed(plain, Buffer.from('GET / HTTP/1.1\r\nHost: h\r\nConnection: close\r\n\r\n'));
    assert.match(reply.toString('latin1'), /^HTTP\/1\.1 200 /);
    assert.equal(await proxy.stat('server.worker_restarts'), 0);
  });

  test('a frame cut short by the client closing: the connection is counted closed once', async () => {
    const before = (await proxy.stat('http.ingress_http.downstream_cx_destroy')) ?? 0;
    // DATA on stream 1 whose header claims 100 bytes; 3 follow, then the client's FIN.
    const cut = Buffer.from([0, 0, 100, 0, 0, 0, 0, 0, 1, 0x82, 0x86, 0x84]);
    await untilClosed(plain, Buffer.concat([PREFACE, Buffer.from([0, 0, 0, 4, 0, 0, 0, 0, 0]), cut]), true);
    await waitFor('the close counted', async () => (((await proxy.stat('http.ingress_http.downstream_cx_destroy')) ?? 0) > before ? true : undefined), 2000);
    // node:http2 reported this close twice, a tick apart (found by the http2_frames fuzzer): time for a second count to land.
    await sleep(200);
    assert.equal(await proxy.stat('http.ingress_http.downstream_cx_destroy'), before + 1);
    assert.equal(await proxy.stat('http.ingress_http.downstream_cx_active'), 0);
    assert.equal(await proxy.stat('http.ingress_http.downstream_cx_http2_active'), 0);
  });

  test('garbage where a TLS handshake should be: the connection closed, ssl.connection_error counted', async () => {
    const stat = `listener.127.0.0.1_${tlsPort}.ssl.connection_error`;
    const before = (await proxy.stat(stat)) ?? 0;
    const wires = [
      randomBytes(3, 512),
      // A handshake record header around bytes that are no ClientHello.
      Buffer.concat([Buffer.from([0x16, 0x03, 0x01, 0x00, 0x40]), randomBytes(4, 64)]),
      Buffer.from('GET / HTTP/1.1\r\nHost: h\r\n\r\n'),
    ];
    for (const wire of wires) await untilClosed(rawToTls, wire);
    await assertStat(stat, before + wires.length);
    assert.equal(await proxy.stat('server.worker_restarts'), 0);
  });
});
