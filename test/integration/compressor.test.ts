// proxy.filters.http.compressor (gzip library) and the deprecated proxy.filters.http.gzip through
// the real binary, over HTTP/1.1 and h2c alike: bodies that gunzip to what the upstream sent,
// Vary and framing, what is left alone (small, other media types, identity, q=0, encoded,
// no-transform, HEAD), ETags, remove_accept_encoding_header, runtime_enabled, and the counters in
// /stats and /stats/prometheus.

import assert from 'node:assert/strict';
import * as http from 'node:http';
import * as http2 from 'node:http2';
import { after, before, describe, test } from 'node:test';
import * as zlib from 'node:zlib';
import { httpListener, localCluster } from '../helpers/config_fixtures';
import { startUpstream, type Upstream } from '../helpers/http_peers';
import { type RunningProxy, startProxy } from '../helpers/proxy_process';

const TIMEOUT = { timeout: 60_000 };
const TEXT = 'compress me, please; '.repeat(100);
const ROUTER = { name: 'envoy.filters.http.router' };
const GZIP_LIBRARY = { '@type': 'type.googleapis.com/envoy.extensions.compression.gzip.compressor.v3.Gzip' };

function compressor(settings: object, library: object = {}): object {
  return {
    name: 'envoy.filters.http.compressor',
    typed_config: {
      '@type': 'type.googleapis.com/envoy.extensions.filters.http.compressor.v3.Compressor',
      compressor_library: { name: 'lib', typed_config: { ...GZIP_LIBRARY, ...library } },
      ...settings,
    },
  };
}

/** What the upstream answers on each path: a media type, headers, and the body in pieces (several: chunked). */
const RESPONSES: Record<string, { type: string; headers?: Record<string, string>; pieces: string[] }> = {
  '/text': { type: 'text/html; charset=utf-8', pieces: [TEXT] },
  '/small': { type: 'text/plain', pieces: ['tiny'] },
  '/png': { type: 'image/png', pieces: [TEXT] },
  '/strong-etag': { type: 'application/json', headers: { etag: '"v1"' }, pieces: [TEXT] },
  '/weak-etag': { type: 'application/json', headers: { etag: 'W/"v1"' }, pieces: [TEXT] },
  '/json': { type: 'application/json', pieces: [TEXT] },
  '/chunked': { type: 'text/css', headers: { vary: 'Origin' }, pieces: [TEXT, TEXT, 'end'] },
  '/encoded': { type: 'text/html', headers: { 'content-encoding': 'br' }, pieces: [TEXT] },
  '/no-transform': { type: 'text/html', headers: { 'cache-control': 'public, No-Transform' }, pieces: [TEXT] },
};

interface RawReply {
  readonly status: number;
  readonly headers: http.IncomingHttpHeaders;
  readonly body: Buffer;
}

type Send = (listener: string, path: string, headers?: http.OutgoingHttpHeaders, method?: string) => Promise<RawReply>;

describe('the compressor and gzip filters on HTTP/1.1 and h2c', TIMEOUT, () => {
  let upstream: Upstream;
  let proxy: RunningProxy;
  const ports: Record<string, number> = {};
  const sessions = new Map<string, http2.ClientHttp2Session>();

  before(async () => {
    upstream = await startUpstream('web', (req, res) => {
      const path = (req.url ?? '').replace(/\?.*/, '');
      if (path === '/seen') {
        res.setHeader('content-type', 'text/plain');
        res.end(`accept-encoding=${req.headers['accept-encoding'] ?? 'none'}`);
        return;
      }
      const response = RESPONSES[path]!;
      res.setHeader('content-type', response.type);
      for (const [name, value] of Object.entries(response.headers ?? {})) res.setHeader(name, value);
      if (response.pieces.length === 1) {
        res.end(response.pieces[0]);
        return;
      }
      for (const piece of response.pieces) res.write(piece);
      res.end();
    });
    const routes = [{ match: { prefix: '/' }, route: { cluster: 'web' } }];
    const listener = (name: string, filters: object[]) => httpListener(name, 0, routes, { stat_prefix: name, http_filters: [...filters, ROUTER] });
    const config = {
      static_resources: {
        listeners: [
          listener('plain', [compressor({}, { compression_level: 'BEST_SPEED', window_bits: 15, memory_level: 9, chunk_size: 8192 })]),
          listener('strict', [compressor({ disable_on_etag_header: true, remove_accept_encoding_header: true, content_length: 2000, content_type: ['Application/JSON'] })]),
          listener('off', [compressor({ runtime_enabled: { runtime_key: 'compression.on', default_value: false } })]),
          listener('legacy', [{ name: 'envoy.gzip', typed_config: { '@type': 'type.googleapis.com/envoy.config.filter.http.gzip.v2.Gzip', compression_level: 'SPEED', compressor: { content_length: 50 } } }]),
        ],
        clusters: [localCluster('web', upstream.port)],
      },
    };
    proxy = await startProxy(config);
    for (const name of ['plain', 'strict', 'off', 'legacy']) ports[name] = await proxy.listenerPort(name);
  });

  after(async () => {
    for (const session of sessions.values()) session.destroy();
    await proxy?.cleanup();
    await upstream?.close();
  });

  const http1: Send = (listener, path, headers = {}, method = 'GET') =>
    new Promise((resolve, reject) => {
      const req = http.request({ host: '127.0.0.1', port: ports[listener], path, method, headers, agent: false }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body: Buffer.concat(chunks) }));
        res.on('error', reject);
      });
      req.on('error', reject);
      req.end();
    });

  const h2c: Send = (listener, path, headers = {}, method = 'GET') =>
    new Promise((resolve, reject) => {
      let session = sessions.get(listener);
      if (session === undefined) sessions.set(listener, (session = http2.connect(`http://127.0.0.1:${ports[listener]}`)));
      const stream = session.request({ ':method': method, ':path': path, ...headers });
      let head: http2.IncomingHttpHeaders = {};
      const chunks: Buffer[] = [];
      stream.on('response', (received) => (head = received));
      stream.on('data', (chunk: Buffer) => chunks.push(chunk));
      stream.on('end', () => {
        const { ':status': status, ...rest } = head;
        resolve({ status: Number(status), headers: rest as http.IncomingHttpHeaders, body: Buffer.concat(chunks) });
      });
      stream.on('error', reject);
      stream.end();
    });

  const gzipped = (reply: RawReply, original: string) => {
    assert.equal(reply.headers['content-encoding'], 'gzip');
    assert.equal(reply.headers['content-length'], undefined);
    assert.equal(zlib.gunzipSync(reply.body).toString(), original);
  };
  /** @param encoding the upstream's own Content-Encoding */
  const untouched = (reply: RawReply, original: string, encoding?: string) => {
    assert.equal(reply.headers['content-encoding'], encoding);
    assert.equal(reply.body.toString(), original);
  };

  for (const [protocol, send] of [['HTTP/1.1', http1], ['h2c', h2c]] as const) {
    test(`${protocol}: a response the client accepts gzip for is gzipped, with Vary, its length gone`, async () => {
      const reply = await send('plain', '/text', { 'accept-encoding': 'gzip, deflate' });
      gzipped(reply, TEXT);
      assert.equal(reply.headers.vary, 'Accept-Encoding');
      if (protocol === 'HTTP/1.1') assert.equal(reply.headers['transfer-encoding'], 'chunked');
      assert.ok(reply.body.length < TEXT.length / 10, `${reply.body.length} bytes`);
      // A body the upstream sent chunked, in pieces; Vary extended.
      const chunked = await send('plain', '/chunked', { 'accept-encoding': 'br;q=0.9, gzip;q=0.5' });
      gzipped(chunked, `${TEXT}${TEXT}end`);
      assert.equal(chunked.headers.vary, 'Origin, Accept-Encoding');
      gzipped(await send('plain', '/text', { 'accept-encoding': '*' }), TEXT);
    });

    test(`${protocol}: what the client, the size, the media type or the response rule out is left alone`, async () => {
      for (const [path, accept] of [
        ['/text', undefined],
        ['/text', 'identity'],
        ['/text', 'gzip;q=0, *'],
        ['/text', 'br'],
        ['/small', 'gzip'],
        ['/png', 'gzip'],
        ['/encoded', 'gzip'],
        ['/no-transform', 'gzip'],
      ] as const) {
        const reply = await send('plain', path, accept === undefined ? {} : { 'accept-encoding': accept });
        untouched(reply, RESPONSES[path]!.pieces.join(''), RESPONSES[path]!.headers?.['content-encoding']);
        assert.equal(reply.headers.vary, undefined, `${path} ${accept}`);
      }
      const head = await send('plain', '/text', { 'accept-encoding': 'gzip' }, 'HEAD');
      assert.equal(head.headers['content-encoding'], undefined);
      assert.equal(head.headers.vary, undefined);
    });

    test(`${protocol}: a strong ETag is dropped from a gzipped response, a weak one kept`, async () => {
      const strong = await send('plain', '/strong-etag', { 'accept-encoding': 'gzip' });
      gzipped(strong, TEXT);
      assert.equal(strong.headers.etag, undefined);
      const weak = await send('plain', '/weak-etag', { 'accept-encoding': 'gzip' });
      gzipped(weak, TEXT);
      assert.equal(weak.headers.etag, 'W/"v1"');
    });

    test(`${protocol}: disable_on_etag_header, content_length, content_type and remove_accept_encoding_header`, async () => {
      gzipped(await send('strict', '/json', { 'accept-encoding': 'gzip' }), TEXT);
      untouched(await send('strict', '/weak-etag', { 'accept-encoding': 'gzip' }), TEXT);
      // text/html is not the one type listed; 4 bytes are fewer than the 2000 asked for.
      untouched(await send('strict', '/text', { 'accept-encoding': 'gzip' }), TEXT);
      untouched(await send('strict', '/small', { 'accept-encoding': 'gzip' }), 'tiny');
      assert.equal((await send('strict', '/seen', { 'accept-encoding': 'gzip' })).body.toString(), 'accept-encoding=none');
      assert.equal((await send('plain', '/seen', { 'accept-encoding': 'gzip' })).body.toString(), 'accept-encoding=gzip');
    });

    test(`${protocol}: runtime_enabled off leaves every response alone until the runtime says on`, async () => {
      untouched(await send('off', '/text', { 'accept-encoding': 'gzip' }), TEXT);
    });

    test(`${protocol}: the deprecated gzip filter compresses with its compressor's settings`, async () => {
      gzipped(await send('legacy', '/text', { 'accept-encoding': 'gzip' }), TEXT);
      // Its content_length of 50 is more than 4 bytes.
      untouched(await send('legacy', '/small', { 'accept-encoding': 'gzip' }), 'tiny');
    });
  }

  test('runtime_enabled follows the runtime', async () => {
    assert.equal((await proxy.admin('/runtime_modify?compression.on=true', 'POST')).status, 200);
    gzipped(await http1('off', '/text', { 'accept-encoding': 'gzip' }), TEXT);
    gzipped(await h2c('off', '/text', { 'accept-encoding': 'gzip' }), TEXT);
  });

  test('the counters, in /stats and in /stats/prometheus', async () => {
    const stat = async (name: string) => (await proxy.stat(name)) ?? 0;
    // Per protocol on `plain`: 5 gzipped (3 in the first test, 2 with ETags), 10 not (9 in the
    // second test, /seen of 20 bytes).
    const plain = 'http.plain.compressor.lib.gzip';
    assert.equal(await stat(`${plain}.compressed`), 2 * 5);
    assert.equal(await stat(`${plain}.not_compressed`), 2 * 10);
    assert.equal(await stat(`${plain}.no_accept_header`), 2 * 1);
    assert.equal(await stat(`${plain}.header_identity`), 2 * 1);
    assert.equal(await stat(`${plain}.header_wildcard`), 2 * 1);
    // gzip;q=0 with *, br alone, and gzip for image/png, which no compressor takes.
    assert.equal(await stat(`${plain}.header_not_valid`), 2 * 3);
    assert.equal(await stat(`${plain}.content_length_too_small`), 2 * 2);
    // Both name gzip chosen by name: /text, /chunked, /encoded, /no-transform and the two ETags.
    assert.equal(await stat(`${plain}.header_compressor_used`), 2 * 6);
    assert.equal(await stat(`${plain}.header_gzip`), 2 * 6);
    assert.equal(await stat(`${plain}.total_uncompressed_bytes`), 2 * (4 * TEXT.length + 2 * TEXT.length + 3));
    const compressedBytes = await stat(`${plain}.total_compressed_bytes`);
    assert.ok(compressedBytes > 0 && compressedBytes < TEXT.length, String(compressedBytes));
    assert.equal(await stat('http.strict.compressor.lib.gzip.not_compressed_etag'), 2 * 1);
    assert.equal(await stat('http.strict.compressor.lib.gzip.content_length_too_small'), 2 * 2);
    assert.equal(await stat('http.strict.compressor.lib.gzip.compressed'), 2 * 1);
    assert.equal(await stat('http.off.compressor.lib.gzip.compressed'), 2);
    assert.equal(await stat('http.legacy.gzip.compressed'), 2);
    assert.equal(await stat('http.legacy.gzip.header_gzip'), 2);
    const prometheus = (await proxy.admin('/stats/prometheus')).body;
    assert.match(prometheus, /^proxy_http_compressor_lib_gzip_compressed\{proxy_http_conn_manager_prefix="plain"\} 10$/m);
    assert.match(prometheus, /^proxy_http_gzip_compressed\{proxy_http_conn_manager_prefix="legacy"\} 2$/m);
  });
});
